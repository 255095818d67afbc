import argparse
import os

import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=0)
args = parser.parse_args()
local_rank = int(os.environ["LOCAL_RANK"])

model = torch.nn.Linear(2, 2).to(f"{DEVICE_TYPE}:{local_rank}")  # expect: DEV006
x = torch.ones(2).to(f"{DEVICE_TYPE}:0")  # expect: DEV006
y = torch.zeros(8, device=f"{DEVICE_TYPE}:{args.gpu}")  # expect: DEV006
dev = torch.device(DEVICE_TYPE, local_rank)  # expect: DEV006


def setup(rank):
    return torch.ones(2).to(f"{DEVICE_TYPE}:{rank}")  # expect: DEV006


z = torch.ones(2).to(f"{DEVICE_TYPE}:{torch.cuda.current_device()}")  # expect: DEV006
w = torch.empty(3, device=f"{DEVICE_TYPE}:{self.device_id}")  # expect: DEV006
