"""Static analysis of a CUDA PyTorch project: files → findings (stdlib ``ast``)."""
