import torch
import torch.nn as nn

freqs = torch.arange(0, 64, 2, dtype=torch.float64)  # expect: DTY002
eye = torch.eye(3, dtype=torch.double, device="npu")  # expect: DTY002


class Pos(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("t", torch.zeros(
            16,
            dtype=torch.float64,  # expect: DTY002
        ))
