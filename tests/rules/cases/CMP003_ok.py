import torch

model = torch.nn.Linear(4, 4)
loaded_ok = torch.jit.is_scripting()
ignored = torch.jit.ignore
torch.onnx.export(model, torch.randn(1, 4), "m.onnx", opset_version=11)
