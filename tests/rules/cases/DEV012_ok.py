import torch

s = torch.npu.Stream()
e = torch.Event()
with torch.npu.stream(s):
    pass
stream = open("x")


class Prefetch:
    def streams(self):
        if self.is_cuda:
            return torch.cuda.Stream()
        elif self.is_npu:
            return torch.npu.Stream()
        return None
