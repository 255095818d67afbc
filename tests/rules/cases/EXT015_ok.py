import torch_npu
from torch.profiler import ProfilerActivity, profile


class Device:
    CUDA = "cuda"


def trace(model, batch, out_dir):
    with torch_npu.profiler.profile(
        activities=[torch_npu.profiler.ProfilerActivity.CPU, torch_npu.profiler.ProfilerActivity.NPU],
        on_trace_ready=torch_npu.profiler.tensorboard_trace_handler(out_dir),
    ) as prof:
        model(batch)
    return prof


def cpu_only(model, batch):
    with profile(activities=[ProfilerActivity.CPU]):
        model(batch)
    return Device.CUDA
