"""``ascendify profile DIR`` and ``ascendify profile compare GPU_TRACE NPU_DIR``."""

from __future__ import annotations

import json
import textwrap
from typing import Optional

import click

from ascendify.options import deprecated_option, deprecated_value, emit, envelope, plot_option, report_options


class DefaultGroup(click.Group):
    """A group that runs ``default_cmd`` when the first argument is not a subcommand
    (so ``ascendify profile DIR`` means ``ascendify profile analyze DIR``)."""

    default_cmd = "analyze"

    def parse_args(self, ctx: click.Context, args: list) -> list:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default_cmd] + list(args)
        return super().parse_args(ctx, args)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The group's options and subcommands, then the default subcommand's options (``profile
        DIR`` takes them: --plot, --top, …), so ``profile --help`` shows what the plain form accepts."""
        super().format_options(ctx, formatter)
        cmd = self.commands.get(self.default_cmd)
        if cmd is None:
            return
        sub = click.Context(cmd, info_name=self.default_cmd, parent=ctx)
        rows = [r for r in (p.get_help_record(sub) for p in cmd.get_params(sub)
                            if isinstance(p, click.Option) and "--help" not in p.opts) if r]
        with formatter.section(f"Options of `{ctx.command_path} DIR` (= {ctx.command_path} {self.default_cmd} DIR)"):
            formatter.write_dl(rows)


def _emit(text: str, output: Optional[str]) -> None:
    emit(text, output)


def _unit(values) -> tuple:
    """One unit for a whole table (µs values): :func:`analyze.time_unit` with three decimals for s and ms."""
    from ascendify.profile.analyze import time_unit

    return time_unit(values, decimals=3)


def _in(x: Optional[float], unit: tuple) -> str:
    """``x`` µs in the table's ``unit`` (from :func:`_unit`), without the unit name."""
    if x is None:
        return "-"
    return f"{x / unit[1]:,.{unit[2]}f}"


