import torch

x = x.type(torch.cuda.FloatTensor)  # expect: DEV016
ok = isinstance(y, torch.cuda.LongTensor)  # expect: DEV016
h = torch.cuda.HalfTensor(2, 3)  # expect: DEV016
d = z.type(torch.cuda.DoubleTensor)  # expect: DEV016
