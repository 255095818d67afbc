import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--mixed-precision", default="bf16")  # expect: DTY005
args = parser.parse_args()

model = torch.nn.Linear(8, 8).bfloat16()  # expect: DTY005
with torch.autocast("npu", dtype=torch.bfloat16):  # expect: DTY005
    y = model(torch.randn(2, 8))
pipe_kwargs = dict(torch_dtype="bfloat16")  # expect: DTY005
