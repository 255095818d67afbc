import torch
from torch import autocast

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

scaler = torch.amp.GradScaler(device=DEVICE_TYPE, enabled=DEVICE_TYPE != "cpu")  # expect: AMP002
scaler2 = torch.amp.GradScaler(DEVICE_TYPE, init_scale=1024, enabled=use_amp and DEVICE_TYPE != "cpu")  # expect: AMP002
with torch.autocast(device_type=DEVICE_TYPE, dtype=torch.float16, enabled=DEVICE_TYPE != "cpu"):  # expect: AMP002
    pass
with autocast(DEVICE_TYPE, enabled=DEVICE_TYPE != "cpu"):  # expect: AMP002
    pass
with torch.amp.autocast(DEVICE_TYPE, torch.float16, args.amp and DEVICE_TYPE != "cpu"):  # expect: AMP002
    pass


@torch.amp.custom_fwd(device_type=DEVICE_TYPE, cast_inputs=torch.float32)  # expect: AMP002
def forward(ctx, x):
    return x