def render_text(rep: dict) -> str:
    from ascendify.profile.analyze import time_unit, times

    out = [f"Profile: {rep['output']}"]
    present = [k for k, v in rep["files"].items() if v]
    out.append(f"files: {', '.join(present) if present else 'none'}")
    out.append("")
    k = rep.get("kernels")
    if k:
        total, hccl, compute = times(k["total_us"], k["hccl_us"], k["compute_us"])  # one unit in a line
        out.append(f"Device tasks: {k['rows']:,} rows, {total} summed; HCCL (communication) {hccl} = {k['hccl_share']:.1%}, "
                   f"compute {compute}" + (f"; steps {', '.join(k['steps'][:8])}" if k.get("steps") else ""))
        if k.get("by_core"):
            out.append("by core: " + ", ".join(f"{c} {v['share']:.1%}" for c, v in k["by_core"].items()))
        out.append("")
        out.append(f"Top {len(k['top_ops'])} of {k['op_types']} compute operator types by device time:")
        u = _unit([r["total_us"] for r in k["top_ops"]])  # one unit for the table (avg <= total)
        # name columns as wide as their longest entry (at most 34 / 16), so the table fits 80 columns
        nw = min(34, max([len("op type")] + [len(r["op_type"]) for r in k["top_ops"]]))
        cw = min(16, max([len("core")] + [len(",".join(r["core_types"])) for r in k["top_ops"]]))
        out.append(f"  {'op type':<{nw}} {'core':<{cw}} {'count':>7} {'total (' + u[0] + ')':>12} {'avg (' + u[0] + ')':>11} {'share':>7}")
        for r in k["top_ops"]:
            out.append(f"  {r['op_type'][:nw]:<{nw}} {','.join(r['core_types'])[:cw]:<{cw}} {r['count']:>7} {_in(r['total_us'], u):>12} {_in(r['avg_us'], u):>11} {r['share']:>7.1%}")
        if k.get("hccl_ops"):
            hc = k["hccl_ops"][:5]
            out.append("  communication: " + ", ".join(f"{r['op_type']} ×{r['count']} {t} ({r['share']:.1%})"
                                                       for r, t in zip(hc, times(*[r["total_us"] for r in hc]))))
        out.append("")
        if k["aicpu"]:
            n = sum(a["count"] for a in k["aicpu"])
            out.append(f"AI_CPU operators ({n} task(s), {sum(a['total_us'] for a in k['aicpu']) / k['total_us']:.2%} of device time):" if k["total_us"] else "AI_CPU operators:")
            # one unit for the list: every op's total and max, and the advisor's 20 µs threshold
            ts = iter(times(*[v for a in k["aicpu"] for v in (a["total_us"], a["max_us"])], 20.0))
            pairs = [(next(ts), next(ts)) for _ in k["aicpu"]]
            threshold = next(ts)
            for a, (total, most) in zip(k["aicpu"], pairs):
                dt = f" {a['input_dtypes']} → {a['output_dtypes']}" if a.get("input_dtypes") or a.get("output_dtypes") else ""
                flag = f" (above the advisor's {threshold} task threshold)" if a["above_advisor_threshold"] else ""
                out.append(f"  {a['op_type']}{dt}: ×{a['count']}, {total}, max {most}{flag}")
                if a.get("names"):
                    out.append(f"    tasks: {', '.join(a['names'])}")
                out.append(f"    why: {a['reason'] or 'no dtype rule explains it (' + a['reason_source'] + ')'}")
                out += textwrap.wrap(a["suggestion"], _wrap_width(), initial_indent="    change: ", subsequent_indent="            ")
        else:
            out.append("AI_CPU operators: none")
        out.append("")
    st = rep.get("step_time")
    if st:
        m, s = st["mean_us"], st["shares"]
        # one unit for the section: the mean step, its parts and the per-step table
        cols = ("computing", "communication_not_overlapped", "free")
        group = ([st["step_us"], m.get("preparing")] + [m.get(c) for c in ("computing", "communication_not_overlapped", "overlapped", "free")]
                 + [r.get(c) for r in st["steps"][:16] for c in cols])
        u = _unit(group)  # the table's (3 decimals); the lines above it: the same unit, as times() gives it
        ut = time_unit(group)

        def at(x):
            return "-" if x is None else f"{x / ut[1]:,.{ut[2]}f} {ut[0]}"

        out.append(f"Step time ({st['source']}, mean of {st['steps_used']} step(s)): {at(st['step_us'])}")
        out.append(f"  compute {at(m['computing'])} ({s['computing']:.1%}), communication not overlapped {at(m['communication_not_overlapped'])} "
                   f"({s['communication_not_overlapped']:.1%}), overlapped {at(m['overlapped'])} ({s['overlapped']:.1%}), free/idle {at(m['free'])} ({s['free']:.1%})")
        if m.get("preparing"):
            out.append(f"  preparing {at(m['preparing'])}")
        if st.get("bound"):
            out.append(f"  verdict: {st['bound']}-bound")
        if len(st["steps"]) > 1:
            out.append(f"    {'step':<10} {'compute (' + u[0] + ')':>14} {'comm not overlapped (' + u[0] + ')':>26} {'free (' + u[0] + ')':>11}")
            for r in st["steps"][:16]:
                out.append(f"    {r.get('step')!s:<10} {_in(r.get('computing'), u):>14} {_in(r.get('communication_not_overlapped'), u):>26} {_in(r.get('free'), u):>11}")
        out.append("")
    tr = rep.get("trace")
    if tr:
        dl = tr["dataloader"]
        if dl["calls"]:
            most, over = times(dl["max_us"], dl["threshold_us"])
            out.append(f"Data loader: {dl['calls']} call(s), max {most}, {dl['slow_calls']} above {over}"
                       + (" → the device waits for data" if dl["starving"] else " → not starving the device"))
        out.append(f"Online operator compiles (aclopCompileAndExecute): {tr['online_compiles']}")
        out.append("")
    dyn = rep.get("dynamic_shape") or {}
    stt = dyn.get("op_state")
    if stt:
        out.append(f"OP State: {stt['static']} static, {stt['dynamic']} dynamic, {stt['other']} N/A"
                   + (" → dynamic shapes" if dyn.get("no_static_ops") else ""))
    elif k:
        out.append("OP State: not in kernel_details.csv (older CANN or profiler level0): static/dynamic unknown")
    out.append("")
    cm = rep.get("communication")
    if cm:
        out.append(f"Communication (communication.json): {cm['elapse_ms']:,.1f} ms elapsed, {cm['wait_ratio']:.0%} waiting for peers")
        for o in cm["ops"][:5]:
            out.append(f"  {o['op']}: ×{o['count']}, {o['elapse_ms']:,.2f} ms, wait {o['wait_ms']:,.2f} ms")
        if cm["bandwidth_gb_s"]:
            out.append("  bandwidth: " + ", ".join(f"{k2} {v:.2f} GB/s" for k2, v in cm["bandwidth_gb_s"].items()))
        out.append("")
    if rep.get("cpu_fallback"):
        out.append("CPU-fallback candidates (host ops with no device time, operator_details.csv):")
        for f, t in zip(rep["cpu_fallback"], times(*[f["host_us"] for f in rep["cpu_fallback"]])):  # one unit for the list
            out.append(f"  {f['op']}: ×{f['calls']}, host {t}")
        out.append("")
    if rep["suggestions"]:
        out.append("Suggested changes (most important first):")
        for i, s2 in enumerate(rep["suggestions"], 1):
            out += textwrap.wrap(f"[{s2['area']}] {s2['finding']}", _wrap_width(), initial_indent=f"{i:>2}. ", subsequent_indent="    ")
            out += textwrap.wrap(s2["change"], _wrap_width(), initial_indent="    → ", subsequent_indent="      ")
            if s2.get("scan_rules"):
                out.append(f"      scan: {', '.join(s2['scan_rules'])} (`ascendify scan` finds the cause in code)")
    else:
        out.append("No issues found by the checks above.")
    for n in rep["notes"]:
        out.append(f"note: {n}")
    return "\n".join(_fit(out)).rstrip() + "\n"


