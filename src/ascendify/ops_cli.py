"""``ascendify ops QUERY``: NPU support of an aten op or torch API, per torch_npu release.

The command of the knowledge base (``ascendify.kb``): it stands above ``ascendify.options``, which
itself reads the KB (chips, releases), so it is not in the ``kb`` package."""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Optional

import click

from ascendify.options import chip_option, emit, emit_rendered, envelope, report_options, torch_npu_option


NOTE_CHARS = 160
"""Characters of a long documentation note the text report prints without --verbose."""


def default_release() -> "tuple[str, str]":
    """The target torch_npu release for the current folder and why (``ascendify.options.release_for``:
    ``[tool.ascendify] torch-npu``, else the project's pinned torch, else the recommended release)."""
    from ascendify.options import release_for

    return release_for(None, os.getcwd())


@click.command("ops")
@click.argument("query")
@torch_npu_option()
@click.option("--all-versions", is_flag=True, help="Show every torch_npu release in the KB.")
@chip_option("soc_version (e.g. Ascend910B3) for hardware and bf16 checks.")
@click.option("-v", "--verbose", is_flag=True, help="Text output: print long documentation notes in full "
              f"(default: their first {NOTE_CHARS} characters).")
@report_options()
def ops(query: str, torch_npu: Optional[str], all_versions: bool, chip: Optional[str], verbose: bool, fmt: str,
        output_file: Optional[str]) -> int:
    """Look up QUERY: an aten op (aten::nanmean, nanmean.out) or a torch API
    (torch.linalg.inv, Tensor.scatter_add_, F.interpolate, torch_npu.npu_conv2d).

    Shows, per torch_npu release: how the op is dispatched on the NPU (NPU
    kernel and implementation path, decomposition, CPU fallback), the
    native-API doc notes (verified dtypes, "may fall back to CPU", hardware),
    AI_CPU and dtype risks, a replacement recipe where one is known, and the
    source of every fact.  Exit code 1 if the KB knows nothing about QUERY.
    """
    from ascendify.kb.query import lookup
    if torch_npu and all_versions:
        raise click.UsageError("give either --torch-npu or --all-versions, not both")
    reason = "from --torch-npu"
    if not torch_npu and not all_versions:
        torch_npu, reason = default_release()
    try:
        res = lookup(query, torch_npu, all_versions, chip, release_reason=reason)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--torch-npu")
    if fmt == "json":
        emit(json.dumps(envelope("ops", res), ensure_ascii=False, indent=1) + "\n", output_file)
    else:
        emit_rendered(render_text, output_file, res, verbose=verbose)
    return 0 if res["found"] else 1


_MD_RULES = (
    (re.compile(r"```[\w+-]*"), " "),                                  # code fences (their code stays)
    (re.compile(r"!?\[([^\]]*)\]\([^)]*\)"), r"\1"),                 # [text](url), ![alt](url) -> text
    (re.compile(r"<(?:br|p|/p|div|/div|span|/span)\s*/?>", re.I), " "),  # the HTML the docs use for layout
    (re.compile(r"\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-{3,}:?\s*\|?"), " "),   # table separator rows |---|:--|
    (re.compile(r"\*\*(\S(?:.*?\S)?)\*\*"), r"\1"),                      # **bold**
    (re.compile(r"(?<![\w])__(\S(?:.*?\S)?)__(?![\w])"), r"\1"),          # __bold__
    (re.compile(r"`([^`]*)`"), r"\1"),                                  # `code`
    (re.compile(r"(?:^|(?<=\s))#{1,6}\s+"), ""),                        # headings
)
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def plain_text(text: str) -> str:
    """A KB documentation note (markdown from the torch_npu docs, flattened to one line) as plain
    text: no ``**``, backticks, code fences, links (their text kept), table rules, headings or
    layout HTML; table cells and list items separated by " · "; the note's own language kept, with
    "(zh) " in front of a note in Chinese."""
    t = " ".join((text or "").split())
    for rx, rep in _MD_RULES:
        t = rx.sub(rep, t)
    if "|" in t:  # table rows: cells between pipes
        t = " · ".join(c.strip() for c in t.split("|") if c.strip())
    if t.startswith("- "):  # a list flattened to one line: "- a - b" -> "a · b"
        t = " · ".join(p.strip() for p in re.split(r"(?:^|\s)- ", t) if p.strip())
    t = " ".join(t.split())
    return ("(zh) " + t) if _CJK.search(t) else t


def summarise(text: str, verbose: bool = False, limit: int = 0) -> str:
    """``text`` (a KB documentation note) as :func:`plain_text`, cut to about ``limit`` characters
    (default :data:`NOTE_CHARS`) at a word boundary, with a pointer to ``--verbose``; whole when ``verbose``."""
    limit = limit or NOTE_CHARS
    flat = plain_text(text)
    if verbose or len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut.rstrip(" ,;:-") + f" … ({len(flat) - len(cut)} more characters: --verbose)"


