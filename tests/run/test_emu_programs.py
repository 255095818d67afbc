"""Whole programs on the emulated host: a CUDA script fails where an Ascend host fails, its npu copy
trains with the CPU's losses bit for bit, fallbacks are reported at the user's line, DDP over hccl,
checkpoints, autoload per release, events, bad config."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ascendify.errors import AscendifyError
from ascendify.run import SITE_DIR, boot
from tests.run.emu_helpers import (MODES, PROGRAMS, ROOT, emu_env, line_of, run_emu, run_plain,  # noqa: F401
                                   shim_built)


def test_cuda_script_fails_at_the_line_an_npu_host_fails_at(tmp_path, shim_built):  # noqa: F811
    res = run_emu(tmp_path, "cuda_train.py", extra_env={"RANK": "3"})
    assert res.rc == 1
    start = res.kind("start")[0]
    assert start["rank"] == 3 and start["pid"] > 0 and start["argv"][0].endswith("cuda_train.py")
    assert start["limits"] == boot.limits("shim") and start["mode"] == "shim"
    assert [e["kind"] for e in res.events][-1] == "end"
    assert "AssertionError: Torch not compiled with CUDA enabled" in res.err
    exc = res.kind("exception")[0]
    assert exc["type"] == "AssertionError"
    assert exc["user_frame"]["line"] == line_of("cuda_train.py", "FAILS HERE")
    assert exc["user_frame"]["file"] == os.path.join(PROGRAMS, "cuda_train.py")
    assert exc["user_frame"]["code"] == "model.to(device)  # FAILS HERE on an NPU host"
    assert res.kind("end")[0]["exit_code"] == 1
    # the model was built on the CPU and never reached a device: the summary says where it ended
    assert res.kind("device_summary")[0]["param_devices"] == {"cpu": 4}


_CPU_RUN: dict = {}


@pytest.mark.parametrize("mode", MODES)
def test_npu_copy_trains_on_npu_bit_identical_to_the_cpu(tmp_path, mode, shim_built):  # noqa: F811
    if "losses" not in _CPU_RUN:
        cpu = run_plain(tmp_path, "train.py", "cpu")
        assert cpu.returncode == 0, cpu.stderr[-2000:]
        _CPU_RUN["losses"] = next(ln for ln in cpu.stdout.splitlines() if ln.startswith("LOSSES "))
    cpu_losses = _CPU_RUN["losses"]
    res = run_emu(tmp_path, "train.py", "npu", mode=mode)
    assert res.rc == 0, res.err[-3000:]
    assert res.line("PARAMS") == "npu:0"
    assert "LOSSES " + res.line("LOSSES") == cpu_losses
    assert len(cpu_losses.split()) == 7
    assert res.kind("device_summary")[0]["param_devices"] == {"npu:0": 6}
    assert res.kind("end")[0]["exit_code"] == 0
    assert not res.kind("fallback")   # AdamW, GELU, LayerNorm, mse_loss: all NPU kernels in 2.7.1
    syncs = [e for e in res.kind("host_sync") if not e.get("total")]
    assert syncs and syncs[0]["user_frame"]["code"] == "losses.append(loss.item())"


@pytest.mark.parametrize("mode", MODES)
def test_cpu_fallback_reported_with_the_users_frame(tmp_path, mode, shim_built):  # noqa: F811
    res = run_emu(tmp_path, "fallback_prog.py", mode=mode)
    assert res.rc == 0, res.err[-3000:]
    assert res.line("RESULT") == "[0.5, 0.5, 0.5] npu:0"
    fb = res.kind("fallback")
    assert len(fb) == 1   # once per op, though it ran three times
    line = line_of("fallback_prog.py", "THE FALLBACK LINE")
    assert fb[0]["user_frame"] == {"file": os.path.join(PROGRAMS, "fallback_prog.py"), "line": line,
                                   "function": "invert", "code": "return torch.linalg.inv(a)  # THE FALLBACK LINE"}
    assert res.err.count("will fall back to run on the CPU") == 1
    assert f"fallback_prog.py:{line}: UserWarning: CAUTION: The operator 'aten::linalg_inv_ex" in res.err
    assert res.kind("op")[0]["counts_by_class"]["cpu_fallback"] == 3


def test_fallback_disabled_raises_torch_npus_error(tmp_path, shim_built):  # noqa: F811
    res = run_emu(tmp_path, "fallback_prog.py", fallback_disabled=True)
    assert res.rc == 1
    assert ("RuntimeError: The operator 'aten::linalg_inv_ex.inverse' would execute its main computation on CPU "
            "through dispatcher backend fallback, but CPU fallback is disabled by TORCH_NPU_FALLBACK_CPU_DISABLE=1."
            in res.err)
    assert "will fall back to run on the CPU" not in res.err
    assert res.kind("exception")[0]["user_frame"]["function"] == "invert"
    assert res.kind("fallback")[0]["disabled"] is True


def test_fallback_disabled_by_the_environment_variable_alone(monkeypatch):
    from ascendify.run import config

    monkeypatch.setenv("TORCH_NPU_FALLBACK_CPU_DISABLE", "1")
    assert config.from_dict({"torch_npu": "2.7.1"}).fallback_disabled is True
    monkeypatch.setenv("TORCH_NPU_FALLBACK_CPU_DISABLE", "0")
    assert config.from_dict({"torch_npu": "2.7.1"}).fallback_disabled is False


def test_ddp_step_over_hccl_between_two_processes(tmp_path, shim_built):  # noqa: F811
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for rank in range(2):
        env, _ = emu_env(tmp_path, "shim", {"RANK": str(rank), "LOCAL_RANK": str(rank), "WORLD_SIZE": "2",
                                            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
        procs.append(subprocess.Popen([sys.executable, os.path.join(PROGRAMS, "ddp_prog.py")], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=120) for p in procs]
    import json

    res = {}
    for p, (out, errs) in zip(procs, outs):
        assert p.returncode == 0, errs[-3000:]
        ln = next(x for x in out.splitlines() if x.startswith("DDP "))
        _, rank, payload = ln.split(" ", 2)
        res[int(rank)] = json.loads(payload)
    for rank in (0, 1):
        r = res[rank]
        assert r["backend"] == "hccl"
        assert r["all_reduce"] == [3.0, 3.0]
        assert r["all_gather_into_tensor"] == [0.0, 0.0, 1.0, 1.0]
        assert r["all_gather"] == [0.0, 10.0]
        assert r["broadcast"] == 5.0
        assert r["cpu_tensor"] == "No backend type associated with device type cpu"
        assert r["ddp_same"] is True
        assert r["ddp_device"] == f"npu:{rank}"


@pytest.mark.parametrize("release,expected", [("2.1.0", "False True True 2.1.0.post17"),
                                              ("2.5.1", "True True True 2.5.1.post1")])
def test_autoload_follows_the_release(tmp_path, release, expected, shim_built):  # noqa: F811
    # a sitecustomize of the user's, shadowed by the emulator's, still runs (it runs first)
    user_site = tmp_path / "usersite"
    user_site.mkdir()
    (user_site / "sitecustomize.py").write_text("print('USER SITE RAN')\n")
    res = run_emu(tmp_path, "autoload_prog.py", torch_npu=release,
                  extra_env={"PYTHONPATH": os.pathsep.join([SITE_DIR, str(user_site), os.path.join(ROOT, "src")])})
    assert res.rc == 0, res.err[-2000:]
    assert res.line("AUTOLOAD") == expected
    assert res.out.splitlines()[0] == "USER SITE RAN"


def test_autoload_switched_off_by_torchs_variable(monkeypatch):
    monkeypatch.delenv("TORCH_DEVICE_BACKEND_AUTOLOAD", raising=False)
    assert [boot.autoloads(r) for r in ("2.1.0.post17", "2.4.0.post4", "2.5.1.post1", "2.14.0")] == \
        [False, False, True, True]
    monkeypatch.setenv("TORCH_DEVICE_BACKEND_AUTOLOAD", "0")
    assert boot.autoloads("2.7.1.post11") is False


def test_uncaught_exception_event(tmp_path, shim_built):  # noqa: F811
    res = run_emu(tmp_path, "raise_prog.py", mode="python")
    assert res.rc == 1
    exc = res.kind("exception")[0]
    assert exc["type"] == "TypeError"
    assert exc["message"].startswith("can't convert npu:0 device type tensor to numpy")
    assert exc["user_frame"]["function"] == "step"
    assert exc["user_frame"]["code"] == "return x.numpy()  # raises on an npu tensor"
    assert res.kind("end")[0]["exit_code"] == 1


def test_bad_config_is_one_line_exit_2(tmp_path):
    env, _ = emu_env(tmp_path, "shim", devices=0)
    out = subprocess.run([sys.executable, "-c", "print('never')"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == "ascendify run: devices must be between 1 and 64, got 0\n"


def test_unsupported_torch_is_refused_with_the_range(monkeypatch):
    monkeypatch.delenv("ASCENDIFY_RUN_ANY_TORCH", raising=False)
    with pytest.raises(AscendifyError) as e:
        boot.check_torch("2.3.1")
    assert str(e.value) == "ascendify run: torch 2.3.1 is not supported by the emulator (supported: torch 2.13)"
    assert boot.check_torch("2.13.0+cpu") == "2.13.0+cpu"


def test_limits_per_mode():
    shim, python = boot.limits("shim"), boot.limits("python")
    assert set(shim) < set(python)
    assert any("synchronous" in x for x in shim) and any("custom ops" in x for x in shim)
    assert any("in-place shape" in x for x in python) and not any("in-place shape" in x for x in shim)


def test_mode_auto_takes_python_without_a_compiler(monkeypatch):
    from ascendify.run import shim

    monkeypatch.setattr(shim, "cached_library", lambda: None)
    monkeypatch.setattr(shim, "compiler", lambda: None)
    assert boot.resolve_mode("auto") == "python"
    assert boot.resolve_mode("shim") == "shim"
    monkeypatch.setattr(shim, "cached_library", lambda: "/cache/ascendify_npu_shim.so")
    assert boot.resolve_mode("auto") == "shim"   # a cached build needs no compiler


def test_shim_cache_is_per_torch_version_under_ascendify_cache_dir(monkeypatch, tmp_path):
    from ascendify.run import shim

    monkeypatch.setenv("ASCENDIFY_CACHE_DIR", str(tmp_path))
    import torch

    assert shim.cache_dir() == os.path.join(str(tmp_path), "run", "torch-" + torch.__version__.replace("+", "_"),
                                            "shim-" + shim._source_hash())
    assert shim.cached_library() is None   # nothing built there


def test_a_build_killed_earlier_does_not_make_the_next_one_wait_for_ever(monkeypatch, tmp_path):
    """torch's FileBaton leaves 'lock' behind when the building process is killed; the next build used to
    wait on it for ever (seen: a test run hung for 15 minutes)."""
    import types

    import torch.utils.cpp_extension as cpp

    from ascendify.run import shim

    monkeypatch.setenv("ASCENDIFY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(shim, "_MODULE", [])
    d = shim.cache_dir()
    os.makedirs(d)
    open(os.path.join(d, "lock"), "w").close()   # the killed build's baton
    seen = []

    def fake_load(name, sources, build_directory, **kw):
        seen.append(os.path.exists(os.path.join(build_directory, "lock")))
        so = os.path.join(build_directory, name + ".so")
        open(so, "w").close()
        return types.SimpleNamespace(__file__=so)

    monkeypatch.setattr(cpp, "load", fake_load)
    so = shim.build()
    assert seen == [False]
    assert so == os.path.join(d, shim.NAME + ".so")
    assert shim.cached_library() == so   # the stamp records it: the next start builds nothing
