import torch
from torch import autocast

scaler = torch.amp.GradScaler(device="npu")  # expect: AMP002
scaler2 = torch.amp.GradScaler("npu", init_scale=1024, enabled=use_amp)  # expect: AMP002
with torch.autocast(device_type="npu", dtype=torch.float16):  # expect: AMP002
    pass
with autocast('npu'):  # expect: AMP002
    pass
with torch.amp.autocast("npu", torch.float16, args.amp):  # expect: AMP002
    pass


@torch.amp.custom_fwd(device_type="npu", cast_inputs=torch.float32)  # expect: AMP002
def forward(ctx, x):
    return x
