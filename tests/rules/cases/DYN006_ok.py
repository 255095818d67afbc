import torch

model = torch.nn.Linear(4, 2).eval()
dummy = torch.randn(1, 4)
torch.onnx.export(model, dummy, "model.onnx", input_names=["input"], dynamic_axes={"input": {0: "batch"}})
torch.onnx.export(model, (dummy,), "model2.onnx", dynamo=True, dynamic_shapes={"input": {0: "batch"}})
opts = {"opset_version": 11}
torch.onnx.export(model, dummy, "model3.onnx", **opts)
