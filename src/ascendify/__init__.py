"""ascendify: move CUDA PyTorch projects to Huawei Ascend NPUs (torch_npu + CANN).

The main job is :mod:`ascendify.scan` (find every place that must change) and
:mod:`ascendify.fix` (rewrite the safe ones).  Other capabilities live in
their own subpackages (``kb``, ``probe``, ``doctor``, ``diagnose``, ``profile``,
``export``, ``compare``, ``report``).
"""

__version__ = "0.1.0"
