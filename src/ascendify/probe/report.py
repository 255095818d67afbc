"""Probe report: text tables (rich), JSON, and the one-line verdict."""

from __future__ import annotations

import os
from typing import Optional


def verdict(result: dict) -> str:
    """One line: ``VERDICT: <ready|caveats|blocked|failed> — …``."""
    cl = result["classification"]
    f = cl["findings"]
    errs = [x for x in f if x["severity"] == "error"]
    warns = [x for x in f if x["severity"] == "warning"]
    dyn = result.get("dynamic") or {}
    dd = [d for d in dyn.get("data_dependent", []) if d["kind"] == "data_dependent"]
    n = len(cl["rows"])
    rel = f"torch_npu {cl['torch_npu']}"
    err = result.get("error")
    if err:
        where = f" at aten::{err['op']}" if err.get("op") else ""
        line = f" ({_rel(err['line'])})" if err.get("line") else ""
        return (f"VERDICT: failed — the run raised {err['type']}{where}{line}: {err['message'][:160]}; "
                f"{n} ops recorded before it")

    def summ(items):
        by: dict = {}
        for x in items:
            by.setdefault(x["kind"], set()).add(x["op"])
        return ", ".join(f"{len(v)} {k.replace('_', ' ')} ({', '.join(sorted(v)[:3])}{'…' if len(v) > 3 else ''})"
                         for k, v in sorted(by.items()))
    if errs:
        return f"VERDICT: blocked on {rel} — {summ(errs)}" + (f"; also {summ(warns)}" if warns else "")
    if warns or dd:
        extra = f"; {len(dd)} data-dependent op(s)" if dd else ""
        return f"VERDICT: runs with caveats on {rel} — {summ(warns) if warns else 'no op warnings'}{extra}"
    return f"VERDICT: ready on {rel} — all {n} recorded aten ops have NPU kernels or decompose to them"


def _rel(line: Optional[str]) -> str:
    if not line:
        return ""
    path, _, no = line.rpartition(":")
    try:
        path = os.path.relpath(path)
    except ValueError:
        pass
    return f"{path}:{no}"


def render_text(result: dict, all_ops: bool = False) -> None:
    from rich.text import Text

    from ascendify.termtable import print_table, print_wrapped, report_console

    con = report_console()

    def say(line) -> None:
        print_wrapped(con, line)
    cl = result["classification"]
    say(Text(f"ascendify probe {result['target']} — torch_npu {cl['torch_npu']} (torch {cl['torch']})"
                   + (f", chip {cl['chip']}" if cl.get("chip") else "") + f", {result['mode']}", style="bold"))
    if result.get("inputs"):
        say(Text("inputs: " + "  ".join(result["inputs"]) + (f"   second set: {'  '.join(result['inputs2'])}"
                                                                    if result.get("inputs2") else ""), style="dim"))
    for w in cl["warnings"] + result.get("warnings", []):
        say(Text("warning: " + w, style="yellow"))
    counts: dict = {}
    for r in cl["rows"]:
        counts[r["short"]] = counts.get(r["short"], 0) + 1
    say(Text(f"{len(cl['rows'])} distinct aten overloads, {sum(r['count'] for r in cl['rows'])} calls: "
                   + ", ".join(f"{v} {k}" for k, v in sorted(counts.items(), key=lambda kv: -kv[1]))))
    rows = cl["rows"] if all_ops else [r for r in cl["rows"] if r["class"] not in ("npu_kernel", "npu_via_structured_out",
                                                                                       "composite_explicit", "composite_implicit",
                                                                                       "npu_composite")]
    if rows:
        print_table(con, ("aten op", "calls", "class", "impl", "dtypes", "first user line", "API"),
                    [(r["op"], str(r["count"]), r["short"], r["npu_impl"], ",".join(r["dtypes"]),
                      _rel(r["lines"][0]) if r["lines"] else "", ", ".join(r["apis"][:1])) for r in rows],
                    title="aten ops" + ("" if all_ops else " without their own NPU kernel (--all-ops for every op)"),
                    markup=False)
    f = cl["findings"]
    if f:
        sty = {"error": "red", "warning": "yellow", "info": "cyan"}
        print_table(con, ("op / API", "severity", "kind", "user line(s)", "message"),
                    [(Text(x["apis"][0] if x["kind"].startswith(("doc_", "deprecated", "hardware", "npu_override")) and x["apis"]
                           else x["op"]),
                      Text(x["severity"], style=sty[x["severity"]]), Text(x["kind"]),
                      Text(", ".join(_rel(l) for l in x["lines"]) or ("(backward)" if "backward" in x.get("phases", []) else "")),
                      Text(x["message"])) for x in f],
                    title="Findings")
        recipes = {}
        for x in f:
            if x.get("recipe"):
                recipes.setdefault(x["recipe"], []).append(x["op"])
        if recipes:
            say(Text("Replacements", style="bold"))
            for text, opsl in recipes.items():
                say(Text(f"  • {', '.join(sorted(set(opsl))[:4])}: {text}"))
    dyn = result.get("dynamic")
    if dyn and (dyn.get("data_dependent") or dyn.get("comparison") or dyn.get("atc")):
        say(Text("Dynamic shapes", style="bold"))
        for d in dyn["data_dependent"]:
            say(Text(f"  • [{d['kind']}] aten::{d['op']} ×{d['count']} at {', '.join(_rel(l) for l in d['lines'])}: {d['why']}"))
        cmp_ = dyn.get("comparison")
        if cmp_:
            say(Text(f"  {len(cmp_['shape_changing_ops'])} op(s) see different shapes between the two input sets, "
                           f"{len(cmp_['shape_stable_ops'])} keep theirs"
                           + (f": {', '.join(cmp_['shape_changing_ops'][:12])}{'…' if len(cmp_['shape_changing_ops']) > 12 else ''}"
                              if cmp_['shape_changing_ops'] else "")))
        adv = dyn.get("atc")
        if adv:
            say(Text(f"  ATC mode: {adv['mode']}: atc … {adv['atc']}"))
            for n in adv["notes"]:
                say(Text(f"    - {n}"))
            say(Text(f"    source: {adv['source']}", style="dim"))
    if result.get("error"):
        e = result["error"]
        say(Text(f"error: {e['type']}: {e['message']}" + (f" (in aten::{e['op']}" if e.get("op") else "")
                       + (f", {_rel(e['line'])})" if e.get("line") else (")" if e.get("op") else "")), style="red"))
    if result.get("emulation"):
        em = result["emulation"]
        say(Text(f"emulated: {', '.join(em.get('used', [])) or 'nothing'}; stopped: {em.get('stopped', '')}", style="dim"))
    say(Text(f"source: {cl['source']}", style="dim"))
    say(Text(result["verdict"], style="bold"))
