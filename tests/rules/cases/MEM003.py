import torch
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __init__(self, data):
        self.data = data

    def __getitem__(self, i):
        return self.data[i].to("cuda")


class Clips(Dataset):
    def __getitem__(self, i):
        return torch.ones(3, device="npu")


loader = DataLoader(Frames([]), batch_size=8, num_workers=4)  # expect: MEM003
ds = Clips()
loader2 = DataLoader(ds, num_workers=workers)  # expect: MEM003
