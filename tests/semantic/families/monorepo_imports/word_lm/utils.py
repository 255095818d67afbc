def init_distributed_mode(args):
    args.distributed = False
