"""Device and API rules (DEV): CUDA device strings, ``.cuda()``, ``torch.cuda.*``."""

from __future__ import annotations

import ast

from ascendify.rules.checks import agnostic as agn
from ascendify.rules.checks._util import fix, method_call
from ascendify.rules.registry import check


@check("DEV001", ast.Call)
def cuda_method(node: ast.Call, ctx) -> None:
    if method_call(node, "cuda") is None:
        return
    func = node.func
    if ctx.qualname(func) is not None:  # torch.cuda(...) is not a method call on a tensor
        return
    if ctx.settings.target == "npu":
        f = fix(ctx.rename_attr(func, "npu"), ctx.add_import(), operation="replace .cuda() with .npu()")
    else:
        pre = agn.prelude(ctx)
        f = None
        if pre is not None:
            args = ctx.args_text(node)
            if node.args:  # .cuda(rank) -> .to(f"{DEVICE_TYPE}:{rank}")
                args[0] = f'f"{{{agn.NAME}}}:{{{args[0]}}}"'
            else:
                args.insert(0, agn.NAME)
            f = fix(ctx.rename_attr(func, "to"), ctx.set_args(node, ", ".join(args)), pre, operation="replace .cuda() with .to(DEVICE_TYPE)")
    ctx.report(node, f)
