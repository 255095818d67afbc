import torch

g = torch.npu.NPUGraph()
graph = build_graph()
fx = torch.fx.symbolic_trace(model).graph
