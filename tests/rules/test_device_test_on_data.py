"""A "cuda" test on data rather than on a device the program chose (DEV023, --target npu).

CLIP's ``patch_device`` rewrites the device constants of a CUDA-traced TorchScript archive:
``if str(node["value"]).startswith("cuda"): node.copyAttributes(device_node)``.  The archive says "cuda"
on every host, so ``startswith("npu")`` never matches and the model stays on "cuda" (found in review);
the npu copy must accept both, as the agnostic one does.  A test of the program's own device is still
rewritten to "npu".
"""

from __future__ import annotations

import textwrap

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile


def fixed(body: str, target: str = "npu") -> str:
    text = "import torch\n" + textwrap.dedent(body).lstrip("\n")
    s = Settings(select=["DEV023"], target=target).validate()
    src = SourceFile(path="t.py", text=text)
    out, _applied, _rem, _unsafe, error = fix_source(src, analyze_source(src, "t.py", s), s, "t.py")
    assert error is None, error
    return out


def test_str_of_a_graph_constant_accepts_both():
    out = fixed('''
        def patch(graph, device_node):
            for node in graph.findAllNodes("prim::Constant"):
                if "value" in node.attributeNames() and str(node["value"]).startswith("cuda"):
                    node.copyAttributes(device_node)
    ''')
    assert 'str(node["value"]).startswith(("cuda", "npu"))' in out


def test_a_config_read_compared_with_cuda_accepts_both():
    out = fixed('''
        def pick(cfg):
            if cfg["device"] == "cuda":
                return 1
    ''')
    assert 'cfg["device"] in ("cuda", "npu")' in out


def test_the_programs_own_device_is_tested_for_the_npu():
    out = fixed('''
        def f(x):
            if x.device.type == "cuda":
                return 1
            if str(x.device).startswith("cuda"):
                return 2
    ''')
    assert 'x.device.type == "npu"' in out
    assert 'str(x.device).startswith("npu")' in out
