"""``ascendify doctor`` command."""

from __future__ import annotations

import json
import os
import sys
from typing import Dict, Optional

import click

from ascendify.options import chip_option, emit, envelope, report_options

from ascendify.errors import AscendifyError


def read_env_file(path: str) -> Dict[str, str]:
    """``env`` / ``docker inspect``-style ``KEY=VALUE`` lines (``export`` prefixes and
    quotes tolerated; NUL-separated ``/proc/<pid>/environ`` too)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(4 << 20)
    except OSError as exc:
        raise AscendifyError(f"{path}: cannot read the --env-file ({exc.strerror or exc})")
    text = raw.decode("utf-8", "replace")
    sep = "\0" if "\0" in text else "\n"
    out: Dict[str, str] = {}
    for line in text.split(sep):
        s = line.strip()
        if s.startswith("export "):
            s = s[7:].strip()
        if not s or s.startswith("#") or "=" not in s:
            continue
        k, v = s.split("=", 1)
        k = k.strip()
        if not k.replace("_", "").isalnum():
            continue
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            v = v[1:-1]
        out[k] = v
    return out


def _check_chip(chip: str) -> None:
    """A --chip the KB knows neither as a soc_version nor as a family is a usage error (exit 2), as
    for fit and export: the install hints would be for no chip at all."""
    from ascendify.kb import chips as kbchips

    text = chip.strip()
    if text and (kbchips.family_code(text) is not None or kbchips.chip_info(text) is not None):
        return
    names: Dict[str, list] = {}
    for alias, code in kbchips.FAMILY_ALIASES.items():
        if " " not in alias and not alias.startswith("ascend"):
            names.setdefault(code, []).append(alias)
    fams = ", ".join(f"{v[0]} ({', '.join(v[1:])})" if len(v) > 1 else v[0] for v in names.values())
    raise AscendifyError(f"doctor --chip {chip!r}: not a chip the KB knows; give a family: {fams}; "
                         f"or a soc_version such as Ascend910B3, Ascend310P3 (all {len(kbchips.all_chips())} are in docs/chips.md)")


@click.command("doctor", context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--root", "root", default="/", metavar="DIR", show_default=True,
              help="Read every file relative to DIR (a container image or an unpacked /usr/local/Ascend + /etc).")
@report_options()
@click.option("--deep", is_flag=True, help="Also import torch_npu and run a tiny op + HCCL test in a subprocess.")
@chip_option("Target chip: a soc_version (Ascend910B3) or family (910b, a3, 310p, 950) for install hints.")
@click.option("--require-npu", is_flag=True, help="Fail (exit 1) when no NPU stack or device is found.")
@click.option("--npu-smi", "npu_smi", default=None, metavar="PATH",
              help="npu-smi executable to run, or a file with saved `npu-smi info` output.")
@click.option("--npu-smi-board", default=None, metavar="FILE",
              help="Saved `npu-smi info -t board -i N -c C` output (A3/950 soc_version).")
@click.option("--env-file", default=None, metavar="FILE",
              help="Environment of the checked system (output of `env`); default: this shell (live system only).")
@click.option("--python", "python", default=None, metavar="PATH",
              help="Interpreter whose packages are checked (default: the one running ascendify).")
@click.option("--site-packages", default=None, metavar="DIR",
              help="site-packages folder to check (under --root: a target-system path).")
@click.option("--timeout", default=15.0, show_default=True, type=float, help="Seconds allowed for each npu-smi call.")
@click.option("--deep-timeout", default=180.0, show_default=True, type=float, help="Seconds allowed for --deep.")
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@click.option("-v", "--verbose", is_flag=True, help="Show every check, with sources.")
def doctor(root: str, fmt: str, output_file: Optional[str], deep: bool, chip: Optional[str], require_npu: bool, npu_smi: Optional[str],
           npu_smi_board: Optional[str], env_file: Optional[str], python: Optional[str],
           site_packages: Optional[str], timeout: float, deep_timeout: float, strict: bool, verbose: bool) -> int:
    """Check the torch / torch_npu / CANN / driver / chip stack and say exactly what is wrong.

    Exit 0: usable, or no Ascend stack at all (unless --require-npu); 1: a check failed
    (or warned, with --strict).  JSON schema: docs/doctor.md.
    """
    from ascendify.doctor.core import Options, run_doctor
    from ascendify.doctor.render import render_text

    if chip is not None:
        _check_chip(chip)
    if not os.path.isdir(root):
        raise AscendifyError(f"--root {root}: not a directory")
    if npu_smi and not os.path.exists(npu_smi):
        raise AscendifyError(f"--npu-smi {npu_smi}: no such file (give the npu-smi executable or a saved output file)")
    live = os.path.abspath(root) == "/"
    if env_file:
        env: Optional[Dict[str, str]] = read_env_file(env_file)
        label = env_file
    elif live:
        env, label = dict(os.environ), "this shell"
    else:
        env, label = None, "unknown"
    opts = Options(root=root, env=env, env_label=label, npu_smi=npu_smi, npu_smi_board=npu_smi_board, chip=chip,
                   require_npu=require_npu, deep=deep, python=python, site_packages=site_packages,
                   timeout=timeout, deep_timeout=deep_timeout)
    report = run_doctor(opts)
    if fmt == "json":
        emit(json.dumps(envelope("doctor", report.to_dict(strict)), indent=2, ensure_ascii=False) + "\n", output_file)
    else:
        color = output_file is None and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        from ascendify.termtable import report_width

        emit(render_text(report, color=color, verbose=verbose, strict=strict, width=report_width()) + "\n", output_file)
    return report.exit_code(strict)
