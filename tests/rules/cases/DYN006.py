import torch

model = torch.nn.Linear(4, 2).eval()
dummy = torch.randn(1, 4)
torch.onnx.export(model, dummy, "model.onnx", opset_version=11)  # expect: DYN006
torch.onnx.export(  # expect: DYN006
    model,
    (dummy,),
    "model2.onnx",
    input_names=["input"],
)
