import torch
import torch.profiler as tprof
from torch.profiler import ProfilerActivity, profile, schedule


def trace(model, batch):
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:  # expect: EXT015
        model(batch)
    return prof


def trace_steps(model, loader, out_dir):
    acts = [torch.profiler.ProfilerActivity.CPU]
    if torch.cuda.is_available():
        acts.append(
            torch.profiler.ProfilerActivity
            .CUDA  # expect: EXT015
        )
    with tprof.profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=3)) as prof:
        for batch in loader:
            model(batch)
            prof.step()
    return tprof.ProfilerActivity.CUDA in acts  # expect: EXT015
