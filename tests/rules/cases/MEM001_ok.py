from torch.utils.data import DataLoader

loader = DataLoader(ds, batch_size=64, pin_memory=True)
loader = DataLoader(ds, pin_memory=True, pin_memory_device="npu")
loader = DataLoader(ds)
