"""``ascendify probe``: model mode and script mode (see docs/ops-and-probe.md)."""

from __future__ import annotations

import json
from typing import Optional

import click

from ascendify.options import chip_option, deprecated_option, deprecated_value, emit, emit_rendered, envelope, input_option, report_options, torch_npu_option

@click.command("probe", context_settings={"ignore_unknown_options": False})
@click.argument("target", required=False)
@click.argument("script_args", nargs=-1, type=click.UNPROCESSED)
@input_option("Model input name:d0,d1,...[:dtype[:lo..hi]], e.g. x:2,3,224,224:float32, ids:2,16:int64:0..999 (integers: both ends included; the old low-high excludes high). Repeatable.")
@click.option("--input2", "inputs2", multiple=True, metavar="SPEC", help="A second input set for the dynamic-shape run.")
@click.option("--vary", type=click.Choice(["batch", "spatial", "seq"]), help="Derive the second input set.")
@click.option("--train", is_flag=True, help="Also run backward (loss = mean of the float outputs).")
@click.option("--device", type=click.Choice(["cpu", "meta"]), default="cpu", show_default=True,
              help="meta: no data (fast, big models) — data-dependent ops cannot run there.")
@click.option("--run", "run_script", metavar="SCRIPT", help="Script mode: run SCRIPT with the npu device mapped onto the CPU; "
              "script arguments go after --.")
@click.option("--max-seconds", type=float, default=60.0, show_default=True, help="Script mode: stop after this long.")
@click.option("--max-steps", type=int, default=3, show_default=True,
              help="Script mode: stop after this many optimizer steps (backward calls if there is no optimizer).")
@torch_npu_option()
@chip_option("soc_version, e.g. Ascend910B3 (bf16, hardware columns, JIT default).")
@click.option("--cann", metavar="VER", help="CANN version for the AI_CPU dtype rules (default: newest rule set).")
@click.option("--fallback-disabled", is_flag=True,
              help="Treat CPU fallbacks as errors, as torch_npu does with TORCH_NPU_FALLBACK_CPU_DISABLE=1 "
                   "(default: follow that variable in this environment).")
@click.option("--all-ops", is_flag=True, help="Text output: list every recorded op.")
@report_options()
@deprecated_option("--output", dest="json_copy", new="-o FILE.json (the report in --format, json from the suffix)",
                   type=click.Path(dir_okay=False), default=None)
def probe(target: Optional[str], script_args: tuple, inputs: tuple, inputs2: tuple, vary: Optional[str], train: bool,
          device: str, run_script: Optional[str], max_seconds: float, max_steps: int, torch_npu: Optional[str],
          chip: Optional[str], cann: Optional[str], fallback_disabled: bool, all_ops: bool, fmt: str,
          output_file: Optional[str]) -> int:
    """Run a model (TARGET = pkg.module:factory) or a script (--run script.py -- ARGS) on the CPU,
    record every aten overload it dispatches, and classify each against the NPU KB for --torch-npu
    and --chip: CPU fallbacks, AI_CPU dtype risks, float64/complex, bf16, deprecated APIs, dynamic
    shapes.  Never writes into the user's files.  Exit 1 if a finding is an error or the run failed.
    """
    from ascendify.ops_cli import default_release
    from ascendify.probe import run as prun
    if not torch_npu:
        torch_npu, _ = default_release()
    if run_script:
        if target:
            script_args = (target,) + tuple(script_args)
        result = prun.probe_script(run_script, list(script_args), torch_npu=torch_npu, chip=chip, cann=cann,
                                   max_seconds=max_seconds, max_steps=max_steps,
                                   fallback_disabled=fallback_disabled or None)
    else:
        if not target:
            raise click.UsageError("give a model factory (pkg.module:factory) or --run SCRIPT")
        if script_args:
            raise click.UsageError(f"unexpected arguments {' '.join(script_args)} (script arguments need --run)")
        from ascendify.probe.spec import SpecError
        try:
            result = prun.probe_model(target, list(inputs), list(inputs2), vary=vary, train=train, device=device,
                                      torch_npu=torch_npu, chip=chip, cann=cann,
                                      fallback_disabled=fallback_disabled or None)
        except SpecError as exc:
            raise click.BadParameter(str(exc), param_hint="--input")
    json_copy = deprecated_value("json_copy", None)
    if json_copy:  # the old --output: a JSON copy beside the printed report
        emit(json.dumps(result, ensure_ascii=False, indent=1) + "\n", json_copy)
    if fmt == "json":
        emit(json.dumps(envelope("probe", result), ensure_ascii=False, indent=1) + "\n", output_file)
    else:
        from ascendify.probe.report import render_text
        emit_rendered(render_text, output_file, result, all_ops=all_ops)
    bad = result.get("error") or any(f["severity"] == "error" for f in result["classification"]["findings"])
    return 1 if bad else 0
