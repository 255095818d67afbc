"""``ascendify export``: ONNX for ATC, validated, with the matching atc command.

Exit codes: 0 exported and onnxruntime parity passed; 1 exported but parity or a
profile run failed; 2 usage / export error (one line on stderr).
"""

from __future__ import annotations

import sys
from typing import Any, Optional

import click

from ascendify.errors import AscendifyError
from ascendify.termtable import KEEP, wrap_prose
from ascendify.options import (check_writable, chip_option, deprecated_option, deprecated_value, deprecation, emit, emit_rendered, envelope, input_option,
                               report_options)

@click.command("export")
@click.argument("factory")
@input_option("NAME:d0,d1,...[:dtype[:lo..hi]]; -1 marks a dynamic dim, lo~hi a shape range. Repeat per input.", required=True)
@click.option("--onnx", "onnx_path", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="ONNX file to write (the atc script, report and AIPP config go beside it).")
@click.option("--dynamic-batch", help="Batch profiles, e.g. 1,2,4,8 (-1 on axis 0 only).")
@click.option("--dynamic-image-size", help="H,W profiles, e.g. '224,224;448,448' (-1 on H and W).")
@click.option("--dynamic-dims", help="ND profiles filling every -1 in input order, e.g. '32,32;64,64'.")
@click.option("--normalize", help="MEAN;STD (e.g. '0.485,0.456,0.406;0.229,0.224,0.225' or 'imagenet'): "
              "normalise inside the graph, or with --aipp in an AIPP config.")
@click.option("--aipp", is_flag=True, help="Write an AIPP config (--insert_op_conf) for --normalize instead of changing the graph.")
@click.option("--aipp-input", help="Input fed by AIPP / normalised (default: the first 4-D input).")
@click.option("--pixel-scale", type=float, help="Pixel scale before normalising (default 1/255 for uint8 inputs and AIPP, else 1).")
@click.option("--layout", type=click.Choice(["NCHW", "NHWC"], case_sensitive=False), default="NCHW", show_default=True,
              help="Layout of the exported image input (NHWC + --normalize transposes inside the graph).")
@click.option("--opset", type=int, default=11, show_default=True, help="ONNX opset (ATC: 11 recommended, <= 17).")
@chip_option("ATC --soc_version, e.g. Ascend910B3 (from npu-smi info).")
@deprecated_option("--soc-version", dest="chip", new="--chip SOC", default=None)
@click.option("--precision-mode", default="force_fp16", show_default=True, help="ATC --precision_mode.")
@click.option("--output-names", help="Comma list of ONNX output names (default output / output0, output1, ...).")
@click.option("--parity-cosine", type=float, default=0.9999, show_default=True, help="onnxruntime vs PyTorch cosine required.")
@report_options(output_help="Write the report to this file instead of standard output.  A value ending in .onnx is "
                            "taken as --onnx (what -o used to mean), with a note.")
@deprecated_option("--json", dest="json_flag", new="--format json", is_flag=True, default=False)
def export(factory: str, inputs: tuple[str, ...], onnx_path: Optional[str], dynamic_batch: Optional[str], dynamic_image_size: Optional[str],
           dynamic_dims: Optional[str], normalize: Optional[str], aipp: bool, aipp_input: Optional[str],
           pixel_scale: Optional[float], layout: str, opset: int, chip: Optional[str], precision_mode: str,
           output_names: Optional[str], parity_cosine: float, fmt: str, output_file: Optional[str]) -> int:
    """Export FACTORY (pkg.module:factory) to ONNX for ATC and print the atc command.

    Example: ascendify export mypkg.nets:resnet --input "x:-1,3,224,224:float32"
    --dynamic-batch 1,2,4,8 --normalize imagenet --chip Ascend910B3 --onnx resnet.onnx
    """
    import json

    from ascendify.compare.samples import parse_mean_std
    from ascendify.export.atc import parse_input
    from ascendify.export.exporter import export_model

    soc_version = deprecated_value("chip", chip)
    if output_file and output_file.lower().endswith(".onnx") and not onnx_path:
        deprecation("-o/--output FILE.onnx", "--onnx FILE.onnx (-o now names the report file)")
        onnx_path, output_file = output_file, None
    if not onnx_path:
        raise AscendifyError("export needs the ONNX file to write: --onnx FILE.onnx")
    check_writable(onnx_path, "--onnx")  # before the export, not after minutes of it
    if deprecated_value("json_flag", False) and fmt == "text":
        fmt = "json"
    out = onnx_path
    specs = [parse_input(t) for t in inputs]
    norm = parse_mean_std(normalize) if normalize else None
    res = export_model(factory, specs, out, batch=dynamic_batch, image_size=dynamic_image_size, dims=dynamic_dims,
                       normalize=norm, aipp=aipp, aipp_input=aipp_input, opset=opset, soc_version=soc_version,
                       precision_mode=precision_mode, layout=layout, pixel_scale=pixel_scale,
                       output_names=[s.strip() for s in output_names.split(",")] if output_names else None,
                       parity_cosine=parity_cosine)
    if fmt == "json":
        emit(json.dumps(envelope("export", res.as_dict()), indent=1) + "\n", output_file)
        return 0 if res.ok else 1
    emit_rendered(_print, output_file, res)
    return 0 if res.ok else 1


def _print(res: Any) -> None:
    def w(line: str = "") -> None:  # each line wrapped at spaces to the terminal; paths and URLs stay whole
        for ln in wrap_prose(line) if line else [""]:
            click.echo(ln)
    w(f"wrote {res.onnx_path} (opset {res.opset}; inputs {', '.join(res.input_names)}; outputs {', '.join(res.output_names)})")
    for name, p in res.parity.get("outputs", {}).items():
        w(f"onnxruntime vs PyTorch, {name}: cosine {p['cosine']:.8f}, max_abs {p['max_abs']:.3g} "
          f"{'PASS' if p['pass'] else 'FAIL'}{KEEP}(>={KEEP}{res.parity['threshold_cosine']})")
    if "aipp_check" in res.parity:
        a = res.parity["aipp_check"]
        w(f"AIPP config applied to uint8 pixels vs PyTorch normalisation: cosine {a['cosine']:.8f}, "
          f"max_abs {a['max_abs']:.3g} {'PASS' if a['pass'] else 'FAIL'}")
    bad = [r for r in res.profile_runs if not r["ok"]]
    w(f"onnxruntime ran {len(res.profile_runs) - len(bad)}/{len(res.profile_runs)} profile(s)")
    for r in bad:
        w(f"  FAIL at {r['shapes']}: {r['error']}")
    infos = [f["op_type"] for f in res.findings if f["level"] == "info"]
    if infos:
        w(f"info: notes for {', '.join(infos)} in {res.report_path}")
    for f in res.findings:
        if f["level"] == "info":
            continue
        nodes = f" (e.g. {', '.join(f['nodes'][:2])})" if f.get("nodes") else ""
        tag = "" if f.get("verified", True) else " [unverified]"
        w(f"{f['level']}: {f['message']}{nodes}{tag}")
    if res.aipp_path:
        w(f"wrote {res.aipp_path}")
    w(f"wrote {res.script_path} and {res.report_path}")
    w("")
    click.echo(res.command)  # the atc command stays one line, to copy
    w("")
    for n in res.notes:
        w(f"note: {n}")
    if not res.ok:
        click.echo("FAIL: the exported model does not match PyTorch (see above)", err=True)
    sys.stdout.flush()
