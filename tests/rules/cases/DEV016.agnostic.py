import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

x = x.to(DEVICE_TYPE, torch.float32)  # expect: DEV016
ok = isinstance(y, torch.cuda.LongTensor)  # expect: DEV016
h = torch.cuda.HalfTensor(2, 3)  # expect: DEV016
d = z.to(DEVICE_TYPE, torch.float64)  # expect: DEV016
