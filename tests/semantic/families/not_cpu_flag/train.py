"""A "not CPU" flag is true on an NPU: the code it guards runs there, so its CUDA calls are real errors."""
import torch
from torch.utils.data import DataLoader


def main(model, data, device_name):
    device = torch.device(device_name)
    use_gpu = device.type != "cpu"
    loader = DataLoader(data, batch_size=8, pin_memory=use_gpu)
    scaler = torch.cuda.amp.GradScaler(enabled=use_gpu)  # expect: AMP001, DEV027
    if use_gpu:  # expect: DEV027
        torch.cuda.synchronize()  # expect: DEV008
        model = model.cuda()  # expect: DEV001
    return loader, scaler, model
