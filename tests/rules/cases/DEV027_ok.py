import torch


def direct(device):
    if device.type != "cpu":  # a direct test: the CUDA call's own finding is next to it
        torch.cuda.synchronize()


def generic(model, device):
    cuda = device.type != "cpu"
    if cuda:
        torch.npu.synchronize()  # device-generic work under the flag
        model = model.to(device)
        print("cuda")  # a string, not a device
    return model


def cuda_test(device):
    cuda = device.type == "cuda"  # a CUDA test (DEV023), not a "not the CPU" flag
    if cuda:
        torch.cuda.synchronize()


def shadowed(cuda):
    if cuda:  # a parameter: nothing says what it is
        torch.cuda.synchronize()


def off_on_npu(device):
    cuda = device.type != "cpu"
    if not cuda:  # runs on the CPU only
        torch.cuda.synchronize()
    if cuda and torch.cuda.device_count() > 1:  # false on an NPU: DEV008's
        torch.cuda.synchronize()


def flags_only(device, model):
    cuda = device.type != "cpu"
    if cuda:
        torch.backends.cudnn.benchmark = True  # a backend flag, not CUDA work
    use_bf16 = cuda and torch.cuda.is_bf16_supported()  # the value is a CUDA test: DEV009's
    return use_bf16
