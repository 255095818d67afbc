import torch

x = x.type(torch.npu.FloatTensor)  # expect: DEV016
ok = isinstance(y, torch.npu.LongTensor)  # expect: DEV016
h = torch.npu.HalfTensor(2, 3)  # expect: DEV016
d = z.type(torch.cuda.DoubleTensor)  # expect: DEV016
