"""The event file and user_frame() (in-process: no torch needed), and config validation."""

from __future__ import annotations

import json
import os
import traceback

import pytest

from ascendify.errors import AscendifyError
from ascendify.run import config, events


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    events.configure(str(tmp_path / "ev"), str(root))
    yield root
    events.configure(None, None)


def test_user_frame_is_the_innermost_frame_in_the_project(project, tmp_path):
    lib = tmp_path / "venv" / "lib" / "site-packages" / "somelib.py"
    stack = [
        {"file": str(project / "train.py"), "line": 10, "function": "<module>", "code": "main()"},
        {"file": str(project / "train.py"), "line": 5, "function": "main", "code": "model.to(device)"},
        {"file": str(lib), "line": 99, "function": "to", "code": "x"},
        {"file": os.path.join(os.path.dirname(events.__file__), "policy.py"), "line": 1, "function": "f", "code": ""},
    ]
    assert events.user_frame(stack) == stack[1]
    # outside project_root is not user code, nor are frames without a file
    assert events.user_frame([{"file": str(tmp_path / "other.py"), "line": 1, "function": "f"},
                              {"file": "<string>", "line": 1, "function": "g"}]) is None


def test_user_frame_of_a_traceback(project):
    path = project / "prog.py"
    path.write_text("def boom():\n    raise ValueError('x')\n")
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    try:
        ns["boom"]()
    except ValueError as e:
        fr = events.user_frame(e.__traceback__)
        summary = events.user_frame(traceback.extract_tb(e.__traceback__))
    assert fr == {"file": str(path), "line": 2, "function": "boom", "code": "raise ValueError('x')"}
    assert summary == fr


def test_events_are_json_lines_per_pid_flushed_at_once(project, tmp_path):
    events.emit("fallback", op="aten::x", user_frame=None)
    events.emit("dtype", op="aten::y", dtype="torch.float64", action="warn", user_frame=None)
    path = tmp_path / "ev" / f"events-{os.getpid()}.jsonl"
    lines = [json.loads(ln) for ln in path.read_text().splitlines()]
    assert [e["kind"] for e in lines] == ["fallback", "dtype"]
    assert lines[1]["dtype"] == "torch.float64" and isinstance(lines[0]["t"], float)


def test_no_events_dir_writes_nothing(tmp_path):
    events.configure(None, None)
    events.emit("start", pid=1)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("cfg,message", [
    ({"devices": "many"}, "ascendify run: devices must be an integer, got 'many'"),
    ({"devices": 65}, "ascendify run: devices must be between 1 and 64, got 65"),
    ({"mode": "fast"}, "ascendify run: mode must be one of auto, shim, python, got 'fast'"),
    ({"torch_npu": "banana"}, "ascendify run: 'banana' is not a torch_npu version (expected e.g. 2.7.1 or "
                              "2.7.1.post11)"),
])
def test_bad_config_values(cfg, message):
    with pytest.raises(AscendifyError) as e:
        config.from_dict(cfg)
    assert str(e.value) == message


def test_config_defaults_and_release_resolution():
    c = config.from_dict({"torch_npu": "2.1.0", "devices": 2})
    assert (c.torch_npu, c.chip, c.devices, c.mode) == ("2.1.0.post17", "Ascend910B3", 2, "auto")
    assert config.bf16_supported("Ascend910B3") is True
    assert config.bf16_supported("Ascend910A") is False
    assert config.hbm_bytes("Ascend910B3") == 64 << 30
