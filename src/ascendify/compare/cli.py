"""``ascendify baseline`` and ``ascendify compare`` commands.

Exit codes: 0 all outputs pass, 1 some output fails a monitor (or is missing),
2 usage / input error (one line on stderr).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any, Optional

import click

from ascendify import __version__
from ascendify.errors import AscendifyError
from ascendify.options import (deprecated_option, deprecated_value, deprecation, emit, emit_rendered, envelope, jobs_option,
                               plot_option, report_options)


def _fmt(v: Any, digits: int = 6) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return f"{v:.{digits}g}"
    return str(v)


def _console() -> Any:
    from ascendify.termtable import report_console

    return report_console()  # the terminal's width (tables switch to a list when they do not fit)


def _emit_json(data: Any, output_file: Optional[str]) -> None:
    emit(json.dumps(envelope("compare", data), indent=1, allow_nan=False) + "\n", output_file)


def _write_json(path: str, data: Any) -> None:
    from ascendify.fsutil import atomic_write

    atomic_write(path, (json.dumps(data, indent=1, allow_nan=False) + "\n").encode("utf-8"))


def _parse_bin_shapes(items: tuple[str, ...], dtype: Optional[str]) -> Optional[dict[str, Any]]:
    if not items and not dtype:
        return None
    spec: dict[str, Any] = {}
    for it in items:
        name, _, shp = it.rpartition(":")
        try:
            shape = [int(s) for s in shp.split(",") if s.strip()]
        except ValueError:
            raise AscendifyError(f"--bin-shape '{it}': give [NAME:]d0,d1,... with integers") from None
        spec[name or "*"] = {"shape": shape, "dtype": dtype or "float32"}
    if dtype and "*" not in spec:
        spec["*"] = {"dtype": dtype}
    for v in spec.values():
        try:
            import numpy as np

            np.dtype(v.get("dtype", "float32"))
        except TypeError:
            raise AscendifyError(f"--bin-dtype '{v.get('dtype')}' is not a numpy dtype (e.g. float32, float16, int64)") from None
    return spec


@click.command("baseline")
@click.argument("model")
@click.option("--data", required=True, help="Folder (or file) of .npy / .npz / image inputs.")
@click.option("--npz", "npz_path", type=click.Path(dir_okay=False), default=None, metavar="FILE", help="Baseline .npz to write.")
@report_options(output_help="Write the summary to this file.  A value ending in .npz is taken as "
                            "--npz (what -o used to mean), with a note.")
@click.option("--input-names", help="Comma list of input names for a PyTorch factory (default: forward() parameters).")
@click.option("--output-names", help="Comma list naming the model's outputs in order.")
@click.option("--image-size", help="Images: resize to H,W.")
@click.option("--normalize", help="MEAN;STD or 'imagenet': normalise images (after /255) and 4-D .npy inputs "
              "(taken as 0..1), as a graph exported with --normalize does.")
@click.option("--layout", type=click.Choice(["NCHW", "NHWC"], case_sensitive=False), default="NCHW", show_default=True,
              help="Images: layout of the model input.")
@click.option("--raw-pixels", is_flag=True, help="Images: feed uint8 NHWC pixels unchanged (AIPP models).")
@click.option("--limit", type=int, help="Use only the first N samples.")
def baseline(model: str, data: str, npz_path: Optional[str], fmt: str, output_file: Optional[str], input_names: Optional[str], output_names: Optional[str],
             image_size: Optional[str], normalize: Optional[str], layout: str, raw_pixels: bool, limit: Optional[int]) -> int:
    """Record the outputs of MODEL (pkg.module:factory or model.onnx) over --data.

    Each output is stored as "<sample>/<output>" in the .npz, with the input file it came
    from in the "__ascendify__" record.
    """
    from ascendify.compare.baseline import record_baseline
    from ascendify.compare.samples import Preprocess, parse_mean_std

    if output_file and output_file.lower().endswith(".npz") and not npz_path:
        deprecation("-o/--output FILE.npz", "--npz FILE.npz (-o now names the report file)")
        npz_path, output_file = output_file, None
    if not npz_path:
        raise AscendifyError("baseline needs the .npz file to write: --npz FILE.npz")
    from ascendify.options import check_writable

    check_writable(npz_path, "--npz")
    out = npz_path
    pre = None
    if image_size or normalize or raw_pixels or layout.upper() != "NCHW":
        size = None
        if image_size:
            try:
                h, w = (int(v) for v in image_size.split(","))
            except ValueError:
                raise AscendifyError(f"--image-size '{image_size}': give H,W") from None
            size = (h, w)
        mean = std = None
        if normalize:
            mean, std = parse_mean_std(normalize)
        pre = Preprocess(size=size, mean=mean, std=std, layout=layout.upper(), raw=raw_pixels)
    meta = record_baseline(model, data, out,
                           input_names=[s.strip() for s in input_names.split(",")] if input_names else None,
                           output_names=[s.strip() for s in output_names.split(",")] if output_names else None,
                           pre=pre, limit=limit)
    nonfinite = [(s["sample"], o) for s in meta["samples"] for o, d in s["outputs"].items() if d["nonfinite"]]
    if fmt == "json":
        emit(json.dumps({"tool": "ascendify", "version": __version__, "command": "baseline", "npz": out, "model": model, "kind": meta["kind"],
                         "samples": len(meta["samples"]), "outputs": list(meta["outputs"]),
                         "nonfinite": [f"{a}/{b}" for a, b in nonfinite]}, indent=1) + "\n", output_file)
        return 0
    emit_rendered(_baseline_text, output_file, out, meta, model, nonfinite)
    return 0


def _baseline_text(out: str, meta: dict, model: str, nonfinite: list) -> None:
    con = _console()
    con.print(f"wrote {out}: {len(meta['samples'])} samples × {len(meta['outputs'])} outputs "
              f"({', '.join(meta['outputs'])}) from {meta['kind']} model {model}", markup=False)
    if nonfinite:
        from rich.markup import escape

        con.print(f"[yellow]warning:[/] baseline has NaN/Inf in {len(nonfinite)} output(s), e.g. "
                  f"{escape(nonfinite[0][0])}/{escape(nonfinite[0][1])}: a baseline should be finite; check the model or inputs")


_SHOW = ("cosine", "max_abs", "max_rel", "mean_rel", "rel_euclid", "kl", "mae", "rmse")


@click.command("compare")
@click.argument("baseline_path", metavar="[BASELINE]", required=False)
@click.argument("candidate_path", metavar="[CANDIDATE]", required=False)
@click.option("--metric", "metric_opts", multiple=True,
              help="Monitors to check (repeat or comma list): cosine, max_abs, max_rel, mean_rel, acc_rel, rel_euclid, kl, mae, rmse.")
@click.option("--thresholds", help="Override thresholds, e.g. 'cosine=0.999,rmse=0.1' ('kl=off' drops a monitor).")
@report_options("csv", output_help="Write the report to this file instead of standard output (json: the full report; csv: only the rows, "
                                   "msit's columns with --layers, where csv needs -o).")
@deprecated_option("--json", dest="json_file", new="--format json -o FILE", type=click.Path(dir_okay=False), default=None)
@plot_option("Write the error distribution per output (.svg or .png).")
@click.option("--per-sample", is_flag=True, help="Print every sample row, not only the failing ones.")
@click.option("--bin-shape", multiple=True, help="Raw .bin shape, [NAME:]d0,d1,... (else sidecar JSON or the baseline's shape).")
@click.option("--bin-dtype", help="Raw .bin dtype (default float32).")
@jobs_option("Compare this many tensors at once (default: CPU count, at most 4).")
@click.option("--layers", "layers_model", help="Layer-wise mode: ONNX model to run in fp32 and emulated fp16.")
@click.option("--data", help="--layers: input folder/file (.npy/.npz/image); the first sample is used.")
@click.option("--sample", "sample_name", help="--layers: use this sample (name relative to --data).")
@click.option("--npu-dump", help="--layers: folder of dumped NPU tensors (.npy/.npz/.bin) named after ONNX nodes/tensors.")
@click.option("--keep-dtype-file", help="--layers: write the suggested --keep_dtype node list here.")
@click.option("--top", type=int, default=10, show_default=True, help="--layers: rows to print around the first invalid node.")
@click.option("--csv", "csv_out", type=click.Path(dir_okay=False), metavar="FILE", help="Also write the rows as CSV (with --layers: msit's result CSV columns).")
def compare(baseline_path: Optional[str], candidate_path: Optional[str], metric_opts: tuple[str, ...],
            thresholds: Optional[str], fmt: str, output_file: Optional[str], plot: Optional[str], per_sample: bool,
            bin_shape: tuple[str, ...], bin_dtype: Optional[str], jobs: Optional[int], layers_model: Optional[str],
            data: Optional[str], sample_name: Optional[str], npu_dump: Optional[str], keep_dtype_file: Optional[str],
            top: int, csv_out: Optional[str]) -> int:
    """Compare CANDIDATE outputs with BASELINE (cosine similarity, errors, KL...).

    BASELINE / CANDIDATE: .npz, .npy, a folder of .npy/.bin/.npz, .safetensors, or .pt
    (weights_only). Default monitors and thresholds are msit's: cosine >= 0.99,
    rel_euclid <= 0.05, kl <= 0.005, rmse <= 1.0, mean_rel <= 1.0.
    """
    from ascendify.compare import metrics as M

    json_out = deprecated_value("json_file", None)
    if fmt == "csv" and layers_model and not output_file:
        raise AscendifyError("compare --layers --format csv needs -o FILE.csv (msit's result CSV); or keep the text report and add --csv FILE")
    chosen: list[str] = []
    for m in metric_opts:
        chosen += [M.metric_name(x) for x in m.split(",") if x.strip()]
    th = M.parse_thresholds(thresholds)
    for m in chosen:
        if m not in th:
            raise AscendifyError(f"--metric {m} has no default threshold; give one with --thresholds {m}=VALUE")
    if layers_model:
        # per-layer default monitor: cosine only (KL / relative distance of near-zero tensors such as
        # LayerNorm means are dominated by fp16 rounding); --metric / --thresholds add more
        lth = {"cosine": th["cosine"]} if "cosine" in th else {}
        if thresholds:
            lth = M.parse_thresholds(thresholds, lth)
        if chosen:
            lth = {k: th[k] for k in chosen}
        lrep, used = _layer_report(layers_model, data, sample_name, npu_dump, lth, json_out, keep_dtype_file, csv_out)
        if fmt == "json":
            _emit_json(lrep.as_dict(), output_file)
        elif fmt == "csv":  # -o is required here (checked above): msit's result CSV
            from ascendify.compare.layers import write_msit_csv

            write_msit_csv(output_file, lrep)
        else:
            emit_rendered(_print_layers, output_file, lrep, layers_model, used, keep_dtype_file, top)
        return 0 if lrep.verdict == "PASS" else 1
    if not baseline_path or not candidate_path:
        raise AscendifyError("compare needs BASELINE and CANDIDATE (or --layers MODEL.onnx --data DIR)")
    from ascendify.compare.engine import compare_collections
    from ascendify.compare.io import open_collection

    bspec = _parse_bin_shapes(bin_shape, bin_dtype)
    base = open_collection(baseline_path, bspec)
    cand = open_collection(candidate_path, bspec)
    if not jobs:
        jobs = min(4, os.cpu_count() or 1)
    rep = compare_collections(base, cand, th, chosen or None, want_hist=bool(plot), jobs=jobs, bin_dtype=bin_dtype)
    if fmt == "json":
        _emit_json(rep.as_dict(), output_file)
    elif fmt == "csv":  # the rows are the report: to the -o file, else to standard output
        emit(_rows_csv(rep), output_file)
    else:
        emit_rendered(_print_report, output_file, rep, per_sample)
    if json_out:
        _write_json(json_out, rep.as_dict())
    if csv_out:
        _write_rows_csv(csv_out, rep)
    if plot:
        from ascendify.compare.plot import plot_error_hist

        plot_error_hist(rep.outputs, plot)
        click.echo(f"plot: {plot}", err=True)  # stderr, as profile and fit: standard output stays the report
    return 0 if rep.verdict == "PASS" else 1


def _write_rows_csv(path: str, rep: Any) -> None:
    from ascendify.fsutil import atomic_write

    atomic_write(path, _rows_csv(rep).encode("utf-8"))


def _rows_csv(rep: Any) -> str:
    """One CSV row per (sample, output) pair: shapes, dtypes, every metric, NaN/Inf counts, status."""
    import csv
    import io

    from ascendify.compare import metrics as M

    cols = ["sample", "output", "baseline", "candidate", "shape_baseline", "shape_candidate", "dtype_baseline",
            "dtype_candidate"] + [M.METRICS[k][0] for k in M.METRICS] + \
        ["nan_baseline", "inf_baseline", "nan_candidate", "inf_candidate", "status", "reason"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in rep.rows:
        w.writerow([r["sample"], r["output"], r["baseline"], r["candidate"], "x".join(map(str, r["shape_baseline"])),
                    "x".join(map(str, r["shape_candidate"])), r["dtype_baseline"], r["dtype_candidate"]]
                   + ["NaN" if not isinstance(r.get(k), float) or math.isnan(r[k]) else repr(r[k]) for k in M.METRICS]
                   + [r.get(k, 0) for k in ("nan_baseline", "inf_baseline", "nan_candidate", "inf_candidate")]
                   + [r["status"], "; ".join(r.get("failed", []) + r.get("notes", []))])
    return buf.getvalue()


def _print_report(rep: Any, per_sample: bool) -> None:
    from rich.markup import escape as E

    from ascendify.termtable import print_table

    con = _console()
    multi = any(r["sample"] for r in rep.rows) and len({r["sample"] for r in rep.rows}) > 1
    right = {k: "right" for k in ("samples", *_SHOW, "NaN/Inf b|c")}
    out_rows = []
    for o in rep.outputs:
        nf = f"{o['nan_baseline'] + o['inf_baseline']}|{o['nan_candidate'] + o['inf_candidate']}"
        res = "[green]PASS[/]" if o["status"] == "PASS" else f"[red]FAIL[/] ({o['failing_samples']})"
        out_rows.append((E(o["output"]), str(o["samples"]), *[_fmt(o.get(k)) for k in _SHOW], nf, res))
    print_table(con, ("output", "samples", *_SHOW, "NaN/Inf b|c", "result"), out_rows,
                title="per output (worst over samples)" if multi else "per output", justify=right)
    rows = rep.rows if per_sample else [r for r in rep.rows if r["status"] != "PASS" or r["notes"]]
    if rows and (multi or per_sample or any(r["status"] != "PASS" for r in rows)):
        cols = ("cosine", "max_abs", "rel_euclid", "kl", "rmse", "mean_rel")
        sample_rows = []
        for r in rows[:200]:
            why = "; ".join(r.get("failed", []) + r.get("notes", []))
            sample_rows.append((E((r["sample"] or "-") + " " + r["output"]) if multi or r["sample"] else E(r["output"]),
                                *[_fmt(r.get(k)) for k in cols],
                                ("PASS" if r["status"] == "PASS" else "FAIL") + (f": {E(why)}" if why else "")))
        print_table(con, ("sample output", *cols, "result / reason"), sample_rows,
                    title="per sample" + ("" if per_sample else " (failing or noted)"))
        if len(rows) > 200:
            con.print(f"... {len(rows) - 200} more rows in --format json")
    nb = sum(o["nan_baseline"] + o["inf_baseline"] for o in rep.outputs)
    if nb:
        con.print(f"[yellow]warning:[/] the baseline has {nb} NaN/Inf values: they are counted and excluded, "
                  "not compared; a golden output should be finite")
    for k in rep.missing[:10]:
        con.print(f"[red]missing in candidate:[/] {E(k)}")
    if len(rep.missing) > 10:
        con.print(f"... {len(rep.missing) - 10} more missing")
    if rep.extra:
        con.print(f"note: {len(rep.extra)} candidate tensor(s) not in the baseline, e.g. {E(', '.join(rep.extra[:3]))}")
    th = ", ".join(f"{k} {'>=' if k == 'cosine' else '<='} {v:g}" for k, v in rep.thresholds.items())
    colour = "green" if rep.verdict == "PASS" else "red"
    from rich.text import Text

    from ascendify.termtable import wrap
    verdict = (f"{rep.verdict}: {len(rep.rows)} tensor pairs, {sum(1 for r in rep.rows if r['status'] != 'PASS')} failing, "
               f"{len(rep.missing)} missing (thresholds: {th})")
    for i, ln in enumerate(wrap(verdict, con.width, "", "    ")):  # continuation lines indented, not at column 0
        t = Text(ln)
        if i == 0:
            t.stylize(colour, 0, len(rep.verdict))
        con.print(t, overflow="fold")


def _layer_report(model: str, data: Optional[str], sample_name: Optional[str], npu_dump: Optional[str],
                  th: dict[str, float], json_out: Optional[str], keep_file: Optional[str], csv_out: Optional[str]) -> tuple:
    """Run the layer-wise compare of ``model`` on one sample of ``data``; write the artefacts asked
    for (``--json``, ``--keep-dtype-file``, ``--csv``).  Returns ``(report, sample name)``."""
    from ascendify.compare.layers import analyse_layers, write_keep_dtype, write_msit_csv
    from ascendify.compare.runner import ort_session
    from ascendify.compare.samples import iter_samples

    if not os.path.isfile(model):
        raise AscendifyError(f"{model}: no such ONNX file")
    if not data:
        raise AscendifyError("--layers needs --data DIR (a .npy/.npz sample for the model's inputs)")
    names = [i.name for i in ort_session(model).get_inputs()]
    feeds = None
    used = None
    for name, _f, fd in iter_samples(data, names):
        if sample_name is None or name == sample_name:
            feeds, used = fd, name
            break
    if feeds is None:
        raise AscendifyError(f"{data}: no sample named '{sample_name}'")
    rep = analyse_layers(model, feeds, th, npu_dump=npu_dump)
    if rep.keep and keep_file:
        write_keep_dtype(keep_file, rep.keep)
    if json_out:
        _write_json(json_out, rep.as_dict())
    if csv_out:
        write_msit_csv(csv_out, rep)
    return rep, used


def _print_layers(rep: Any, model: str, used: Optional[str], keep_file: Optional[str], top: int) -> None:
    from rich.markup import escape as E

    from ascendify.compare.layers import describe_row
    from ascendify.termtable import print_table

    con = _console()
    con.print(f"layer-wise compare of {model} ({rep.mode}, sample {used}): {len(rep.rows)} node outputs paired", markup=False)
    fi = rep.first_invalid
    start = max(0, (fi.index if fi else 0) - 2)
    shown = rep.rows[start:start + top]
    node_rows = []
    for r in shown:
        flags = []
        if r.overflow:
            flags.append("FP16 OVERFLOW")
        if r.failed:
            flags.append("FAIL: " + "; ".join(r.failed))
        node_rows.append((f"{r.index} {E(r.node)}", r.op_type, *[_fmt(r.metrics.get(k)) for k in ("cosine", "max_abs", "rel_euclid", "kl")],
                          _fmt(r.max_abs_golden), E(", ".join(flags))))
    print_table(con, ("# node", "op", "cosine", "max_abs", "rel_euclid", "kl", "max|fp32|", "flags"), node_rows,
                title="node outputs (graph order)")
    con.print(f"first invalid (FIRST_INVALID_OVERALL): {describe_row(fi)}", markup=False)
    con.print(f"first fp16 overflow (|x| > 65504): {describe_row(rep.first_overflow)}", markup=False)
    for o, d in rep.outputs_before.items():
        con.print(f"network output {o}: cosine {_fmt(d.get('cosine'))}, rel_euclid {_fmt(d.get('rel_euclid'))}"
                  f"{' FAIL: ' + '; '.join(d['failed']) if d['failed'] else ' PASS'}", markup=False)
    if rep.keep:
        con.print(f"keep in fp32 (ATC --keep_dtype, one per line): {', '.join(rep.keep[:20])}"
                  f"{' …' if len(rep.keep) > 20 else ''}", markup=False)
        for o, d in rep.outputs_after.items():
            con.print(f"  with them kept, {o}: cosine {_fmt(d.get('cosine'))}"
                      f"{' FAIL: ' + '; '.join(d['failed']) if d['failed'] else ' PASS'}", markup=False)
        if keep_file:
            con.print(f"wrote {keep_file}: pass it to atc as --keep_dtype={keep_file} "
                      "(or try --precision_mode=allow_mix_precision / must_keep_origin_dtype)", markup=False)
    for n in rep.notes:
        con.print(f"note: {n}", markup=False)
    if rep.unpaired:
        con.print(f"note: {len(rep.unpaired)} dump tensor(s) matched no ONNX tensor, e.g. {', '.join(rep.unpaired[:3])}", markup=False)
    con.print(("[green]PASS[/]" if rep.verdict == "PASS" else "[red]FAIL[/]") + ": network outputs vs fp32")
