import torch

if x.is_npu:
    pass
x.is_cuda = True  # an assignment to an attribute of some object
flag = x.is_cpu


class Prefetcher:
    def __init__(self, device):
        self.is_cuda = device.type == "cuda"

    def run(self):
        if self.is_cuda:  # the class's own flag, not Tensor.is_cuda
            return 1
        return 0