def render_text(res: dict, verbose: bool = False) -> None:
    from rich.text import Text

    from ascendify.termtable import print_table, report_console, wrap

    con = report_console(soft_wrap=False)

    def say(text: str, first: str, rest: str, style: str = "") -> None:  # wrapped, continuation lines indented
        for ln in wrap(text, con.width, first, rest):
            con.print(Text(ln, style=style), overflow="fold")

    head = res["query"]
    if res["torch_npu"]:
        torch_v = res["support"][0]["torch"] if res["support"] else ""
        head += f" — torch_npu {res['torch_npu']}" + (f" (torch {torch_v})" if torch_v else "")
    else:
        head += f" — all {len(res['releases'])} torch_npu releases in the KB"
    if res["chip"]:
        head += f", chip {res['chip']}"
    say(head, "", "    ", "bold")
    why = res.get("release_reason")
    if res["torch_npu"] and why and why != "from --torch-npu":  # the default release: say which, why, how to see others
        say(f"the table is for torch_npu {res['torch_npu']} ({why}); --torch-npu VERSION for another release, "
            f"--all-versions for all {res.get('known_releases', len(res['releases']))}", "  ", "      ", "dim")
    for w in res["warnings"]:
        say("warning: " + w, "", "    ", "yellow")
    if not res["found"]:
        say(f"unknown: '{res['query']}' is in no op table, API list or deprecation list of the KB "
            f"(unknown is not 'supported'). Try the aten name (aten::name) or the full API path.", "", "    ", "red")
    for n in res.get("no_default_overload", ()):
        say(f"aten::{n} has no overload of its own (no {n}.default): its overloads are the rows below", "  ", "      ", "dim")
    if res["api_to_aten"]:
        say(f"API → aten: {res['api_to_aten']}", "", "    ", "dim")
    if res["support"]:
        rows = []
        styles = {"cpu_fallback": "red", "not_dense": "red", "unknown": "magenta", "npu_kernel": "green",
                  "npu_via_structured_out": "green", "composite_implicit": "cyan", "composite_explicit": "cyan"}
        for r in res["support"]:
            note = "reached via the API" if r.get("role") == "reached" else ""
            if r.get("research_csv_class"):
                note = (note + "; " if note else "") + f"research CSV says {r['research_csv_class']}"
            opp = r.get("op_plugin_master")
            if opp:
                said = f"lists {opp['impl']}" if opp["impl"] else "does not list it"
                note = (note + "; " if note else "") + f"op-plugin master ({opp['torch_line']}) {said}"
            impl = _impl_text(r["npu_impl"])
            rows.append((Text(r["overload"]), Text(r["torch_npu"]), Text(r["short"], style=styles.get(r["class"], "")),
                         Text(impl), Text(note)))
        print_table(con, ("aten overload", "torch_npu", "class", "implementation", "note"), rows, title="NPU dispatch per release")
        from ascendify.kb.ops import CLASS_LABELS, SHORT_LABELS
        for cls in dict.fromkeys(r["class"] for r in res["support"]):
            if SHORT_LABELS.get(cls, cls) != CLASS_LABELS.get(cls, cls):
                con.print(Text(f"  {SHORT_LABELS.get(cls, cls)}: {CLASS_LABELS.get(cls, cls)}", style="dim"))
    if res["custom_ops"]:
        print_table(con, ("op", "torch_npu", "implementation", "exposed"),
                    [(Text(r["op"]), Text(r["torch_npu"]), Text(_impl_text(r["impl"])), Text("yes" if r["exposed"] else ""))
                     for r in res["custom_ops"]], title="torch_npu custom op registrations")
    if res["api_notes"]:
        rows = []
        for n in res["api_notes"]:
            if not n["listed"]:
                rows.append((Text(n["api"]), Text(n["doc"]), Text("not listed"), Text(""), Text(""), Text(""),
                             Text(summarise(n["text"], verbose))))
                continue
            hw = " ".join(f"{k}{'✔' if v else '✘'}" for k, v in n["hardware"].items())
            rows.append((Text(n["api"]), Text(n["doc"]), Text("yes") if n["supported"] else Text("no", style="red"),
                         Text(", ".join(n["dtypes"])), Text("yes", style="red") if n["may_fallback_cpu"] else Text(""),
                         Text(hw), Text(summarise(n.get("note_en") or n["note"], verbose))))
        print_table(con, ("API", "list", "supported", "verified dtypes", "may fall back", "hardware", "note"), rows,
                    title="Native API support list (torch_npu docs; advisory)")
        for msg in {n["nearest_note"] for n in res["api_notes"] if n.get("nearest_note")}:
            say("note: " + msg, "", "    ", "yellow")
    if res["risks"]:
        con.print(Text("Risks", style="bold"))
        for r in res["risks"]:
            say(f"[{r['kind']}] {r['text']}", "  • ", "    ")
            say(f"source: {r['source']}", "      ", "        ", "dim")
    if res["recipes"]:
        con.print(Text("Replacement", style="bold"))
        for r in res["recipes"]:
            say(r["text"] + ("" if r["verified"] else "  [unverified]"), "  • ", "    ")
            say(f"source: {r['source']}", "      ", "        ", "dim")
    con.print(Text("Sources", style="bold"))
    for s in res["sources"]:
        say(s["short"], "  ", "    ", "dim")
    con.print(Text("  (full provenance: --format json)", style="dim"))


def _impl_text(impl: str) -> str:
    from ascendify.kb.ops import IMPL_LABELS
    if not impl:
        return ""
    via = impl.startswith("via_out:")
    parts = impl.replace("via_out:", "").split("+")
    txt = " + ".join(IMPL_LABELS.get(p, p) for p in parts)
    return ("via .out: " + txt) if via else txt
