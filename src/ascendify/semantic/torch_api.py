"""Torch and torch_npu API facts that the semantic model and the rules share (one place, one version parser)."""

from __future__ import annotations

import re
from typing import Optional

PROCESS_GROUP_CALLS = {
    "torch.distributed.init_process_group": 0,
    "torch.distributed.distributed_c10d.init_process_group": 0,
    "torch.distributed.new_group": 2,
    "torch.distributed.distributed_c10d.new_group": 2,
}
"""Process-group constructors → position of their ``backend`` argument."""

AUTOLOAD_SINCE = (2, 5, 1)
"""First torch_npu release registering the ``torch.backends`` entry point, so ``import torch`` loads it
(PyTorch "Autoloading Out-of-Tree Extension", torch >= 2.5; torch_npu README: "import torch_npu # No
longer needed in torch_npu 2.5.1 and later versions"; see the IMP002 rule page)."""

INT_IS_ACCELERATOR_SINCE = (2, 3)
"""torch_npu release from which a bare int device reaches the NPU: torch 2.3.0 resolves an index to
PrivateUse1 when one is registered (pytorch/pytorch PR #117966), generalised to the current accelerator
by PR #129119 (torch 2.5.0); torch 2.1/2.2 send it to CUDA (Ascend/pytorch#16)."""

_VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def version_tuple(version: Optional[str], default: Optional[str] = None) -> tuple:
    """``"2.7.1.post11"`` → ``(2, 7, 1)``, ``"v2.4"`` → ``(2, 4, 0)``; unparsable → ``default`` parsed the
    same way, else ``(0, 0, 0)``."""
    m = _VERSION_RE.match(str(version or "").strip().lstrip("v"))
    if not m and default:
        m = _VERSION_RE.match(default)
    if not m:
        return (0, 0, 0)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


def autoloaded(torch_npu: Optional[str]) -> bool:
    """``import torch`` loads this torch_npu release (>= 2.5.1): no ``import torch_npu`` needed for ``torch.npu``."""
    return version_tuple(torch_npu) >= AUTOLOAD_SINCE


def int_device_severity(settings) -> str:
    """error when the target torch_npu's torch still reads an int device as CUDA, else warning."""
    if settings.target == "npu" and version_tuple(settings.torch_npu)[:2] < INT_IS_ACCELERATOR_SINCE:
        return "error"
    return "warning"
