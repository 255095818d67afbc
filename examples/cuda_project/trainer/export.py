"""Export a trained classifier to ONNX for deployment.

    python -m trainer.export runs/exp/last.pt model.onnx
"""

import argparse

import torch

from .checkpoint import load_checkpoint
from .models import build_model
from .utils import default_device


def export_onnx(model, path, image_size, device, opset=17):
    """Write ``model`` as an ONNX graph taking a (1, 3, image_size, image_size) float32 batch."""
    model.eval()
    dummy = torch.randn(1, 3, image_size, image_size, device=device)
    torch.onnx.export(
        model,
        (dummy,),
        path,
        opset_version=opset,
        input_names=["images"],
        output_names=["logits"],
        do_constant_folding=True,
        dynamo=False,
    )
    return path


def check_onnx(path, image_size):
    """Run the exported model once with onnxruntime, on the GPU provider when there is a GPU."""
    import numpy as np
    import onnxruntime as ort

    cuda = torch.cuda.is_available()
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]
    session = ort.InferenceSession(path, providers=providers)
    x = np.zeros((1, 3, image_size, image_size), dtype=np.float32)
    return session.run(None, {session.get_inputs()[0].name: x})[0].shape


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoint")
    p.add_argument("output")
    p.add_argument("--opset", type=int, default=17)
    args = p.parse_args(argv)

    device = default_device()
    ckpt_args = torch.load(args.checkpoint)["args"]
    model = build_model(ckpt_args["model"], ckpt_args["num_classes"], ckpt_args["image_size"])
    load_checkpoint(args.checkpoint, model)
    if device.type == "cuda":
        model = model.cuda()
    export_onnx(model, args.output, ckpt_args["image_size"], device, args.opset)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
