"""The text engine (fix/apply.py) gives the LibCST engine's text, and falls back to it where
it cannot place an edit the same way."""

from __future__ import annotations

import pytest

from ascendify.fix import apply as apply_mod
from ascendify.scan.finding import Edit, Finding, Fix
from ascendify.scan.source import SourceFile


def _finding(*edits, line=1):
    return Finding("DEV001", "m", "t.py", line, 0, line, 0, "error", "device", Fix(tuple(edits), True, "op"))


def _both(monkeypatch, text, findings):
    out = {}
    for engine in ("cst", "text"):
        monkeypatch.setattr(apply_mod, "ENGINE", engine)
        o = apply_mod.apply_fixes(SourceFile(path="t.py", text=text), findings)
        out[engine] = (o.text, len(o.applied), o.error)
    assert out["text"] == out["cst"]
    return out["text"]


CALLS = ["f(a)\n", "f( a )\n", "f()\n", "f(\n    a,\n    b\n)\n", "f(\n    a,\n    b,\n)\n", "f(a ,)\n",
         "f(a  # c\n)\n", "f(a,  # c\n)\n", "f(  # c\n  a)\n", "(f)(a)\n"]


@pytest.mark.parametrize("src", CALLS)
@pytest.mark.parametrize("kind", ["add_arg", "set_args"])
def test_argument_edits_keep_the_libcst_layout(monkeypatch, src, kind):
    lines = src.split("\n")
    end = (len(lines) - 1, len(lines[-2]))
    text, applied, error = _both(monkeypatch, src, [_finding(Edit(kind, "k=v", (1, 0), end))])
    assert applied == 1 and error is None and "k=v" in text


def test_an_argument_added_to_a_plain_call_needs_no_libcst(monkeypatch):
    calls = []
    monkeypatch.setattr(apply_mod, "_transform", lambda text, fixes: calls.append(1))
    o = apply_mod.apply_fixes(SourceFile(path="t.py", text="x = f(a)\n"), [_finding(Edit("add_arg", "k=v", (1, 4), (1, 8)))])
    assert (o.text, calls) == ("x = f(a, k=v)\n", [])


def test_attr_string_and_nested_edits(monkeypatch):
    src = "import torch\nx = torch.cuda.is_available()\ny = t.to('cuda').cuda(r'cuda', b'cuda')\n"
    fs = [_finding(Edit("attr", "npu", (2, 4), (2, 14)), line=2),
          _finding(Edit("string", "npu", (3, 9), (3, 15)), Edit("attr", "npu", (3, 4), (3, 21)), line=3),
          _finding(Edit("string", "npu", (3, 33), (3, 40)), line=3)]  # bytes: not placed, dropped whole
    text, applied, _ = _both(monkeypatch, src, fs)
    assert applied == 2
    assert text == "import torch\nx = torch.npu.is_available()\ny = t.to('npu').npu(r'cuda', b'cuda')\n"


def test_a_replace_inside_a_replace_is_subsumed(monkeypatch):
    src = "x = torch.cuda.current_device()\n"
    fs = [_finding(Edit("replace", "0", (1, 4), (1, 31))), _finding(Edit("attr", "npu", (1, 4), (1, 14)))]
    assert _both(monkeypatch, src, fs)[0] == "x = 0\n"


def test_a_parenthesised_tuple_is_not_located_by_either_engine(monkeypatch):
    src = "T = ('cuda', 'xpu')\n"
    text, applied, _ = _both(monkeypatch, src, [_finding(Edit("replace", "('cuda', 'npu', 'xpu')", (1, 4), (1, 19)))])
    assert (text, applied) == (src, 0)


@pytest.mark.parametrize("src", [
    '"""doc."""\nimport os\nimport torch  # t\nimport numpy\n\n\nx = 1\n',
    "import os\r\nimport torch\r\nx = 1\r\n",
    "import os\ntry:\n    import torch\n    import numpy\nexcept ImportError:\n    torch = None\n",
    "if ok():\n    import torch\nelse:\n    pass\n",
    "import torch; import os\nx = 1\n",
    "from torch import nn\nimport torch_npu\nx = 1\n",
])
def test_import_and_prelude_placement(monkeypatch, src):
    fs = [_finding(Edit("add_import", "import torch_npu"), Edit("add_prelude", "DEVICE_TYPE = torch.accelerator.current_accelerator().type"))]
    text, applied, error = _both(monkeypatch, src, fs)
    assert applied == 1 and error is None
    assert apply_mod._transform_text(src, fs)[0] == text  # placed by the text engine itself, not its fallback


def test_what_the_text_engine_cannot_place_goes_to_libcst(monkeypatch):
    calls = []
    real = apply_mod._transform
    monkeypatch.setattr(apply_mod, "_transform", lambda text, fixes: calls.append(1) or real(text, fixes))
    src = "f(a)\n"
    two = _finding(Edit("add_arg", "x=1", (1, 0), (1, 4)), Edit("add_arg", "y=2", (1, 0), (1, 4)))
    monkeypatch.setattr(apply_mod, "ENGINE", "text")
    o = apply_mod.apply_fixes(SourceFile(path="t.py", text=src), [two])
    assert calls and o.text == "f(a, x=1, y=2)\n"
    calls.clear()
    o = apply_mod.apply_fixes(SourceFile(path="t.py", text="x = 1\n"), [_finding(Edit("add_prelude", "D = 1"))])
    assert calls  # no import to place it after: LibCST's module header rules decide
