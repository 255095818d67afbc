import torch
from torch.utils.data import DataLoader

loader = DataLoader(ds, batch_size=64, pin_memory=True, pin_memory_device="npu")  # expect: MEM001
val_loader = torch.utils.data.DataLoader(
    val_ds,
    batch_size=64,
    pin_memory=True,
    pin_memory_device="npu",  # expect: MEM001
)
