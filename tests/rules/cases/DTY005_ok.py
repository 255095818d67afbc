import torch

dtype = torch.bfloat16 if torch.npu.is_bf16_supported() else torch.float16
if torch.cuda.is_bf16_supported():
    amp_dtype = torch.bfloat16
else:
    amp_dtype = torch.float16


def is_half(t):
    return t.dtype in (torch.float16, torch.bfloat16)


x = torch.randn(2).half()
kwargs = dict(torch_dtype="float16", mixed_precision="fp16")
