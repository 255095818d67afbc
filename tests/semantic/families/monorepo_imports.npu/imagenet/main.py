"""One of several examples under one folder: its `import utils` is its own utils.py (sys.path[0])."""
import utils


def main(args):
    utils.init_distributed_mode(args)  # expect: DEV026
    utils.log("start")
