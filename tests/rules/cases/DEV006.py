import argparse
import os

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--gpu", type=int, default=0)
args = parser.parse_args()
local_rank = int(os.environ["LOCAL_RANK"])

model = torch.nn.Linear(2, 2).to(local_rank)  # expect: DEV006
x = torch.ones(2).to(0)  # expect: DEV006
y = torch.zeros(8, device=args.gpu)  # expect: DEV006
dev = torch.device(local_rank)  # expect: DEV006


def setup(rank):
    return torch.ones(2).to(rank)  # expect: DEV006


z = torch.ones(2).to(torch.cuda.current_device())  # expect: DEV006
w = torch.empty(3, device=self.device_id)  # expect: DEV006
