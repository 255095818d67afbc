import torch

x = torch.ones(2)
a = x.to("cuda")  # expect: DEV002
b = x.to('cuda:1', non_blocking=True)  # expect: DEV002
c = x.to(device=f"cuda:{rank}")  # expect: DEV002
model = torch.nn.Linear(2, 2).to_empty(device="cuda")  # expect: DEV002
d = x.to("cuda", torch.float16)  # expect: DEV002
e = x.to("cuda:{}".format(args.gpu))  # expect: DEV002
