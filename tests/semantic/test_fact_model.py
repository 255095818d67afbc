"""One fact model for scan and fix (issue 19): names resolve by scope, noqa knows its codes, the
project pass does not depend on --select, guards with the same text are kept apart, and a fix run
counts what a scan of its migrated copy finds."""

from __future__ import annotations

import json
import os
import textwrap

from ascendify.config import Settings
from ascendify.scan.engine import analyze_source, discover, scan_files
from ascendify.scan.source import read_source
from tests.cli_util import run_cli


def _write(root, files: dict) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")


def _file_findings(path, **kw):
    return analyze_source(read_source(str(path)), os.path.basename(str(path)), Settings(**kw).validate())


def _scan(root, **kw):
    s = Settings(**kw).validate()
    res = scan_files(discover([str(root)], s, lambda p, m: None), s, None, jobs=1)
    for f in res.findings:
        f.path = os.path.relpath(f.path, str(root))
    return res.findings


SHADOW = """
import torch


def a():
    from torch.cuda import synchronize as sync
    sync()


def b(sync):
    sync()
"""


def test_a_parameter_that_shadows_an_import_alias_is_not_the_import(tmp_path):
    _write(tmp_path, {"m.py": SHADOW})
    found = [(f.code, f.line) for f in _file_findings(tmp_path / "m.py") if f.code == "DEV008"]
    assert found == [("DEV008", 6)]  # a()'s call only; b(sync) calls whatever it is given


HELPERS = {
    "pkg/__init__.py": "",
    "pkg/helpers.py": """
        import torch


        def sync():
            torch.cuda.synchronize()
        """,
}


def test_noqa_with_another_code_keeps_the_cross_file_finding(tmp_path):
    _write(tmp_path, dict(HELPERS, **{"train.py": """
        from pkg.helpers import sync


        def main():
            sync()  # noqa: E501
        """}))
    assert [(f.path, f.line) for f in _scan(tmp_path) if f.code == "DEV026"] == [("train.py", 5)]
    (tmp_path / "train.py").write_text((tmp_path / "train.py").read_text().replace("E501", "DEV026"))
    assert [f for f in _scan(tmp_path) if f.code == "DEV026"] == []


def test_select_of_the_project_rule_alone_finds_it(tmp_path):
    _write(tmp_path, dict(HELPERS, **{"train.py": """
        from pkg.helpers import sync


        def main():
            sync()
        """}))
    found = _scan(tmp_path, select=["DEV026"])
    assert [(f.code, f.path, f.line) for f in found] == [("DEV026", "train.py", 5)]  # and nothing of the other rules


SIBLINGS = """
import torch


def main(args, model, device):
    if args.gpu is not None:
        pass
    elif args.distributed:
        if device.type == 'cuda':
            torch.cuda.set_device(args.gpu)
            model.cuda(args.gpu)
    elif device.type == 'cuda':
        model = torch.nn.DataParallel(model).cuda()
"""


def test_same_test_text_in_sibling_branches_are_two_guards(tmp_path):
    _write(tmp_path, {"main.py": SIBLINGS})
    by_line = {f.line: f for f in _file_findings(tmp_path / "main.py")}
    inner = by_line[8]
    assert inner.code == "DEV023" and inner.fix is not None  # not held back by the sibling's DataParallel
    assert [(n.kind, n.line) for n in by_line[9].notes] == [("dead", 8)]  # under its own test, not the sibling's
    assert "line 8" in by_line[9].full_message and "line 11" not in by_line[9].full_message
    assert by_line[9].fix is not None and by_line[10].fix is not None
    assert by_line[11].fix is None and "DST005 at line 12" in by_line[11].full_message


def test_fix_counts_come_from_the_migrated_copy(tmp_path):
    src = tmp_path / "src"
    _write(src, dict(HELPERS, **{"train.py": """
        from pkg.helpers import sync


        def main():
            sync()
            x = 1  # a line fix does not touch
        """}))
    out = tmp_path / "out"
    r = run_cli("fix", ".", "--out-dir", str(out), "--no-cache", "--format", "json", cwd=str(src))
    doc = json.loads(r.out)
    left = sorted((f["path"], f["code"]) for f in doc["remaining"])
    rescan = run_cli("scan", ".", "--no-cache", "--format", "json", "--fail-on", "never", cwd=str(out))
    again = sorted((f["path"], f["code"]) for f in json.loads(rescan.out)["findings"])
    assert left == again
    assert ("train.py", "DEV026") not in left  # the helper it called was fixed
    log = json.loads((out / "ascendify-changes.json").read_text())
    assert log["summary"]["open"] == len(again)


def test_a_helpers_cuda_default_reaches_its_callers(tmp_path):
    _write(tmp_path, {
        "utils/__init__.py": "",
        "utils/torch_utils.py": """
            import torch


            def smart_amp_autocast(amp=True, device="cuda"):
                return torch.autocast(device_type=device, enabled=amp)
            """,
        "train.py": """
            from utils.torch_utils import smart_amp_autocast


            def train(amp, model, x):
                with smart_amp_autocast(amp):
                    return model(x)
            """,
    })
    found = {(f.code, f.path, f.line): f for f in _scan(tmp_path)}
    assert found[("DEV024", "utils/torch_utils.py", 4)].severity == "error"  # it selects AMP's device
    call = found[("DEV026", "train.py", 5)]
    assert "utils/torch_utils.py" in call.message and "DEV024 at line 4" in call.message


LOG_EVERY = """
import torch


def log_every(iterable, header):
    if torch.cuda.is_available():
        log_msg = header + " max mem: {memory:.0f}"
    else:
        log_msg = header
    for i, obj in enumerate(iterable):
        if i % 10 == 0:
            if torch.cuda.is_available():
                print(log_msg.format(memory=torch.cuda.max_memory_allocated()))
            else:
                print(log_msg.format())
        yield obj
"""


def test_same_test_text_nested_deeper_is_still_one_guard(tmp_path):
    """detr/mae's MetricLogger: the first guard chooses the format string, the second one (in a loop)
    fills it; fixing the first alone makes the NPU path fail with KeyError 'memory'."""
    from ascendify.fix.run import fix_source

    _write(tmp_path, {"misc.py": LOG_EVERY})
    s = Settings(target="agnostic").validate()
    src = read_source(str(tmp_path / "misc.py"))
    text = fix_source(src, analyze_source(src, "misc.py", s), s, "misc.py")[0]
    assert text.count("if torch.cuda.is_available():") == 2  # neither changed: max_memory_allocated has no agnostic fix
