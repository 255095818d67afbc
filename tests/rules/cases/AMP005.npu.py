import torch


def forward(x):
    if torch.is_autocast_enabled("npu"):  # expect: AMP005
        x = x.to(torch.get_autocast_dtype("npu"))  # expect: AMP005
    torch.set_autocast_dtype("npu", torch.float16)  # expect: AMP005
    torch.set_autocast_enabled("npu", False)  # expect: AMP005
    return x
