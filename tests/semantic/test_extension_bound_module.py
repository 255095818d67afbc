"""A module that imports a CUDA extension the project builds, at module level, and calls it cannot even be
imported on an Ascend host (Swin-Transformer's ``kernels/window_process/unit_test.py``, the kernels' own
test: ``import swin_window_process``; found in review).  Its device code is the extension's: fix leaves
the module as written and says why; a module that imports the extension under ``try`` with a fallback
(``models/swin_transformer.py``) is still migrated."""

from __future__ import annotations

import json
import textwrap

from tests.cli_util import run_cli

SETUP = """
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
setup(name="wp", ext_modules=[CUDAExtension("window_kernel", ["wp.cpp", "wp_kernel.cu"])],
      cmdclass={"build_ext": BuildExtension})
"""

KERNEL_TEST = """
import torch
import window_kernel


def test_forward():
    x = torch.randn(2, 4).cuda()
    y = window_kernel.forward(x)
    torch.cuda.synchronize()
    return y
"""

MODEL = """
import torch
try:
    import window_kernel
except ImportError:
    window_kernel = None


def run(x, fused=False):
    x = x.cuda()
    if fused and window_kernel is not None:
        return window_kernel.forward(x)
    return x * 2
"""


def _project(tmp_path):
    for name, text in (("setup.py", SETUP), ("unit_test.py", KERNEL_TEST), ("model.py", MODEL)):
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    (tmp_path / "wp_kernel.cu").write_text("__global__ void k() {}\n", encoding="utf-8")


def test_module_bound_to_the_extension_is_left_as_written(tmp_path):
    _project(tmp_path)
    out = tmp_path.parent / (tmp_path.name + "-npu")
    r = run_cli("fix", ".", "--target", "npu", "--out-dir", str(out), "--no-cache", cwd=str(tmp_path))
    assert "Traceback" not in r.err, r.err
    assert (out / "unit_test.py").read_text(encoding="utf-8") == (tmp_path / "unit_test.py").read_text(encoding="utf-8")
    assert "x = x.npu()" in (out / "model.py").read_text(encoding="utf-8")


def test_scan_says_why_the_module_is_left(tmp_path):
    _project(tmp_path)
    r = run_cli("scan", ".", "--target", "npu", "--format", "json", "--no-cache", cwd=str(tmp_path))
    found = json.loads(r.out)["findings"]
    mine = [f for f in found if f["path"] == "unit_test.py" and f["code"] in ("DEV001", "DEV008")]
    assert len(mine) == 2 and all(not f["fixable"] for f in mine), mine
    assert all(any(n["kind"] == "intent" and "window_kernel" in n["text"] for n in f["notes"]) for f in mine)
    model = [f for f in found if f["path"] == "model.py" and f["code"] == "DEV001"]
    assert model and model[0]["fixable"]
