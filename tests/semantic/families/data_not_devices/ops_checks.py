"""Device names as data: enum members, test parameters, skip conditions, messages."""
import unittest
from enum import Enum

import pytest
import torch


class DeviceType(str, Enum):
    CPU = "cpu"
    CUDA = "cuda"
    NPU = "npu"


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_add(device):
    assert torch.ones(1).device.type == "cpu", "expected a cpu tensor, not cuda"


class DeformTest(unittest.TestCase):
    @unittest.skipIf(not torch.cuda.is_available(), "Deformable not supported for cpu")  # expect: DEV007
    def test_deform(self):
        x = torch.ones(2, device="cuda")  # expect: DEV004
        self.assertEqual(x.device.type, "cuda")


def check(x):
    if x.numel() == 0:
        raise ValueError("cuda tensor expected")
    return x
