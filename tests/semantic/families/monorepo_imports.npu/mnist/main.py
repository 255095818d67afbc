"""No utils.py here and none above: `utils` is a library, not a sibling example's file."""
import utils


def main(args):
    utils.init_distributed_mode(args)
