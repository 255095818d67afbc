import argparse
from torch.utils.data import DataLoader, DistributedSampler

parser = argparse.ArgumentParser()
parser.add_argument("--workers", type=int, default=0)
args = parser.parse_args()

train_loader = DataLoader(train_set, batch_size=64, shuffle=True)  # expect: MEM002
loader = DataLoader(ds, batch_size=64, sampler=DistributedSampler(ds), num_workers=0)  # expect: MEM002
loader2 = DataLoader(train_ds, batch_size=64, num_workers=args.workers)  # expect: MEM002
