import torch
import torch.nn as nn
from torch.cuda.amp import autocast as ac, GradScaler  # expect: AMP001
from torch.cuda import amp  # expect: AMP001

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.cuda.amp.GradScaler(init_scale=1024)  # expect: AMP001
scaler2 = GradScaler(enabled=use_amp)


class Double(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)  # expect: AMP001
    def forward(ctx, x):
        return x * 2

    @staticmethod
    @torch.cuda.amp.custom_bwd  # expect: AMP001
    def backward(ctx, g):
        return g * 2


def step(x, y):
    with torch.cuda.amp.autocast():  # expect: AMP001
        loss = nn.functional.mse_loss(model(x), y)
    with ac(False):
        loss2 = loss * 1
    with torch.cuda.amp.autocast(dtype=torch.bfloat16, enabled=args.amp or args.bf16):  # expect: AMP001
        pass
    scaler.scale(loss + loss2).backward()
    return isinstance(scaler, torch.cuda.amp.GradScaler)  # expect: AMP001


def eval_step(x, use_amp):
    scaler3 = amp.GradScaler(enabled=use_amp)
    with amp.autocast(enabled=use_amp):
        return model(x), scaler3
