import argparse

import torch

DEVICE = "npu"  # expect: DEV024
parser = argparse.ArgumentParser()
parser.add_argument("--device", default="npu:0")  # expect: DEV024
args = parser.parse_args()


def run(model, device="npu"):  # expect: DEV024
    return model.to(device)


x = torch.ones(2).to(DEVICE)
y = torch.ones(2).to(args.device)
dev = "npu" if use_gpu else "cpu"  # expect: DEV024
rank_dev = f"npu:{local_rank}"  # expect: DEV024
table = {"accel": "npu"}  # expect: DEV024
legacy = "npu:%d" % local_rank  # expect: DEV024
joined = "npu:" + str(gpu)  # expect: DEV024
trainer = Trainer(accelerator="npu", devices=1)  # expect: DEV024
device_type = "cuda" if "cuda" in device else "cpu"  # expect: DEV024, DEV023
