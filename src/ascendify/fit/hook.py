"""``migrate``'s fit table: run ``ascendify fit`` for the model factory a project's config names.

The project says which model to size in its pyproject.toml::

    [tool.ascendify.fit]
    factory = "models.vit:vit_b16"          # pkg.module:factory or path/file.py:factory, from the project root
    inputs = ["x:64,3,224,224:float32"]     # as --input; axis 0 is the batch
    optimizer = "adamw"                     # optional, as --optimizer (default adam)
    amp = "bf16"                            # optional: fp16 | bf16
    checkpointing = "blocks.*"              # optional: a module pattern or "auto"
    cards = 8                               # optional, with shard
    shard = "zero2"                         # optional: zero1 | zero2 | zero3 | fsdp
    batch = "auto"                          # optional: find the largest batch that fits
    chip = "Ascend910B3"                    # optional; default: [tool.ascendify] chip

:func:`project_fit` runs the step in a child process (``python -m ascendify fit ... --format
json`` with the project root as working folder, so the user's imports and side effects stay out
of the caller, with a time limit) and returns the JSON result, or ``{"error": one line}``, or
None when the config names no factory.  :func:`fit_rows` turns a result into table rows.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import List, Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

KEYS = ("factory", "inputs", "optimizer", "amp", "checkpointing", "cards", "shard", "batch", "chip")


def fit_config(root: str) -> Optional[dict]:
    """``[tool.ascendify.fit]`` of ``root``'s pyproject.toml (with ``chip`` defaulted from
    ``[tool.ascendify] chip``), or None when there is none or it names no ``factory``.
    Raises ``ValueError`` (one line naming the file) for unknown keys or wrong types."""
    path = os.path.join(root, "pyproject.toml")
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as fh:
            table = tomllib.load(fh).get("tool", {}).get("ascendify", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None  # scan reports a broken config
    cfg = table.get("fit")
    if not isinstance(cfg, dict) or not cfg.get("factory"):
        return None
    unknown = sorted(set(cfg) - set(KEYS))
    if unknown:
        raise ValueError(f"{path}: unknown key [tool.ascendify.fit] {unknown[0]}; known keys: {', '.join(KEYS)}")
    inputs = cfg.get("inputs", [])
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
        raise ValueError(f"{path}: [tool.ascendify.fit] inputs must be a list of 'name:shape:dtype' strings")
    out = dict(cfg)
    out["inputs"] = inputs
    if not out.get("chip") and isinstance(table.get("chip"), str):
        out["chip"] = table["chip"]
    return out


def fit_args(cfg: dict) -> List[str]:
    """The ``ascendify fit`` arguments for a :func:`fit_config` table."""
    args = [str(cfg["factory"])]
    for spec in cfg["inputs"]:
        args += ["--input", spec]
    for key in ("chip", "optimizer", "amp", "checkpointing", "shard", "batch"):
        if cfg.get(key):
            args += [f"--{key}", str(cfg[key])]
    if cfg.get("cards"):
        args += ["--cards", str(int(cfg["cards"]))]
    return args + ["--format", "json"]


def project_fit(root: str, *, chip: Optional[str] = None, timeout: float = 600.0) -> Optional[dict]:
    """Run ``ascendify fit`` for ``root``'s ``[tool.ascendify.fit]``; ``chip`` overrides the
    config's.  Returns the fit JSON (see docs/fit.md), ``{"error": "...", "command": "..."}``
    when it could not run, or None when the project names no model factory."""
    try:
        cfg = fit_config(root)
    except ValueError as exc:
        return {"error": str(exc), "command_line": None}
    if cfg is None:
        return None
    if chip:
        cfg["chip"] = chip
    args = fit_args(cfg)
    shown = "ascendify fit " + " ".join(args[:-2])
    env = dict(os.environ)
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.abspath(root), src, env.get("PYTHONPATH", "")) if p)
    try:
        proc = subprocess.run([sys.executable, "-m", "ascendify", "fit", *args], cwd=root, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"ascendify fit took longer than {timeout:.0f} s; run it by hand: {shown}", "command_line": shown}
    if proc.returncode in (0, 1) and proc.stdout.strip():
        try:
            result = json.loads(proc.stdout)
        except ValueError:
            result = None
        if isinstance(result, dict):
            result.setdefault("command_line", shown)
            return result
    lines = [ln for ln in (proc.stderr or "").strip().splitlines() if ln.strip()]
    msg = lines[-1] if lines else f"exit code {proc.returncode}"
    return {"error": msg.replace("ascendify: error: ", ""), "command_line": shown}


def fit_rows(result: dict) -> List[dict]:
    """Rows for a report table, one per lever: ``lever``, ``batch``, ``peak``, ``reserved``,
    ``fits`` (``"yes"``/``"no"``/``"-"``), ``margin`` (human units), ``how``."""
    from ascendify.fit.render import human
    rows = []
    for r in result.get("rows") or []:
        rows.append({"lever": r["lever"], "batch": r["batch"], "peak": human(r["peak_bytes"]),
                     "reserved": human(r["reserved_bytes"]),
                     "fits": "-" if r["fits"] is None else ("yes" if r["fits"] else "no"),
                     "margin": human(r["margin_bytes"]), "how": r["how"]})
    return rows
