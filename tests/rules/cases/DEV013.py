import torch

g = torch.cuda.CUDAGraph()  # expect: DEV013
with torch.cuda.graph(g):  # expect: DEV013
    out = model(static_in)
fwd = torch.cuda.make_graphed_callables(model, (x,))  # expect: DEV013
pool = torch.cuda.graph_pool_handle()  # expect: DEV013
