"""A device test that sends every device but CUDA to a portable early return is correct on Ascend
(issue 20, K's family 3: stylegan2's ``could_use_op`` returns False unless ``input.device.type ==
"cuda"``, and its callers then take ``F.conv2d``).  It was DEV023 "silently wrong", and every caller
of the helpers that ask it a silent DEV026.  Now it is info, left as written (rewritten, the test
would send NPU tensors down the CUDA-only path); the tests whose skipped path holds CUDA calls, that
raise, or that change a value and go on keep their finding."""

from __future__ import annotations

import textwrap

from ascendify.config import Settings
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile

OPS = '''
import torch
import torch.nn.functional as F

FAST = True


def fast_path_ok(x):
    if not FAST or x.device.type != "cuda":
        return False
    return torch.__version__ >= "2"


def smooth(x, w):
    if not x.is_cuda:
        return F.conv2d(x, w)
    return _fast_smooth(x, w)


def wait(dev):
    if dev.type != "cuda":
        return
    torch.cuda.synchronize()


def demand(x):
    if x.device.type != "cuda":
        raise RuntimeError("this needs a GPU")
    return x


def precision(x):
    if x.device.type != "cuda":
        x = x.float()
    return x


def in_loop(xs):
    for x in xs:
        if x.device.type != "cuda":
            return x
    return None
'''


def _scan(target="npu"):
    s = Settings(target=target).validate()
    src = SourceFile(path="ops.py", text=textwrap.dedent(OPS).lstrip("\n"))
    return {(f.line, f.code): f for f in analyze_source(src, "ops.py", s) if f.code in ("DEV015", "DEV023")}


def test_a_portable_early_return_for_other_devices_is_info_without_a_fix():
    for target in ("npu", "agnostic"):
        got = _scan(target)
        for key, ret in (((8, "DEV023"), 9), ((14, "DEV015"), 15)):
            f = got[key]
            assert f.severity == "info" and f.fix is None, (target, key, f.severity, f.fix)
            assert f.message.startswith("device test true on every device but CUDA: an Ascend host takes the portable "
                                        f"path it returns at line {ret}")
            assert [n.kind for n in f.notes] == ["fallback"]


def test_tests_that_skip_cuda_work_raise_or_go_on_keep_their_finding():
    got = _scan()
    for line in (20, 26, 32, 39):  # wait(): torch.cuda after it; demand(): raises; precision(): no return; in_loop(): not the function's own statement
        f = got[(line, "DEV023")]
        assert f.severity == "silent" and f.fix is not None, (line, f.severity)


def test_callers_of_a_helper_asking_such_a_test_get_nothing(tmp_path):
    import json

    from tests.cli_util import run_cli

    (tmp_path / "ops.py").write_text(textwrap.dedent(OPS).lstrip("\n"), encoding="utf-8")
    (tmp_path / "net.py").write_text("from ops import fast_path_ok, smooth, wait\n\n\ndef f(x, w):\n"
                                     "    fast_path_ok(x)\n    wait(x.device)\n    return smooth(x, w)\n", encoding="utf-8")
    r = run_cli("scan", ".", "--format", "json", "--fail-on", "never", "--no-cache", cwd=str(tmp_path))
    assert r.code == 0, r.err
    calls = sorted(f["line"] for f in json.loads(r.out)["findings"] if f["code"] == "DEV026")
    assert calls == [6]  # wait() only: its torch.cuda.synchronize() is work
