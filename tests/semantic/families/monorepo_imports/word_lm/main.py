"""Another example with its own utils.py that does no CUDA work: nothing here, whatever imagenet's does."""
import utils
from utils import init_distributed_mode


def main(args):
    utils.init_distributed_mode(args)
    init_distributed_mode(args)
