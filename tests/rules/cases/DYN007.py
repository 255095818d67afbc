import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--opset", type=int, default=18)  # expect: DYN007
args = parser.parse_args()
model = torch.nn.Linear(4, 2).eval()
dummy = torch.randn(1, 4)
torch.onnx.export(model, dummy, "a.onnx", opset_version=19, dynamic_axes={"input": {0: "b"}})  # expect: DYN007
torch.onnx.export(model, dummy, "b.onnx", opset_version=args.opset)
torch.onnx.export(model, dummy, "c.onnx")  # expect: DYN007
