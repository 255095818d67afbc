"""Building blocks for ``--target agnostic`` fixes (device-agnostic code via ``torch.accelerator``).

Agnostic fixes refer to one module-level name, added once after the imports::

    DEVICE_TYPE = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"

so the same file runs on CUDA, on Ascend (torch_npu registers ``npu`` as the
current accelerator) and on a CPU-only machine.  ``torch.accelerator`` exists
from torch 2.6 on (PyTorch docs, "torch.accelerator").
"""

from __future__ import annotations

from typing import Optional

from ascendify.rules.checks._util import torch_root
from ascendify.scan.finding import Edit

NAME = "DEVICE_TYPE"


def prelude(ctx) -> Optional[Edit]:
    """The ``add_prelude`` edit defining ``DEVICE_TYPE``, or None if ``torch`` is not imported as a module."""
    t = torch_root(ctx)
    if t is None:
        return None
    return ctx.add_prelude(
        f'{NAME} = {t}.accelerator.current_accelerator().type if {t}.accelerator.is_available() else "cpu"'
    )
