"""`ascendify run`'s loss-scaling line says what the program chose (a GradScaler built with
enabled=False, or none) apart from a real problem (torch disabled the program's scaler, float16 autocast
without one): issue 22's new-user trial read "loss scaling: OFF" as an alarm for a program that never
asked for scaling.  Torch-free: the report is built from events."""

from __future__ import annotations

from ascendify.run import report as rep

FR = {"file": "/p/train.py", "line": 40, "function": "train", "code": ""}


def _text(*events) -> str:
    evs = [{"kind": "start", "t": 0, "rank": None}, *events, {"kind": "end", "t": 9, "exit_code": 0}]
    doc = rep.build({1: evs}, exit_code=0, command=["python", "train.py"], cwd="/p", project_root="/p",
                    emulated={"torch_npu": "2.7.1", "chip": "Ascend910B3", "devices": 8})
    return rep.render_text(doc)


def _scaler(device: str, enabled: bool, requested: bool, steps: int = 3):
    return ({"kind": "gradscaler", "t": 1, "event": "init", "device_type": device, "enabled": enabled,
             "requested": requested, "user_frame": FR},
            {"kind": "gradscaler", "t": 2, "event": "counts", "constructed": 1, "steps": steps, "updates": steps})


def _autocast(device: str, dtype, disabled: bool, requested: bool, switched_off: bool, reason=None):
    return {"kind": "autocast", "t": 1, "device_type": device, "dtype": dtype, "disabled": disabled,
            "requested": requested, "switched_off": switched_off, "reason": reason, "user_frame": dict(FR, line=30)}


def _line(text: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith("loss scaling"))


def test_a_scaler_the_program_built_disabled_is_its_choice():
    line = _line(_text(*_scaler("npu", enabled=False, requested=False)))
    assert line == ("loss scaling: off (the program chose it: GradScaler('npu', enabled=False) at train.py:40 in train; "
                    "its 3 step(s) ran unscaled)")
    assert "OFF" not in line


def test_no_scaler_where_autocast_switched_itself_off_is_the_programs_choice():
    line = _line(_text(_autocast("cuda", None, disabled=True, requested=True, switched_off=True, reason="cuda_unavailable")))
    assert line == "loss scaling: off (the program does not use a GradScaler)"


def test_a_scaler_torch_disabled_is_still_a_problem():
    line = _line(_text(*_scaler("cuda", enabled=False, requested=True, steps=1)))
    assert line == ("loss scaling: OFF -- GradScaler('cuda') at train.py:40 in train is disabled (CUDA is absent on an "
                    "Ascend host: torch disabled it); its 1 step(s) ran unscaled")


def test_float16_autocast_without_a_scaler_is_still_said():
    line = _line(_text(_autocast("npu", "torch.float16", disabled=False, requested=True, switched_off=False)))
    assert line.startswith("loss scaling: no GradScaler (autocast npu -> float16 at ") and "trains without a loss scale" in line


def test_no_amp_and_no_scaler_says_nothing():
    assert "loss scaling" not in _text()
