"""Pictures of a profile: a bar chart of the top operators and the step-time split.

SVG is written directly (no dependency); PNG needs matplotlib
(``pip install 'ascendify[ml]'``).
"""

from __future__ import annotations

import io
import os
from html import escape
from typing import Optional

from ascendify.errors import AscendifyError
from ascendify.fsutil import atomic_write

_COLORS = {"computing": "#4C78A8", "communication_not_overlapped": "#E45756", "overlapped": "#F2A541", "free": "#9D9D9D"}
_LABELS = {"computing": "compute", "communication_not_overlapped": "communication (not overlapped)",
           "overlapped": "overlapped (inside compute)", "free": "free / idle"}


def _bars(rep: dict, top: int) -> list:
    k = rep.get("kernels") or {}
    rows = [(r["op_type"], r["total_us"], r["share"], r["core_types"]) for r in k.get("top_ops", [])[:top]]
    if k.get("hccl_us"):
        rows.append(("HCCL (communication)", k["hccl_us"], k["hccl_share"], ["HCCL"]))
    return rows


def _split(rep: dict) -> Optional[dict]:
    st = rep.get("step_time")
    if not st or not st.get("step_us"):
        return None
    return st


def svg(rep: dict, top: int = 10) -> str:
    """An SVG document with the top-op bars and (when known) the step split."""
    bars = _bars(rep, top)
    st = _split(rep)
    w, left, right = 900, 260, 170
    bh, gap = 22, 6
    h_bars = 50 + len(bars) * (bh + gap) if bars else 0
    h_split = 130 if st else 0
    height = max(h_bars + h_split + 20, 80)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{height}" viewBox="0 0 {w} {height}" font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="white"/>']
    y = 25
    if bars:
        out.append(f'<text x="10" y="{y}" font-size="15" font-weight="bold">Top operators by device time (µs, share of all device tasks)</text>')
        y += 15
        vmax = max(b[1] for b in bars) or 1.0
        for name, us, share, cores in bars:
            bw = (w - left - right) * us / vmax
            color = "#E45756" if "HCCL" in cores else ("#F58518" if "AI_CPU" in cores else "#4C78A8")
            out.append(f'<text x="{left - 8}" y="{y + bh * 0.7:.1f}" text-anchor="end">{escape(name[:38])}</text>')
            out.append(f'<rect x="{left}" y="{y}" width="{max(bw, 1):.1f}" height="{bh}" fill="{color}"><title>{escape(name)}: {us:,.1f} µs</title></rect>')
            out.append(f'<text x="{left + bw + 6:.1f}" y="{y + bh * 0.7:.1f}">{us:,.0f} µs ({share:.1%})</text>')
            y += bh + gap
        y += 10
    if st:
        out.append(f'<text x="10" y="{y + 15}" font-size="15" font-weight="bold">Step time split (mean {st["step_us"]:,.0f} µs per step; {escape(str(st.get("bound") or ""))}-bound)</text>')
        y += 30
        x = 10.0
        total_w = w - 20
        for key in ("computing", "communication_not_overlapped", "free"):
            frac = st["shares"].get(key, 0.0)
            seg = total_w * frac
            if seg > 0:
                out.append(f'<rect x="{x:.1f}" y="{y}" width="{seg:.1f}" height="30" fill="{_COLORS[key]}"><title>{_LABELS[key]}: {frac:.1%}</title></rect>')
            x += seg
        y += 48
        lx = 10
        for key in ("computing", "communication_not_overlapped", "overlapped", "free"):
            frac = st["shares"].get(key, 0.0)
            out.append(f'<rect x="{lx}" y="{y - 10}" width="12" height="12" fill="{_COLORS[key]}"/>')
            label = f"{_LABELS[key]} {frac:.1%}"
            out.append(f'<text x="{lx + 16}" y="{y}">{escape(label)}</text>')
            lx += 16 + 7 * len(label) + 20
    if not bars and not st:
        out.append('<text x="10" y="40">No operator or step-time data in this profile.</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def png(rep: dict, top: int = 10) -> bytes:
    """The same picture as PNG bytes (needs matplotlib)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise AscendifyError(f"PNG charts need matplotlib ({exc}); pip install 'ascendify[ml]' or write an .svg chart instead") from None
    bars = _bars(rep, top)
    st = _split(rep)
    n = (1 if bars else 0) + (1 if st else 0) or 1
    fig, axes = plt.subplots(n, 1, figsize=(10, 1.2 + 0.35 * max(len(bars), 2) + (1.6 if st else 0)), squeeze=False,
                             gridspec_kw={"height_ratios": ([max(len(bars), 2)] if bars else []) + ([1.5] if st else []) or [1]})
    i = 0
    if bars:
        ax = axes[i][0]
        i += 1
        names = [b[0][:38] for b in bars][::-1]
        vals = [b[1] for b in bars][::-1]
        colors = ["#E45756" if "HCCL" in b[3] else ("#F58518" if "AI_CPU" in b[3] else "#4C78A8") for b in bars][::-1]
        ax.barh(names, vals, color=colors)
        for yv, (v, b) in enumerate(zip(vals, bars[::-1])):
            ax.text(v, yv, f" {v:,.0f} µs ({b[2]:.1%})", va="center", fontsize=8)
        ax.set_title("Top operators by device time")
        ax.set_xlabel("µs")
    if st:
        ax = axes[i][0]
        left = 0.0
        for key in ("computing", "communication_not_overlapped", "free"):
            frac = st["shares"].get(key, 0.0)
            ax.barh([0], [frac], left=left, color=_COLORS[key], label=f"{_LABELS[key]} {frac:.1%}")
            left += frac
        ax.set_xlim(0, max(1.0, left))
        ax.set_yticks([])
        ax.set_title(f"Step time split (mean {st['step_us']:,.0f} µs per step)")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=3, fontsize=8, frameon=False)
    if not bars and not st:
        axes[0][0].text(0.5, 0.5, "No operator or step-time data", ha="center")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return buf.getvalue()


def write_chart(rep: dict, path: str, top: int = 10) -> None:
    """Write ``path`` as SVG or PNG by its extension; ``AscendifyError`` otherwise."""
    ext = os.path.splitext(path)[1].lower()
    if ext == ".svg":
        atomic_write(path, svg(rep, top).encode("utf-8"))
    elif ext == ".png":
        atomic_write(path, png(rep, top))
    else:
        raise AscendifyError(f"{path}: chart file must end in .svg or .png")
