"""Text report, terminal timeline chart and ``--plot`` PNG/SVG for an ``ascendify fit`` result."""

from __future__ import annotations

from typing import List, Optional

from ascendify.errors import AscendifyError
from ascendify.fit.recorder import CATEGORIES
from ascendify.termtable import KEEP, report_width, wrap_prose

LABELS = {"parameters": "parameters", "gradients": "gradients", "optimizer_states": "optimizer states",
          "inputs": "inputs", "activations": "activations (saved)", "temporaries": "temporaries"}
PHASE_MARK = {"setup": "s", "forward": "F", "backward": "B", "optimizer": "O", "zero_grad": "z"}


def human(n: Optional[int]) -> str:
    """Bytes as ``12.3 GiB`` / ``456.0 MiB`` / ``78.0 KiB`` / ``9 B`` (binary units)."""
    if n is None:
        return "-"
    sign = "-" if n < 0 else ""
    v = abs(n)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= size:
            return f"{sign}{v / size:.1f} {unit}"
    return f"{sign}{v} B"


def chart(result: dict, width: int = 64, height: int = 8, room: Optional[int] = None) -> List[str]:
    """Live bytes over the step as a block chart ``height`` rows tall, with a phase ruler
    (F forward, B backward, O optimizer step, z zero_grad) under it; the legend follows the
    ruler, or goes on a line of its own when ruler and legend are wider than ``room``."""
    pts = result.get("timeline") or []
    if not pts:
        return ["(no allocations)"]
    cols = []
    step = len(pts) / float(width)
    for c in range(min(width, len(pts))):
        seg = pts[int(c * step): max(int(c * step) + 1, int((c + 1) * step))]
        best = max(seg, key=lambda p: p["bytes"])
        cols.append(best)
    top = max(p["bytes"] for p in cols) or 1
    lines = []
    eighths = " ▁▂▃▄▅▆▇█"
    for r in range(height, 0, -1):
        row = []
        for p in cols:
            level = p["bytes"] / top * height
            if level >= r:
                row.append("█")
            elif level > r - 1:
                row.append(eighths[int((level - (r - 1)) * 8)])
            else:
                row.append(" ")
        label = human(top) if r == height else ("" if r > 1 else "0")
        lines.append(f"{label:>10} │{''.join(row)}")
    lines.append(" " * 11 + "└" + "─" * len(cols))
    ruler = " " * 12 + "".join(PHASE_MARK.get(p["phase"], "?") for p in cols)
    legend = "F forward, B backward, O optimizer, z zero_grad"
    if room is not None and len(ruler) + 3 + len(legend) > room:
        lines.extend([ruler, " " * 12 + legend])
    else:
        lines.append(f"{ruler}   {legend}")
    return lines


