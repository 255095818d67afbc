import argparse

import deepspeed

parser = argparse.ArgumentParser()
parser.add_argument("--backend", default="hccl")  # expect: EXT008
args = parser.parse_args()

deepspeed.init_distributed(dist_backend="hccl")  # expect: EXT008
deepspeed.init_distributed(args.backend)
