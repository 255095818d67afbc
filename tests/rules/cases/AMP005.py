import torch


def forward(x):
    if torch.is_autocast_enabled():  # expect: AMP005
        x = x.to(torch.get_autocast_gpu_dtype())  # expect: AMP005
    torch.set_autocast_gpu_dtype(torch.float16)  # expect: AMP005
    torch.set_autocast_enabled(False)  # expect: AMP005
    return x