def render_text(result: dict) -> str:
    out: List[str] = []
    head = f"ascendify fit {result['target']}  {' '.join(result['inputs'])}  optimizer {result['optimizer']}"
    if result.get("amp"):
        head += f"  amp {result['amp']}"
    if result.get("checkpointing"):
        head += f"  checkpointing {result['checkpointing']} ({len(result.get('checkpointed_modules') or [])} modules)"
    if result.get("shard"):
        head += f"  {result['shard']} x{result['cards']}"
    out.append(head)
    imap = result.get("input_map") or {}
    if imap:
        out.append("inputs → forward: " + ", ".join(f"{n} → {p}" for n, p in imap.items())
                   + (f"; loss from {result['loss']}" if result.get("loss") else ""))
    for w in result.get("warnings") or []:
        out.extend(wrap_prose(w, initial="warning: "))
    out.append(f"Peak {human(result['peak_bytes'])} of tensors in {result['peak_phase']}"
               f"; reserved by the caching allocator {human(result['reserved_bytes'])}")
    sp = result["split"]
    items = ", ".join(f"{LABELS[c]} {human(sp.get(c, 0))}".replace(" ", KEEP) for c in CATEGORIES if sp.get(c))
    out.extend(wrap_prose(items, initial="  at the peak: ", subsequent="    "))  # each item whole
    if result.get("chip"):
        if result.get("hbm_bytes") is None:
            out.append(f"Chip {result['chip']}: HBM size unknown — no verdict")
        else:
            verdict = "FITS" if result["fits"] else "DOES NOT FIT"
            unverified = " (unverified)" if str(result.get("runtime_reserve_source") or "").startswith("unverified") else ""
            out.extend(wrap_prose(f"Chip {result['chip']}: HBM {human(result['hbm_bytes'])}, runtime reserve "
                                  f"{human(result['runtime_reserve_bytes'])}{unverified} → "
                                  f"{human(result['usable_bytes'])} usable: {verdict}, margin "
                                  f"{human(result['margin_bytes'])}"))
            for i, src in enumerate(str(result.get("hbm_source") or "").split()):  # one source a line, whole
                out.append(("  source: " if i == 0 else "    ") + src)
    mods = result.get("top_modules") or []
    if mods:
        out.append("")
        out.append("Top modules by activation memory (saved for backward, all instances)")
        w = max(len(m["module"]) + (len(f" ×{m['count']}") if m["count"] > 1 else 0) for m in mods)
        for m in mods:
            name = m["module"] + (f" ×{m['count']}" if m["count"] > 1 else "")
            out.append(f"  {name:<{w}}  {human(m['activation_bytes']):>10}  {m['type']}")
    out.append("")
    out.append("Memory over the step")
    out.extend("  " + line for line in chart(result, room=report_width() - 2))
    rows = result.get("rows") or []
    if rows:
        out.append("")
        out.append("Levers")
        hdr = ("lever", "batch", "peak", "reserved", "fits", "margin", "vs baseline", "how")
        table = [hdr]
        for r in rows:
            fits = "-" if r["fits"] is None else ("yes" if r["fits"] else "no")
            table.append((r["lever"], str(r["batch"]), human(r["peak_bytes"]), human(r["reserved_bytes"]), fits,
                          human(r["margin_bytes"]), human(r.get("delta_bytes")), r["how"]))
        widths = [max(len(t[i]) for t in table) for i in range(len(hdr))]
        for t in table:
            out.append("  " + "  ".join(t[i].ljust(widths[i]) if i in (0, 7) else t[i].rjust(widths[i])
                                        for i in range(len(hdr))).rstrip())
        for r in rows:
            if r.get("next_batch"):
                out.append(f"  batch auto: {r['batch']} fits; {r['next_batch']} needs {human(r['next_reserved_bytes'])} "
                           f"(tried {', '.join(map(str, r['tried']))})")
            elif r.get("batch_capped"):
                out.append(f"  batch auto: {r['batch']} fits; the search stops there (its cap), larger batches were not tried "
                           f"(tried {', '.join(map(str, r['tried']))})")
    for n in result.get("notes") or []:
        out.extend(wrap_prose(n, initial="note: "))
    return "\n".join(out) + "\n"


def plot(result: dict, path: str) -> None:
    """Stacked memory-over-step chart (categories, phase boundaries, the chip's usable HBM) to
    ``path`` (``.png`` or ``.svg``).  Raises :class:`AscendifyError` if matplotlib is missing
    or the suffix is another."""
    from ascendify.options import pyplot_for

    plt, fmt = pyplot_for(path, ", or drop --plot and read the text chart")
    pts = result.get("timeline") or []
    xs = [p["event"] for p in pts]
    gib = float(1 << 30)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ax.stackplot(xs, *[[p[c] / gib for p in pts] for c in CATEGORIES], labels=[LABELS[c] for c in CATEGORIES])
    last = None
    for p in pts:
        if p["phase"] != last:
            ax.axvline(p["event"], color="grey", lw=0.6, ls=":")
            ax.text(p["event"], 0, " " + p["phase"], rotation=90, va="bottom", fontsize=7, color="grey")
            last = p["phase"]
    if result.get("usable_bytes"):
        ax.axhline(result["usable_bytes"] / gib, color="red", lw=1, label=f"{result['chip']} usable HBM")
    ax.set_xlabel("allocation event")
    ax.set_ylabel("GiB")
    ax.set_title(f"{result['target']} {' '.join(result['inputs'])}: peak {human(result['peak_bytes'])}")
    ax.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    import io
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    plt.close(fig)
    from ascendify.fsutil import atomic_write
    try:
        atomic_write(path, buf.getvalue())
    except OSError as exc:
        raise AscendifyError(f"--plot {path}: cannot write ({exc.strerror}); choose another file") from None
