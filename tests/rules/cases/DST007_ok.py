import argparse
import os

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
cmd = "torchrun --nproc_per_node=8 train.py"
note = "torch.distributed.launch is deprecated"
