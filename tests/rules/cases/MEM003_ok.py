import torch
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __getitem__(self, i):
        return self.data[i].cuda()


class CpuFrames(Dataset):
    def __getitem__(self, i):
        return torch.ones(3)


loader = DataLoader(Frames(), batch_size=8, num_workers=0)
loader = DataLoader(Frames(), batch_size=8)
loader = DataLoader(CpuFrames(), batch_size=8, num_workers=4)
