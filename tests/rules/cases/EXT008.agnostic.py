import argparse

import deepspeed

parser = argparse.ArgumentParser()
parser.add_argument("--backend", default="nccl")  # expect: EXT008
args = parser.parse_args()

deepspeed.init_distributed()  # expect: EXT008
deepspeed.init_distributed(args.backend)
