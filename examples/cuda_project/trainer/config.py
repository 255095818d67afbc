"""Command-line options for train.py."""

import argparse
import os


def build_parser():
    p = argparse.ArgumentParser(
        description="Train a small image classifier on synthetic data.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    # model / data
    p.add_argument("--model", choices=["resnet", "vit"], default="resnet")
    p.add_argument("--image-size", type=int, default=32)
    p.add_argument("--num-classes", type=int, default=10)
    p.add_argument("--train-size", type=int, default=2048, help="number of synthetic training images")
    p.add_argument("--val-size", type=int, default=256, help="number of synthetic validation images")
    p.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")

    # optimisation
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=64, help="per-GPU batch size")
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--momentum", type=float, default=0.9)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--clip-grad", type=float, default=1.0, help="max gradient norm (0 disables clipping)")
    p.add_argument("--amp", action="store_true", help="mixed precision (fp16/bf16 autocast + GradScaler)")
    p.add_argument("--fused-sgd", action="store_true", help="use apex FusedSGD when apex is installed")
    p.add_argument("--compile", action="store_true", help="torch.compile the model")

    # hardware
    p.add_argument("--device", default="cuda", help="cuda, cuda:N or cpu")
    p.add_argument("--gpus", default=None, help="comma-separated GPU ids to use, e.g. 0,1 (sets CUDA_VISIBLE_DEVICES)")
    p.add_argument("--dist-backend", default="nccl", help="torch.distributed backend")
    p.add_argument("--dist-url", default="env://")
    p.add_argument("--local_rank", "--local-rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))

    # bookkeeping
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output-dir", default="runs/exp")
    p.add_argument("--resume", default="", help="checkpoint to resume from")
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--export-onnx", default="", metavar="PATH", help="export the trained model to ONNX at PATH")
    return p


def parse_args(argv=None):
    args = build_parser().parse_args(argv)
    if args.steps < 1:
        raise SystemExit("--steps must be at least 1")
    return args
