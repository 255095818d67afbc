import os

import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

local_rank = int(os.environ["LOCAL_RANK"])
model = FSDP(torch.nn.Linear(2, 2), device_id=torch.device(DEVICE_TYPE, local_rank))  # expect: DST009
model = FSDP(model, device_id=torch.device(DEVICE_TYPE, torch.cuda.current_device()))  # expect: DST009
model = FSDP(model, use_orig_params=True, device_id=torch.device(DEVICE_TYPE, 0))  # expect: DST009
model = FSDP(model, device_id=torch.device(DEVICE_TYPE, args.gpu))  # expect: DST009
