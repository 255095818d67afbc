"""A script that puts the project root on sys.path, and a src/ layout package."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import common.dist as cd
from common import launch
from mylib import engine
import mylib.metrics


def main(args):
    cd.setup(args.rank)  # expect: DEV026
    launch.start(args.rank)  # expect: DEV026
    engine.step()  # expect: DEV026
    mylib.metrics.reduce()  # expect: DEV026
