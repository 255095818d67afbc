import argparse

import torch

DEVICE = "cuda"  # expect: DEV024
parser = argparse.ArgumentParser()
parser.add_argument("--device", default="cuda:0")  # expect: DEV024
args = parser.parse_args()


def run(model, device="cuda"):  # expect: DEV024
    return model.to(device)


x = torch.ones(2).to(DEVICE)
y = torch.ones(2).to(args.device)
dev = "cuda" if use_gpu else "cpu"  # expect: DEV024
rank_dev = f"cuda:{local_rank}"  # expect: DEV024
table = {"accel": "cuda"}  # expect: DEV024
legacy = "cuda:%d" % local_rank  # expect: DEV024
joined = "cuda:" + str(gpu)  # expect: DEV024
trainer = Trainer(accelerator="cuda", devices=1)  # expect: DEV024
device_type = "cuda" if "cuda" in device else "cpu"  # expect: DEV024, DEV023
