import os

import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

local_rank = int(os.environ["LOCAL_RANK"])
model = FSDP(torch.nn.Linear(2, 2), device_id=torch.device("npu", local_rank))  # expect: DST009
model = FSDP(model, device_id=torch.device("npu", torch.cuda.current_device()))  # expect: DST009
model = FSDP(model, use_orig_params=True, device_id=torch.device("npu", 0))  # expect: DST009
model = FSDP(model, device_id=torch.device("npu", args.gpu))  # expect: DST009
