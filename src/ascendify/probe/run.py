"""Glue for ``ascendify probe``: model mode and script mode → one JSON-able result."""

from __future__ import annotations

from typing import Optional

from ascendify.errors import AscendifyError
from ascendify.kb import ops as kbops
from ascendify.probe import dynamic
from ascendify.probe.classify import classify
from ascendify.probe.report import verdict
from ascendify.probe.spec import SpecError, parse_spec, vary as vary_specs


def _release(torch_npu: Optional[str]) -> "tuple[str, Optional[str]]":
    try:
        return kbops.resolve_release(torch_npu)
    except ValueError as exc:
        raise AscendifyError(f"--torch-npu: {exc}") from None


def probe_model(target: str, inputs: list, inputs2: list, *, vary: Optional[str] = None, train: bool = False,
                device: str = "cpu", torch_npu: Optional[str] = None, chip: Optional[str] = None,
                cann: Optional[str] = None, fallback_disabled: Optional[bool] = None) -> dict:
    """Model mode (see :mod:`ascendify.probe`).  Raises :class:`SpecError` for bad ``--input`` specs and
    :class:`AscendifyError` when the factory cannot be imported or built."""
    from ascendify.probe.model import build_model, prepare, run_once
    if not inputs:
        raise SpecError("--input is required in model mode, e.g. --input x:2,3,224,224:float32")
    specs = [parse_spec(s) for s in inputs]
    if len({s.name for s in specs}) != len(specs):
        raise SpecError("--input names must be distinct")
    specs2 = None
    if inputs2:
        specs2 = [parse_spec(s) for s in inputs2]
        if [s.name for s in specs2] != [s.name for s in specs]:
            raise SpecError("--input2 must give the same input names, in the same order, as --input")
    elif vary:
        specs2 = vary_specs(specs, vary)
    release, _ = _release(torch_npu)
    model = prepare(build_model(target), device, train)
    first = run_once(model, specs, train=train, device=device, release=release)
    second = None
    if specs2 is not None and first["error"] is None:
        second = run_once(model, specs2, train=train, device=device, release=release, seed=1)
    cl = classify(first["records"], torch_npu, chip=chip, cann=cann, fallback_disabled=fallback_disabled)
    dd = dynamic.data_dependent(first["records"])
    dyn = {"data_dependent": dd}
    if second is not None:
        dyn["comparison"] = dynamic.compare_runs(first["records"], second["records"])
        chip_obj = None
        if chip:
            try:
                from ascendify.kb.chips import chip_info
                chip_obj = chip_info(chip)
            except ImportError:
                pass
        dyn["atc"] = dynamic.atc_advice(specs, specs2, dd, chip_obj)
        if second["error"]:
            dyn["second_run_error"] = second["error"]
    result = {
        "mode": "model" + (" (forward+backward)" if train else " (forward)") + (f", device {device}" if device != "cpu" else ""),
        "target": target, "inputs": [s.text() for s in specs],
        "inputs2": [s.text() for s in specs2] if specs2 else None,
        "error": first["error"], "seconds": round(first["seconds"], 3),
        "ops": first["records"], "classification": cl, "dynamic": dyn, "warnings": [],
    }
    result["verdict"] = verdict(result)
    return result


def probe_script(script: str, args: list, *, torch_npu: Optional[str] = None, chip: Optional[str] = None,
                 cann: Optional[str] = None, max_seconds: float = 60.0, max_steps: int = 3,
                 fallback_disabled: Optional[bool] = None) -> dict:
    """Script mode: run ``script`` in a child process with the npu emulation (see :mod:`.script`)."""
    from ascendify.probe.script import run_script
    release, _ = _release(torch_npu)
    child = run_script(script, args, release=release, max_seconds=max_seconds, max_steps=max_steps)
    cl = classify(child["records"], torch_npu, chip=chip, cann=cann, fallback_disabled=fallback_disabled)
    from ascendify.kb import apis as kbapis
    cuda = [u for u in child.get("emulation", {}).get("used", []) if u.startswith("device cuda")]
    if cuda:
        cl["findings"].append({
            "kind": "cuda_device", "severity": "warning", "op": "cuda", "lines": [], "apis": [], "phases": [],
            "message": "the script still puts tensors on the cuda device (mapped to the CPU here); on an Ascend host "
                       "that fails — run `ascendify fix --target npu` or `ascendify scan --select DEV`",
            "source": "ascendify probe emulation", "recipe": None})
    for used in child.get("emulation", {}).get("used", []):
        if used.endswith("(not emulated)"):
            api = used.split(" ")[0]
            dep = kbapis.deprecated(api)
            cl["findings"].append({
                "kind": "deprecated" if dep else "not_emulated", "severity": "warning" if dep else "info",
                "op": api, "lines": [child["error"]["line"]] if child.get("error") and api in child["error"].get("message", "") else [],
                "apis": [api], "phases": [],
                "message": (f"{api} is deprecated" + (f"; use {dep['replace']}" if dep.get("replace") else "")) if dep
                else f"{api} is a torch_npu custom op: runs only on the NPU (not emulated on the CPU)",
                "source": dep["source"] if dep else "ascendify probe emulation", "recipe": dep.get("replace") if dep else None})
    dd = dynamic.data_dependent(child["records"])
    result = {
        "mode": "script", "target": script, "args": args, "inputs": None, "inputs2": None,
        "error": child.get("error"), "seconds": child.get("seconds"), "ops": child["records"],
        "classification": cl, "dynamic": {"data_dependent": dd}, "warnings": child.get("warnings", []),
        "emulation": child.get("emulation", {}), "stdout_tail": child.get("stdout_tail", ""),
    }
    result["verdict"] = verdict(result)
    return result
