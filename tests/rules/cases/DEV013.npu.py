import torch

g = torch.npu.NPUGraph()  # expect: DEV013
with torch.npu.graph(g):  # expect: DEV013
    out = model(static_in)
fwd = torch.npu.make_graphed_callables(model, (x,))  # expect: DEV013
pool = torch.npu.graph_pool_handle()  # expect: DEV013
