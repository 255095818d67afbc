"""Building blocks for ``--target agnostic`` fixes (device-agnostic code via ``torch.accelerator``).

Agnostic fixes refer to one module-level name, added once after the imports::

    DEVICE_TYPE = (torch.accelerator.current_accelerator().type if torch.accelerator.is_available()
                   and torch.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu")

so the same file runs on CUDA, on Ascend (torch_npu registers ``npu`` as the
current accelerator) and on a CPU-only machine.  Other accelerators (Apple MPS, Intel XPU) give
``"cpu"``, as ``"cuda" if torch.cuda.is_available() else "cpu"`` did: the migration must not move a
CUDA-or-CPU program onto MPS, where its behaviour (dtypes, autocast, missing ops) differs.  ``torch.accelerator`` exists
from torch 2.6 on (PyTorch docs, "torch.accelerator").
"""

from __future__ import annotations

from typing import Optional

from ascendify.rules.checks._util import torch_root
from ascendify.diagnostics import Edit

NAME = "DEVICE_TYPE"


def module_torch(ctx) -> Optional[str]:
    """The name ``torch`` is bound to at module level (also in a top-level ``if``/``try`` block), or None —
    an ``import torch`` inside functions only does not let a module-level prelude use it."""
    bindings = getattr(ctx, "bindings", None)
    if bindings is None:
        return torch_root(ctx)
    for name, binds in bindings.module_scope.bindings.items():
        if any(b.kind == "import" and b.module == "torch" for b in binds):
            return name
    return None


def prelude(ctx) -> Optional[Edit]:
    """The ``add_prelude`` edit defining ``DEVICE_TYPE``, or None if ``torch`` is not imported as a module
    at module level."""
    t = module_torch(ctx)
    if t is None:
        return None
    return ctx.add_prelude(
        f'{NAME} = {t}.accelerator.current_accelerator().type if {t}.accelerator.is_available() '
        f'and {t}.accelerator.current_accelerator().type in ("cuda", "npu") else "cpu"'
    )
