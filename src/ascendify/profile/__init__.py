"""``ascendify profile``: read a torch_npu profiler run — slow ops, AI_CPU, step time, GPU comparison."""
