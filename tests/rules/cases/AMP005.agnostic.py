import torch

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


def forward(x):
    if torch.is_autocast_enabled(DEVICE_TYPE):  # expect: AMP005
        x = x.to(torch.get_autocast_dtype(DEVICE_TYPE))  # expect: AMP005
    torch.set_autocast_dtype(DEVICE_TYPE, torch.float16)  # expect: AMP005
    torch.set_autocast_enabled(DEVICE_TYPE, False)  # expect: AMP005
    return x
