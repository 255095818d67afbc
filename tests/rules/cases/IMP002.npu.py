import argparse

import torch
import torch_npu
import torch.distributed as dist


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=0.1)
    args = parser.parse_args()
    torch.npu.set_device(0)  # expect: IMP002
    model = torch.nn.Linear(4, 4).npu()
    x = torch.randn(2, 4, device="npu:0")
    dist.init_process_group("hccl")
    return model(x), args


if __name__ == "__main__":
    main()
