import torch

OPSET = 13
model = torch.nn.Linear(4, 2).eval()
dummy = torch.randn(1, 4)
torch.onnx.export(model, dummy, "a.onnx", opset_version=11)
torch.onnx.export(model, dummy, "b.onnx", opset_version=OPSET)
torch.onnx.export(model, dummy, "c.onnx", opset_version=17)
torch.export.export(model, (dummy,))  # not ONNX
