import torch

x = torch.ones(2)
a = x.to("npu")  # expect: DEV002
b = x.to('npu:1', non_blocking=True)  # expect: DEV002
c = x.to(device=f"npu:{rank}")  # expect: DEV002
model = torch.nn.Linear(2, 2).to_empty(device="npu")  # expect: DEV002
d = x.to("npu", torch.float16)  # expect: DEV002
e = x.to("npu:{}".format(args.gpu))  # expect: DEV002
