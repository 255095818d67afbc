"""Error-distribution plot: histogram of log10 |candidate − baseline| per output."""

from __future__ import annotations

import io
import math
from typing import Any

from ascendify.errors import AscendifyError
from ascendify.fsutil import atomic_write


def plot_error_hist(outputs: list[dict[str, Any]], path: str, max_outputs: int = 16) -> None:
    """Write an SVG or PNG (by extension) with one panel per output from the ``hist``
    entries of :func:`ascendify.compare.engine.compare_collections` summaries.
    Raises ``AscendifyError`` when matplotlib is missing or the extension is unknown."""
    from ascendify.options import pyplot_for

    plt, fmt = pyplot_for(path)
    outs = [o for o in outputs if "hist" in o][:max_outputs]
    if not outs:
        raise AscendifyError("nothing to plot (no compared outputs)")
    cols = min(4, len(outs))
    rows = math.ceil(len(outs) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.2 * rows), squeeze=False)
    for ax, o in zip(axes.flat, outs):
        h = o["hist"]
        edges = h["edges_log10"]
        counts = h["counts"]  # [below edges[0], bins..., above edges[-1]]
        inner = counts[1:-1]
        centers = [(edges[i] + edges[i + 1]) / 2 for i in range(len(edges) - 1)]
        width = edges[1] - edges[0]
        ax.bar(centers, inner, width=width, color="#3b7dd8")
        ax.set_yscale("symlog")
        ax.set_xlabel("log10 |candidate − baseline|")
        ax.set_ylabel("elements")
        cos = o.get("cosine")
        title = f"{o['output']}  [{o['status']}]"
        if isinstance(cos, float) and not math.isnan(cos):
            title += f"\ncos={cos:.6f} max_abs={o.get('max_abs', float('nan')):.3g}"
        ax.set_title(title, fontsize=9)
        extra = []
        if h.get("zero"):
            extra.append(f"exact: {h['zero']}")
        if counts[0]:
            extra.append(f"<1e{edges[0]:.0f}: {counts[0]}")
        if counts[-1]:
            extra.append(f">1e{edges[-1]:.0f}: {counts[-1]}")
        if extra:
            ax.text(0.02, 0.95, "\n".join(extra), transform=ax.transAxes, fontsize=7, va="top")
    for ax in list(axes.flat)[len(outs):]:
        ax.axis("off")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt)
    plt.close(fig)
    atomic_write(path, buf.getvalue())
