"""Code that exists for a CUDA-only library is reported with the Ascend alternative, never rewritten."""
import torch


def build(args, model):
    if args.trt:
        import tensorrt as trt  # expect: EXT016
        device = torch.device("cuda:0")  # expect: DEV003
        builder = trt.Builder(trt.Logger())
        return builder, device
    return model


def attention(q, k, v):
    if q.device.type != "cuda":  # expect: DEV023
        raise ValueError("xformers memory-efficient attention needs a CUDA device")
    import xformers.ops  # expect: EXT004
    return xformers.ops.memory_efficient_attention(q, k, v)


def session(path):
    import onnxruntime as ort

    cuda = torch.cuda.is_available()  # expect: DEV007
    providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"]  # expect: EXT014
    return ort.InferenceSession(path, providers=providers)
