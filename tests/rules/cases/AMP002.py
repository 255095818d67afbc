import torch
from torch import autocast

scaler = torch.amp.GradScaler()  # expect: AMP002
scaler2 = torch.amp.GradScaler("cuda", init_scale=1024, enabled=use_amp)  # expect: AMP002
with torch.autocast(device_type="cuda", dtype=torch.float16):  # expect: AMP002
    pass
with autocast('cuda'):  # expect: AMP002
    pass
with torch.amp.autocast("cuda", torch.float16, args.amp):  # expect: AMP002
    pass


@torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)  # expect: AMP002
def forward(ctx, x):
    return x
