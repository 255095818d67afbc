import argparse

import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

DEVICE = DEVICE_TYPE  # expect: DEV024
parser = argparse.ArgumentParser()
parser.add_argument("--device", default=f"{DEVICE_TYPE}:0")  # expect: DEV024
args = parser.parse_args()


def run(model, device=DEVICE_TYPE):  # expect: DEV024
    return model.to(device)


x = torch.ones(2).to(DEVICE)
y = torch.ones(2).to(args.device)
dev = DEVICE_TYPE if use_gpu else "cpu"  # expect: DEV024
rank_dev = f"{DEVICE_TYPE}:{local_rank}"  # expect: DEV024
table = {"accel": DEVICE_TYPE}  # expect: DEV024
legacy = f"{DEVICE_TYPE}:{local_rank}"  # expect: DEV024
joined = f"{DEVICE_TYPE}:{gpu}"  # expect: DEV024
trainer = Trainer(accelerator=DEVICE_TYPE, devices=1)  # expect: DEV024
device_type = "cuda" if "cuda" in device else "cpu"  # expect: DEV024, DEV023
