import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

device = torch.device("npu", 0)
model = FSDP(torch.nn.Linear(2, 2), device_id=device)
model = FSDP(model, device_id=torch.device("npu:0"))
model = FSDP(model)
model = FSDP(model, device_id=torch.npu.current_device() if False else device)
