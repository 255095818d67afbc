"""Field-trial findings (issue 23) about AMP and RNG: every autocast call site and who turned it off,
GradScaler construction and step counts, GradScaler's own float64 not blamed on the program, --cpu-rng."""

from __future__ import annotations

import json

import pytest

from ascendify.run import report as rep
from tests.run.emu_helpers import MODES, PROGRAMS, line_of, run_emu, shim_built  # noqa: F401 - fixture

P = "amp_trial.py"


def _doc(res):
    by_pid: dict = {}
    for e in res.events:
        by_pid.setdefault(0, []).append(e)
    return rep.build(by_pid, exit_code=res.rc, command=["python", P], cwd=PROGRAMS, project_root=PROGRAMS,
                     emulated={"torch_npu": "2.7.1", "chip": "Ascend910B3", "devices": 4})


@pytest.mark.parametrize("mode", MODES)
def test_each_autocast_site_and_who_switched_it_off_and_an_active_scaler(tmp_path, mode, shim_built):  # noqa: F811
    res = run_emu(tmp_path, P, "scaler", mode=mode, torch_npu="2.12.0.post3")  # its KB lacks float64 reciprocal
    assert res.rc == 0, res.err[-3000:]
    cuda = [e for e in res.kind("autocast") if e["device_type"] == "cuda"]
    sites = {e["user_frame"]["line"]: (e["requested"], e["switched_off"], e["reason"]) for e in cuda}
    assert sites == {line_of(P, "# SITE-A"): (True, True, "cuda_unavailable"),
                     line_of(P, "# SITE-B"): (True, True, "cuda_unavailable"),
                     line_of(P, "# SITE-OFF"): (False, False, None)}
    # torch's own warning still names the program's line, not the emulator's wrapper
    assert f"amp_trial.py:{line_of(P, '# SITE-A')}: UserWarning: CUDA is not available" in res.err
    init = [e for e in res.kind("gradscaler") if e["event"] == "init"]
    assert [(e["device_type"], e["enabled"], e["user_frame"]["line"]) for e in init] == \
        [("npu", True, line_of(P, "# SITE-SCALER"))]
    counts = [e for e in res.kind("gradscaler") if e["event"] == "counts"]
    assert [(e["steps"], e["updates"]) for e in counts] == [(3, 3)]
    # GradScaler's _unscale_grads_ runs self._scale.double().reciprocal(): torch's, not a program finding
    assert [(e["op"], e["user_frame"]["line"]) for e in res.kind("dtype")] == \
        [("aten::reciprocal", line_of(P, "# SITE-F64"))]
    text = rep.render_text(_doc(res))
    a, b, off = (line_of(P, m) for m in ("# SITE-A", "# SITE-B", "# SITE-OFF"))
    assert f"AMP requested for cuda at amp_trial.py:{a} in <module>, amp_trial.py:{b} in <module> and switched off" in text
    assert f"cuda autocast disabled by the program (enabled=False) at amp_trial.py:{off}" in text
    assert "loss scaling: active (3 step(s), 0 skipped;" in text


def test_no_scaler_and_a_disabled_cuda_scaler_read_differently(tmp_path, shim_built):  # noqa: F811
    none = run_emu(tmp_path, P, "plain", mode="shim")
    assert none.rc == 0, none.err[-3000:]
    assert [e for e in none.kind("gradscaler")] == []
    text = rep.render_text(_doc(none))
    assert f"loss scaling: no GradScaler (autocast npu -> float16 at amp_trial.py:{line_of(P, '# SITE-PLAIN')}" in text
    cuda = run_emu(tmp_path, P, "cudascaler", mode="shim")
    assert cuda.rc == 0, cuda.err[-3000:]
    init = [e for e in cuda.kind("gradscaler") if e["event"] == "init"]
    assert [(e["device_type"], e["enabled"], e["requested"]) for e in init] == [("cuda", False, True)]
    text = rep.render_text(_doc(cuda))
    assert (f"loss scaling: OFF -- GradScaler('cuda') at amp_trial.py:{line_of(P, '# SITE-CUDASCALER')} in <module> "
            "is disabled (CUDA is absent on an Ascend host: torch disabled it); its 1 step(s) ran unscaled") in text


def _draws(out: str) -> dict:
    return {ln.split(" ", 1)[0]: json.loads(ln.split(" ", 1)[1]) for ln in out.splitlines()
            if ln.startswith(("DROP", "RAND"))}


@pytest.mark.parametrize("mode", MODES)
def test_cpu_rng_makes_npu_draws_those_of_a_plain_cpu_run(tmp_path, mode, shim_built):  # noqa: F811
    import torch

    torch.manual_seed(0)
    torch.nn.Linear(4, 4)
    x = torch.ones(8)
    cpu = {"DROP": torch.nn.functional.dropout(x, 0.5).tolist(), "RAND": torch.rand(3).tolist()}
    cpu["RAND2"] = torch.rand(3).tolist()   # torch.cuda.manual_seed(123) does not touch the CPU generator
    one = run_emu(tmp_path, P, "rng", mode=mode, cpu_rng=True)
    assert one.rc == 0, one.err[-3000:]
    assert _draws(one.out) == cpu
    own = run_emu(tmp_path, P, "rng", mode=mode)   # default: the npu has its own generator, as a card
    assert own.rc == 0, own.err[-3000:]
    own_draws = _draws(own.out)
    assert own_draws["DROP"] != cpu["DROP"] and own_draws["RAND2"] != cpu["RAND2"]


def test_an_active_scaler_beside_autocast_switched_off_is_said():
    """yolov5 on an Ascend host: GradScaler('npu') steps while its only autocast ('cuda') switched itself off."""
    fr = {"file": "/p/train.py", "line": 401, "function": "train", "code": ""}
    events = [{"kind": "start", "t": 0, "rank": None},
              {"kind": "autocast", "t": 1, "device_type": "cuda", "dtype": None, "disabled": True, "requested": True,
               "switched_off": True, "reason": "cuda_unavailable", "user_frame": fr},
              {"kind": "gradscaler", "t": 1, "event": "init", "device_type": "npu", "enabled": True, "requested": True,
               "user_frame": dict(fr, line=344)},
              {"kind": "gradscaler", "t": 2, "event": "counts", "constructed": 1, "steps": 2, "updates": 2},
              {"kind": "end", "t": 3, "exit_code": 0}]
    doc = rep.build({1: events}, exit_code=0, command=["python", "train.py"], cwd="/p", project_root="/p",
                    emulated={"torch_npu": "2.7.1", "chip": "Ascend910B3", "devices": 8})
    text = rep.render_text(doc)
    assert "AMP requested for cuda at train.py:401 in train and switched off" in text
    assert ("loss scaling: active (2 step(s), 0 skipped; GradScaler('npu') at train.py:344 in train) -- but no "
            "autocast was on (switched off above): it scales fp32 training") in text
