import argparse
import torch.distributed.launch  # expect: DST007

parser = argparse.ArgumentParser()
parser.add_argument("--local_rank", type=int, default=0)  # expect: DST007
cmd = "python -m torch.distributed.launch --nproc_per_node=8 train.py"  # expect: DST007
