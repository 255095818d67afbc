#!/usr/bin/env python
"""Train a small image classifier on synthetic data.

One GPU:          python train.py --model resnet --steps 300
Several GPUs:     torchrun --nproc_per_node=4 train.py --model vit --amp
"""

import sys

from trainer.config import parse_args
from trainer.engine import main

if __name__ == "__main__":
    sys.exit(main(parse_args()))
