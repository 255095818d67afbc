"""Input specs, ATC dynamic-shape planning and the ``atc`` command line.

All ATC facts here (flag spellings, the four mutually exclusive dynamic modes,
profile counts, ``-1`` placement, error codes) are from
``accuracy-profiling-atc.md`` §1.1–1.3 (ATC ``--help`` in hicann/ge, msit's
``atc_args_map.py``, hiascend ATC pages).
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Optional, Sequence

from ascendify.errors import AscendifyError

DTYPES = {"float32": "float32", "fp32": "float32", "float": "float32", "float16": "float16", "fp16": "float16",
          "half": "float16", "int64": "int64", "long": "int64", "int32": "int32", "int": "int32", "uint8": "uint8",
          "int8": "int8", "bool": "bool"}

_INTS = ("int64", "int32", "int8", "uint8")

#: profile count must lie in (1, 100] (E10035 / E10036); 256 on Ascend 950-class parts
MIN_PROFILES, MAX_PROFILES = 2, 100
MAX_BATCH_RECOMMENDED = 2048
PRECISION_MODES = ("force_fp16", "force_fp32", "cube_fp16in_fp32out", "allow_fp32_to_fp16", "must_keep_origin_dtype",
                   "allow_mix_precision", "allow_mix_precision_fp16", "allow_mix_precision_bf16", "allow_fp32_to_bf16")
SOC_PATTERN = re.compile(r"^Ascend(310|310P[13]|310B[14]|910|910[A-Z]?|910B[1-4]|910_93\w*|950\w*|\d{3}\w*)$")


@dataclass
class Dim:
    """One axis of an input: a fixed size, ``-1`` (dynamic) or a range ``lo~hi``."""

    value: int = 0
    lo: int = 0
    hi: int = 0

    @property
    def dynamic(self) -> bool:
        return self.value == -1 and not self.is_range

    @property
    def is_range(self) -> bool:
        return self.hi > 0

    def __str__(self) -> str:
        return f"{self.lo}~{self.hi}" if self.is_range else str(self.value)


@dataclass
class InputSpec:
    """``name:d0,d1,...:dtype[:lo..hi]`` — dims are integers, ``-1`` or ``lo~hi``;
    the optional value range (``lo..hi``, or the old ``low-high``: one parser,
    :func:`ascendify.probe.spec.parse_value_range`) is used for the example input,
    both ends included for integers (integer inputs default to 0..1, i.e. token
    ids/masks that are valid for any vocabulary)."""

    name: str
    dims: list[Dim]
    dtype: str = "float32"
    value_range: Optional[tuple[float, float]] = None

    @property
    def rank(self) -> int:
        return len(self.dims)

    def shape_text(self) -> str:
        return ",".join(str(d) for d in self.dims)

    @property
    def dynamic_axes(self) -> list[int]:
        return [i for i, d in enumerate(self.dims) if d.dynamic or d.is_range]


def parse_input(text: str) -> InputSpec:
    """Parse one ``--input`` value.  Raises ``AscendifyError`` with the expected format."""
    parts = text.strip().split(":")
    fmt = "NAME:d0,d1,...[:dtype[:lo..hi]], e.g. x:-1,3,224,224:float32"
    if len(parts) < 2 or not parts[0]:
        raise AscendifyError(f"--input '{text}': expected {fmt}")
    name = parts[0].strip()
    if not re.match(r"^[A-Za-z_][\w.\-/]*$", name):
        raise AscendifyError(f"--input '{text}': '{name}' is not a usable input name")
    dims: list[Dim] = []
    if parts[1].strip():
        for tok in parts[1].split(","):
            tok = tok.strip()
            m = re.match(r"^(\d+)~(\d+)$", tok)
            if m:
                lo, hi = int(m.group(1)), int(m.group(2))
                if not 1 <= lo <= hi:
                    raise AscendifyError(f"--input '{text}': range '{tok}' needs 1 <= lo <= hi")
                dims.append(Dim(-1, lo, hi))
                continue
            try:
                v = int(tok)
            except ValueError:
                raise AscendifyError(f"--input '{text}': dim '{tok}' is not an integer, -1 or lo~hi ({fmt})") from None
            if v == 0 or v < -1:
                raise AscendifyError(f"--input '{text}': dim {v} must be positive or -1")
            dims.append(Dim(v))
    dtype = "float32"
    if len(parts) > 2 and parts[2].strip():
        key = parts[2].strip().lower()
        if key not in DTYPES:
            raise AscendifyError(f"--input '{text}': dtype '{parts[2]}' not one of {', '.join(sorted(set(DTYPES.values())))}")
        dtype = DTYPES[key]
    vr = None
    if len(parts) > 3 and parts[3].strip():
        from ascendify.probe.spec import parse_value_range

        try:
            r = parse_value_range(parts[3])
        except ValueError as exc:
            raise AscendifyError(f"--input '{text}': {exc}") from None
        # value_range is inclusive (example_inputs draws integers from lo..hi); the old
        # low-high spelling excludes high for integers, as probe always did
        try:
            vr = (r.lo, r.hi) if dtype not in _INTS else r.int_inclusive()
        except ValueError as exc:
            raise AscendifyError(f"--input '{text}': value range '{parts[3].strip()}': {exc}") from None
    if len(parts) > 4:
        raise AscendifyError(f"--input '{text}': too many ':' fields ({fmt})")
    return InputSpec(name, dims, dtype, vr)


def parse_profiles(text: str, option: str) -> list[list[int]]:
    """``"1,2,4,8"`` (one value per profile, for --dynamic-batch) or ``"224,224;448,448"``
    (``;`` between profiles) → list of integer lists."""
    t = text.strip().strip('"')
    if option == "--dynamic-batch":
        groups = [g for g in re.split(r"[;,]", t) if g.strip()]
        rows = [[g] for g in groups]
    else:
        rows = [[v for v in g.split(",")] for g in t.split(";") if g.strip()]
    out = []
    for r in rows:
        try:
            out.append([int(v) for v in r])
        except ValueError:
            raise AscendifyError(f"{option} '{text}': profiles must be integers ('1,2,4,8' or '224,224;448,448')") from None
    return out


@dataclass
class AtcPlan:
    """The shape part of the atc command: ``input_shape`` text, the one dynamic option
    (``flag``, ``value``) or ``None``, ``input_format``, and the example values used for
    export/validation (``profiles``: one dict input→shape per profile)."""

    input_shape: str
    flag: Optional[str]
    value: Optional[str]
    input_format: str
    profiles: list[dict[str, list[int]]]
    mode: str
    notes: list[str] = field(default_factory=list)


def _check_counts(profiles: list[list[int]], option: str, code_hint: str) -> None:
    n = len(profiles)
    if n < MIN_PROFILES:
        raise AscendifyError(f"{option}: {n} profile given; ATC needs {MIN_PROFILES}..{MAX_PROFILES} (E10035); "
                             "for a single shape use a fixed --input shape instead of -1")
    if n > MAX_PROFILES:
        raise AscendifyError(f"{option}: {n} profiles; ATC accepts at most {MAX_PROFILES} (E10036; 256 on Ascend 950-class parts)")
    for p in profiles:
        if any(v <= 0 for v in p):
            raise AscendifyError(f"{option}: profile {','.join(map(str, p))} has a non-positive value (E10038)")
    seen = set()
    for p in profiles:
        t = tuple(p)
        if t in seen:
            raise AscendifyError(f"{option}: profile {','.join(map(str, p))} is repeated; profiles must be unique (E10039)")
        seen.add(t)
    _ = code_hint


def plan_dynamic(inputs: Sequence[InputSpec], batch: Optional[str] = None, image_size: Optional[str] = None,
                 dims: Optional[str] = None, layout: str = "NCHW", aipp: bool = False) -> AtcPlan:
    """Choose and validate ATC's dynamic-shape option for ``inputs``.

    Enforces (accuracy-profiling-atc.md §1.3): at most one of dynamic batch / image size /
    dims / shape ranges (E10009); a ``-1`` needs a dynamic option (E10011) and an option
    needs a ``-1`` (E10040); batch: ``-1`` only on axis 0 (E10018), at least one input with
    N = -1 (E10031); image size: ``-1`` only on H and W of a 4-D NCHW/NHWC input (E10019),
    two values per profile (E10020); dims: values per profile = number of ``-1`` across all
    inputs, in input order (E10045/E10046), same count in every profile (E10037), no AIPP;
    2..100 unique positive profiles (E10035/E10036/E10038/E10039).
    Raises ``AscendifyError`` with the ATC error code on a violation."""
    if not inputs:
        raise AscendifyError("give at least one --input NAME:d0,d1,...:dtype")
    names = [i.name for i in inputs]
    if len(set(names)) != len(names):
        raise AscendifyError(f"--input names must be unique ({', '.join(names)})")
    given = [o for o, v in (("--dynamic-batch", batch), ("--dynamic-image-size", image_size), ("--dynamic-dims", dims)) if v]
    has_range = any(d.is_range for i in inputs for d in i.dims)
    has_m1 = any(d.dynamic for i in inputs for d in i.dims)
    if len(given) > 1:
        raise AscendifyError(f"{' and '.join(given)} cannot be combined: ATC takes exactly one dynamic option (E10009)")
    if has_range and given:
        raise AscendifyError(f"shape ranges (lo~hi) cannot be combined with {given[0]} (E10009); use -1 with profiles, or ranges alone")
    if has_range and has_m1:
        raise AscendifyError("mixing -1 and lo~hi dims: with ranges, write every dynamic dim as lo~hi (or -1 for 'any')")
    lay = layout.upper()
    all4d = all(i.rank == 4 for i in inputs)
    fmt = lay if all4d else "ND"
    shape_text = ";".join(f"{i.name}:{i.shape_text()}" for i in inputs)
    static = {i.name: [d.value for d in i.dims] for i in inputs}

    if has_range:
        rep = {i.name: [d.lo if d.is_range else d.value for d in i.dims] for i in inputs}
        hi = {i.name: [d.hi if d.is_range else d.value for d in i.dims] for i in inputs}
        return AtcPlan(shape_text, None, None, fmt, [rep, hi] if hi != rep else [rep], "shape_range",
                       ["shape ranges compile ops in dynamic-shape mode (slower) and are not supported on "
                        "Atlas 200/300/500 inference (310/310B-class) parts"])
    if not given:
        if has_m1:
            dyn = [(i.name, ax) for i in inputs for ax, d in enumerate(i.dims) if d.dynamic]
            only_n = all(ax == 0 for _, ax in dyn)
            hint = "--dynamic-batch 1,2,4,8" if only_n else "--dynamic-dims (or --dynamic-image-size for H,W)"
            raise AscendifyError(f"-1 in {', '.join(f'{n}[{a}]' for n, a in dyn)} needs a dynamic option, else ATC "
                                 f"fails with E10011; add {hint}, or fix the shape")
        return AtcPlan(shape_text, None, None, fmt, [static], "static")
    opt = given[0]
    if not has_m1:
        raise AscendifyError(f"{opt} given but no --input has a -1 dim (E10040): mark the dynamic axes with -1")

    if opt == "--dynamic-batch":
        profs = parse_profiles(batch or "", opt)
        for i in inputs:
            for ax, d in enumerate(i.dims):
                if d.dynamic and ax != 0:
                    raise AscendifyError(f"--dynamic-batch: input {i.name} has -1 on axis {ax}; dynamic batch allows -1 "
                                         "only on axis 0 (E10018); use --dynamic-dims (ND) or --dynamic-image-size")
        if not any(i.dims and i.dims[0].dynamic for i in inputs):
            raise AscendifyError("--dynamic-batch: no input has -1 on axis 0 (E10031)")
        _check_counts(profs, opt, "batch")
        notes = []
        if any(p[0] > MAX_BATCH_RECOMMENDED for p in profs):
            notes.append(f"batch values above {MAX_BATCH_RECOMMENDED} are outside ATC's recommended range")
        plist = [{i.name: [p[0] if d.dynamic else d.value for d in i.dims] for i in inputs} for p in profs]
        return AtcPlan(shape_text, "--dynamic_batch_size", ",".join(str(p[0]) for p in profs), fmt, plist,
                       "dynamic_batch", notes)

    if opt == "--dynamic-image-size":
        profs = parse_profiles(image_size or "", opt)
        hw = (2, 3) if lay == "NCHW" else (1, 2)
        for i in inputs:
            dyn = [ax for ax, d in enumerate(i.dims) if d.dynamic]
            if not dyn:
                continue
            if i.rank != 4 or tuple(dyn) != hw:
                raise AscendifyError(f"--dynamic-image-size: input {i.name} has -1 on axes {dyn}; it must be a 4-D "
                                     f"{lay} input with -1 exactly on H and W (axes {hw[0]},{hw[1]}) (E10019)")
        for p in profs:
            if len(p) != 2:
                raise AscendifyError(f"--dynamic-image-size: profile {','.join(map(str, p))} must be exactly 'h,w' (E10020)")
        _check_counts(profs, opt, "image")
        if not all4d:
            fmt = lay
        plist = []
        for p in profs:
            d = {}
            for i in inputs:
                shp = [dd.value for dd in i.dims]
                if any(dd.dynamic for dd in i.dims):
                    shp[hw[0]], shp[hw[1]] = p[0], p[1]
                d[i.name] = shp
            plist.append(d)
        return AtcPlan(shape_text, "--dynamic_image_size", ";".join(f"{p[0]},{p[1]}" for p in profs), fmt, plist,
                       "dynamic_image_size")

    # --dynamic-dims
    if aipp:
        raise AscendifyError("--dynamic-dims cannot be used with AIPP (--insert_op_conf); use --dynamic-batch or "
                             "--dynamic-image-size, or in-graph --normalize")
    profs = parse_profiles(dims or "", opt)
    n_dyn = sum(1 for i in inputs for d in i.dims if d.dynamic)
    lens = {len(p) for p in profs}
    if len(lens) > 1:
        raise AscendifyError(f"--dynamic-dims: profiles have different lengths {sorted(lens)}; every profile needs the same count (E10037)")
    if lens != {n_dyn}:
        raise AscendifyError(f"--dynamic-dims: each profile needs {n_dyn} values (one per -1, in input order across "
                             f"{', '.join(names)}), got {lens.pop()} (E10045/E10046)")
    _check_counts(profs, opt, "dims")
    notes = []
    if n_dyn > 4:
        notes.append(f"{n_dyn} dynamic dims per profile: older ATC docs allow at most 4")
    plist = []
    for p in profs:
        it = iter(p)
        plist.append({i.name: [next(it) if d.dynamic else d.value for d in i.dims] for i in inputs})
    return AtcPlan(shape_text, "--dynamic_dims", ";".join(",".join(map(str, p)) for p in profs), "ND", plist,
                   "dynamic_dims", notes)


def output_prefix(onnx_path: str) -> str:
    """ATC ``--output`` is a path prefix without suffix (ATC appends .om)."""
    return onnx_path[:-5] if onnx_path.lower().endswith(".onnx") else onnx_path


def atc_args(onnx_path: str, plan: AtcPlan, soc_version: Optional[str], precision_mode: str = "force_fp16",
             insert_op_conf: Optional[str] = None, output_type: Optional[str] = "FP32") -> list[str]:
    """The atc argument list, in a fixed order: --model --framework=5 --output --soc_version
    --input_format --input_shape [dynamic option] [--insert_op_conf] --precision_mode
    [--output_type].  Without ``soc_version`` a ``${SOC_VERSION}`` placeholder is used."""
    if precision_mode not in PRECISION_MODES:
        raise AscendifyError(f"--precision-mode '{precision_mode}': use one of {', '.join(PRECISION_MODES)}")
    args = ["atc", f"--model={onnx_path}", "--framework=5", f"--output={output_prefix(onnx_path)}",
            f"--soc_version={soc_version or '${SOC_VERSION}'}", f"--input_format={plan.input_format}",
            f"--input_shape={plan.input_shape}"]
    if plan.flag:
        args.append(f"{plan.flag}={plan.value}")
    if insert_op_conf:
        args.append(f"--insert_op_conf={insert_op_conf}")
    args.append(f"--precision_mode={precision_mode}")
    if output_type:
        args.append(f"--output_type={output_type}")
    return args


def render_command(args: Sequence[str]) -> str:
    """One shell line: --input_shape and profile lists are double-quoted (as ATC's docs
    write them; E10054 otherwise), other values shell-quoted only when needed."""
    out = [args[0]]
    for a in args[1:]:
        if "=" in a:
            k, v = a.split("=", 1)
            if v.startswith("${"):
                out.append(f'{k}="{v}"')
            elif k in ("--input_shape", "--dynamic_batch_size", "--dynamic_image_size", "--dynamic_dims") \
                    and re.match(r"^[\w.,;:~/\-]*$", v):
                out.append(f'{k}="{v}"')
            elif v != shlex.quote(v):
                out.append(f"{k}={shlex.quote(v)}")
            else:
                out.append(a)
        else:
            out.append(shlex.quote(a))
    return " ".join(out)


def atc_script(onnx_path: str, plan: AtcPlan, soc_version: Optional[str], precision_mode: str = "force_fp16",
               insert_op_conf: Optional[str] = None, comments: Sequence[str] = ()) -> str:
    """The text of ``<prefix>.atc.sh``: a POSIX sh script that runs the atc command of
    :func:`atc_args` from any folder.  The ONNX file, the AIPP config and the .om output lie
    beside the script, so it names them by file name and first changes to its own folder
    (``cd "$(dirname "$0")"``).  ``comments`` become ``#`` lines.  Without ``soc_version``
    the script stops with a message when ``$SOC_VERSION`` is unset."""
    folder = os.path.dirname(os.path.abspath(onnx_path))
    if insert_op_conf and os.path.dirname(os.path.abspath(insert_op_conf)) != folder:
        conf = os.path.abspath(insert_op_conf)  # not beside the model: keep an absolute path
    else:
        conf = os.path.basename(insert_op_conf) if insert_op_conf else None
    args = atc_args(os.path.basename(onnx_path), plan, soc_version, precision_mode, insert_op_conf=conf)
    lines = ["#!/bin/sh"] + [f"# {c}" for c in comments] + ["set -e"]
    if not soc_version:
        lines.append(': "${SOC_VERSION:?set SOC_VERSION from npu-smi info (Name column, prefixed with Ascend), '
                     'e.g. SOC_VERSION=Ascend910B3}"')
    lines += ["# the files named below lie beside this script: run it from any folder",
              'cd "$(dirname "$0")"', render_command(args), ""]
    return "\n".join(lines)


def precision_note(mode: str) -> str:
    """Why this --precision_mode (accuracy-profiling-atc.md §1.2, §2.4)."""
    if mode == "force_fp16":
        return ("--precision_mode=force_fp16 is ATC's default: ops that support fp16 run in fp16 (fast), so outputs can "
                "drift from PyTorch fp32 or overflow beyond 65504. If 'ascendify compare' fails, locate the layer with "
                "'ascendify compare --layers model.onnx --data DIR', keep those nodes with --keep_dtype=FILE, or rebuild "
                "with --precision_mode=allow_mix_precision (or must_keep_origin_dtype for an fp32 reference build).")
    if mode == "must_keep_origin_dtype":
        return ("--precision_mode=must_keep_origin_dtype keeps fp32 ops in fp32 (slowest, closest to PyTorch); "
                "use it as the reference build when checking accuracy.")
    if mode.startswith("allow_mix_precision"):
        return ("--precision_mode=" + mode + " lets ATC run black-listed (precision-sensitive) ops in fp32 and the rest "
                "in fp16/bf16; adjust the lists with --modify_mixlist.")
    return f"--precision_mode={mode}: see ATC's documentation of precision modes."
