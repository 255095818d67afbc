import torch
import torch.nn as nn
from torch.amp import autocast as ac, GradScaler  # expect: AMP001
from torch import amp  # expect: AMP001

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler(DEVICE_TYPE, init_scale=1024, enabled=DEVICE_TYPE != "cpu")  # expect: AMP001
scaler2 = GradScaler(DEVICE_TYPE, enabled=use_amp and DEVICE_TYPE != "cpu")


class Double(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(cast_inputs=torch.float32, device_type=DEVICE_TYPE)  # expect: AMP001
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @torch.amp.custom_bwd(device_type=DEVICE_TYPE)  # expect: AMP001
    def backward(ctx, g):
        return g * 2


def step(x, y):
    with torch.amp.autocast(DEVICE_TYPE, enabled=DEVICE_TYPE != "cpu"):  # expect: AMP001
        loss = nn.functional.mse_loss(model(x), y)
    with ac(DEVICE_TYPE, enabled=False):
        loss2 = loss * 1
    with torch.amp.autocast(DEVICE_TYPE, dtype=torch.bfloat16, enabled=(args.amp or args.bf16) and DEVICE_TYPE != "cpu"):  # expect: AMP001
        pass
    scaler.scale(loss + loss2).backward()
    return isinstance(scaler, torch.amp.GradScaler)  # expect: AMP001


def eval_step(x, use_amp):
    scaler3 = amp.GradScaler(DEVICE_TYPE, enabled=use_amp and DEVICE_TYPE != "cpu")
    with amp.autocast(DEVICE_TYPE, enabled=use_amp and DEVICE_TYPE != "cpu"):
        return model(x), scaler3
