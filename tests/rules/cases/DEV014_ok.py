import torch
import torch_npu

with torch.profiler.record_function("forward"):
    pass
rid = torch_npu.npu.mstx.range_start("step")
torch_npu.npu.mstx.range_end(rid)
nvtx_enabled = False
