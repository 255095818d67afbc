import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=0)
args = parser.parse_args()
local_rank = int(os.environ["LOCAL_RANK"])

model = torch.nn.Linear(2, 2).to(f"npu:{local_rank}")  # expect: DEV006
x = torch.ones(2).to("npu:0")  # expect: DEV006
y = torch.zeros(8, device=f"npu:{args.gpu}")  # expect: DEV006
dev = torch.device("npu", local_rank)  # expect: DEV006


def setup(rank):
    return torch.ones(2).to(f"npu:{rank}")  # expect: DEV006


z = torch.ones(2).to(f"npu:{torch.cuda.current_device()}")  # expect: DEV006
w = torch.empty(3, device=f"npu:{self.device_id}")  # expect: DEV006
