"""Engine internals: name resolution, cache, parallel scan, selection semantics."""

from __future__ import annotations

import ast

from ascendify.config import Settings
from ascendify.scan.context import FileContext
from ascendify.scan.engine import discover, scan_files

SRC = '''
import argparse
import torch as t
from torch import cuda
from torch.cuda.amp import autocast as ac
import torch.nn.functional as F

DEVICE = "cuda"
parser = argparse.ArgumentParser()
parser.add_argument("--dist-backend", default="nccl", type=str)
parser.add_argument("--rank", dest="local_rank", default=0, type=int)
args = parser.parse_args()

def train(dev="cpu"):
    device = "cuda:1"
    name = f"cuda:{args.local_rank}"
    flip = "a"
    flip = "b"
    t.cuda.synchronize()
    cuda.synchronize()
    with ac():
        F.relu(x)
    use(DEVICE, device, name, flip, dev, args.dist_backend, args.local_rank)
'''


def _ctx():
    tree = ast.parse(SRC)
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            child._asc_parent = node
    return tree, FileContext(tree, SRC)


def _calls(tree, name):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == name]


def test_qualname_through_aliases():
    tree, ctx = _ctx()
    names = sorted({ctx.call_name(c) for c in ast.walk(tree) if isinstance(c, ast.Call) and ctx.call_name(c)})
    assert "torch.cuda.synchronize" in names
    assert "torch.cuda.amp.autocast" in names
    assert "torch.nn.functional.relu" in names
    assert [ctx.call_name(c) for c in ast.walk(tree) if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "synchronize"] == ["torch.cuda.synchronize"] * 2


def test_resolve_constants_fstrings_and_argparse():
    tree, ctx = _ctx()
    use = _calls(tree, "use")[0]
    got = [ctx.resolve_str(a) for a in use.args]
    # DEVICE (module), device (function), f-string prefix, ambiguous, parameter, argparse default, non-str default
    assert got == ["cuda", "cuda:1", "cuda:", None, None, "nccl", None]
    d = ctx.arg_default_for(use.args[5])
    assert (d.dest, d.value, d.node.lineno, d.type_name) == ("dist_backend", "nccl", 10, "str")
    assert ctx.arg_default_for(use.args[6]).dest == "local_rank"


def test_selection_longest_prefix_wins():
    s = Settings(select=["DEV"], ignore=["DEV0"]).validate()
    assert not s.enabled("DEV001")
    s = Settings(select=["DEV001"], ignore=["DEV"]).validate()
    assert s.enabled("DEV001") and not s.enabled("DEV002")
    s = Settings(ignore=["ALL"], select=[]).validate()
    assert not s.enabled("DEV001")
    s = Settings(per_file_ignores={"tests/*": ["DEV"]}).validate()
    assert not s.enabled("DEV001", "tests/x.py") and s.enabled("DEV001", "src/x.py")


def _tree(tmp_path, n=20):
    for i in range(n):
        (tmp_path / f"m{i:02d}.py").write_text(f"import torch\nx{i} = torch.ones({i}).cuda()\n" + "y = 1\n" * i)
    return discover([str(tmp_path)], Settings(), lambda p, m: None)


def test_cache_hits_and_invalidation(tmp_path):
    (tmp_path / "p").mkdir()
    entries = _tree(tmp_path / "p")
    cache = str(tmp_path / "cache")
    s = Settings(select=["DEV001"]).validate()
    first = scan_files(entries, s, cache, jobs=1)
    assert first.cached == 0 and len(first.findings) == 20
    second = scan_files(entries, s, cache, jobs=1)
    assert second.cached == 20
    assert [f.to_dict() for f in second.findings] == [f.to_dict() for f in first.findings]
    (tmp_path / "p" / "m03.py").write_text("import torch\n")
    third = scan_files(entries, s, cache, jobs=1)
    assert third.cached == 19 and len(third.findings) == 19
    other = scan_files(entries, Settings(select=["DEV001"], target="agnostic").validate(), cache, jobs=1)
    assert other.cached == 0


def test_parallel_equals_serial(tmp_path):
    entries = _tree(tmp_path, 40)
    s = Settings().validate()
    serial = scan_files(entries, s, None, jobs=1)
    parallel = scan_files(entries, s, None, jobs=2)
    assert [f.to_dict() for f in parallel.findings] == [f.to_dict() for f in serial.findings]
    assert sorted(parallel.files) == sorted(serial.files) and len(serial.files) == 40


def test_analysed_file_leaves_no_reference_cycles(tmp_path):
    """After a file is analysed, reference counting frees its tree, scopes, bindings and semantic
    model: nothing is left for the cyclic GC (its collections of those webs were a tenth of a scan)."""
    import gc

    from ascendify.scan.engine import analyze_source
    from ascendify.scan.source import read_source

    p = tmp_path / "train.py"
    p.write_text(SRC + "\ndef helper(model):\n    if t.cuda.is_available():\n        model.cuda()\n    return model.to(DEVICE)\n")
    settings = Settings().validate()
    analyze_source(read_source(str(p)), "train.py", settings)  # warm the rule tables
    gc.collect()
    was_on = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        findings = analyze_source(read_source(str(p)), "train.py", settings)
        gc.collect()
        left = {type(o).__name__ for o in gc.garbage}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if was_on:
            gc.enable()
    assert {f.code for f in findings} >= {"DEV001", "DEV024"}
    assert not left & {"Scope", "Binding", "SemanticModel", "DeviceValues", "Branches", "Module", "Call", "Name"}, left


def test_keyed_checks_follow_the_import_in_scope(tmp_path):
    """A check keyed on the called name (OPS004: ``bmm``) runs for an imported name by what it
    imports where it is called, not by the file's last import of that name (``numpy.dot`` below)."""
    from ascendify.scan.engine import analyze_source
    from ascendify.scan.source import read_source

    p = tmp_path / "m.py"
    p.write_text("import torch\n\n\ndef g(a, b):\n    from torch import bmm as mm\n    return mm(a, b)\n\n\n"
                 "def f(a, b):\n    from numpy import dot as mm\n    return mm(a, b)\n")
    found = analyze_source(read_source(str(p)), "m.py", Settings(select=["OPS004"]).validate())
    assert [(f.code, f.line) for f in found] == [("OPS004", 6)]


def test_keys_of_a_check_can_depend_on_the_settings():
    """``check(names=fn)``: the engine asks ``fn(settings)`` once for the keys (OPS003's are the
    APIs the support list marks unsupported, plus with --chip those marked unsupported on it)."""
    from ascendify.scan.engine import Dispatch

    def ops003_keys(settings):
        return {k for k, fns in Dispatch.build(settings).by_key[ast.Call].items() if any(c == "OPS003" for c, _ in fns)}

    plain = ops003_keys(Settings().validate())
    chip = ops003_keys(Settings(chip="Ascend950DT").validate())
    assert plain < chip and "AdaptiveAvgPool3d" in chip - plain  # marked unsupported for 950DT only
    assert not any(c == "OPS003" for c, _ in Dispatch.build(Settings().validate()).by_type.get(ast.Call, ()))
