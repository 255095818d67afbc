"""A "not CPU" flag is true on an NPU: the code it guards runs there, so its CUDA calls are real errors."""
import torch
from torch.utils.data import DataLoader

DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"


def main(model, data, device_name):
    device = torch.device(device_name)
    use_gpu = device.type != "cpu"
    loader = DataLoader(data, batch_size=8, pin_memory=use_gpu)
    scaler = torch.amp.GradScaler(DEVICE_TYPE, enabled=use_gpu and DEVICE_TYPE != "cpu")  # expect: AMP001, DEV027
    if use_gpu:  # expect: DEV027
        torch.accelerator.synchronize()  # expect: DEV008
        model = model.to(DEVICE_TYPE)  # expect: DEV001
    return loader, scaler, model