def _wrap_width() -> int:
    """Prose paragraphs wrap at 100 columns, or the terminal's width when narrower."""
    from ascendify.termtable import report_width

    return min(100, report_width())


def _fit(lines: "list[str]") -> "list[str]":
    """Lines wider than the report's width (the terminal's, ``$COLUMNS``, else 160: ascendify.termtable)
    wrapped at word boundaries, continuation lines indented under their first word, a path longer than
    a line cut after one of its '/' (issue 22)."""
    from ascendify.termtable import report_width

    width = report_width()
    out: "list[str]" = []
    for ln in lines:
        if len(ln) <= width:
            out.append(ln)
            continue
        lead = len(ln) - len(ln.lstrip(" "))
        more = " " * (lead + 4)
        for part in textwrap.wrap(ln, width, initial_indent="", subsequent_indent=more,
                                  break_long_words=False, break_on_hyphens=False) or [ln]:
            while len(part) > width and "/" in part[:width].lstrip(" ")[:-1]:  # a long path: cut after a '/'
                cut = part.rindex("/", 0, width) + 1
                out.append(part[:cut])
                part = more + part[cut:]
            out.append(part)
    return out


@click.group("profile", cls=DefaultGroup, invoke_without_command=False,
             context_settings={"help_option_names": ["-h", "--help"]})
def profile() -> None:
    """Read a torch_npu profiler folder: slow ops, AI_CPU, step time.

    `ascendify profile DIR` analyses one run (DIR is a *_ascend_pt folder or its
    ASCEND_PROFILER_OUTPUT); `ascendify profile compare GPU_TRACE NPU_DIR`
    compares a CUDA torch.profiler trace with the NPU run, op by op.
    """


@profile.command("analyze")
@click.argument("directory", type=click.Path())
@click.option("--top", type=click.IntRange(1, 500), default=10, show_default=True, help="How many operators to list.")
@report_options()
@plot_option("Also write a chart of the top ops and the step split (.svg or .png).")
@deprecated_option("--chart", dest="plot", new="--plot FILE", type=click.Path(dir_okay=False), default=None)
@click.option("--cann", default=None, metavar="VERSION", help="CANN version of the run (selects the AI_CPU dtype rules), e.g. 8.0.RC1.")
@click.option("--skip-first-step", is_flag=True, help="Leave out the first profiled step (compile / warm-up).")
def analyze_cmd(directory, top, fmt, output_file, plot, cann, skip_first_step) -> int:
    """Analyse one profiler run (the default subcommand)."""
    from ascendify.profile.analyze import analyze

    chart = deprecated_value("plot", plot)
    if chart:
        from ascendify.options import check_writable

        check_writable(chart, "--plot")
    rep = analyze(directory, top=top, cann=cann, skip_first_step=skip_first_step)
    if chart:
        from ascendify.profile.chart import write_chart

        write_chart(rep, chart, top)
        rep["chart"] = chart
        click.echo(f"plot: {chart}", err=True)  # stderr, as compare and fit: standard output stays the report
    text = json.dumps(envelope("profile analyze", rep), indent=2, ensure_ascii=False, default=str) + "\n" if fmt == "json" else render_text(rep)
    _emit(text, output_file)
    return 0


@profile.command("compare")
@click.argument("gpu_trace", type=click.Path())
@click.argument("npu_dir", type=click.Path())
@click.option("--top", type=click.IntRange(1, 500), default=20, show_default=True, help="Rows per table.")
@report_options()
def compare_cmd(gpu_trace, npu_dir, top, fmt, output_file) -> int:
    """Compare a CUDA torch.profiler chrome trace with an NPU profiler run, aten op by aten op."""
    from ascendify.profile.compare import compare, render_compare

    c = compare(gpu_trace, npu_dir, top)
    text = json.dumps(envelope("profile compare", c), indent=2, ensure_ascii=False) + "\n" if fmt == "json" else render_compare(c)
    _emit(text, output_file)
    return 0
