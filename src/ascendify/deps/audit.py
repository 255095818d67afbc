"""The dependency audit: CUDA-only requirements and torch / torchvision / torchaudio / torch-npu
pairs, as DEP findings at the requirement's line.

Knowledge (data, not code): ``deps/data/packages.toml`` (one entry per package family: names,
why, replacement, public source, verified, safe_replacement), ``deps/data/pairing.json``
(torchvision / torchaudio per torch line, from pytorch/vision's README and torchaudio's
compatibility matrix) and the version KB (``kb/data/versions.json``: the torch_npu built for each
torch, from Ascend/pytorch's compatibility table).
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import lru_cache
from typing import Dict, Iterable, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.deps.parse import DepFile, Requirement, is_dependency_file, read_file, split_lines
from ascendify.diagnostics import Finding
from ascendify.semantic.noqa import noqa_map, suppresses

_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
TORCH_KEYS = ("torch", "pytorch")
NPU_KEYS = ("torch-npu",)
FIX_KINDS = ("requirements", "pep621", "poetry")
_CUDA_INDEX = re.compile(r"download\.pytorch\.org/whl/(?:nightly/|test/)?cu\d+", re.I)
_NVIDIA_INDEX = re.compile(r"^https?://pypi\.nvidia\.com", re.I)


@lru_cache(maxsize=1)
def packages() -> Tuple[dict, ...]:
    """The package knowledge table (``deps/data/packages.toml``), validated."""
    with open(os.path.join(_DATA, "packages.toml"), "rb") as fh:
        doc = tomllib.load(fh)
    out = []
    for p in doc.get("package", []):
        for f in ("id", "names", "code", "why", "replacement", "source", "verified", "safe_replacement"):
            if f not in p:
                raise ValueError(f"deps/data/packages.toml: {p.get('id', '?')} lacks {f}")
        p = dict(p)
        p["_patterns"] = [re.compile(x) for x in p.get("patterns", [])]
        out.append(p)
    return tuple(out)


@lru_cache(maxsize=1)
def pairing() -> dict:
    with open(os.path.join(_DATA, "pairing.json"), encoding="utf-8") as fh:
        return json.load(fh)


def match_package(req: Requirement) -> Optional[dict]:
    """The knowledge entry for a requirement, or None."""
    url = req.url.lower()
    for p in packages():
        if p.get("conda") and req.kind != "conda":
            continue
        if req.key in p["names"] or any(rx.search(req.key) for rx in p["_patterns"]):
            return p
        if url and any(u.lower() in url for u in p.get("url_patterns", [])):
            return p
    return None


def _line_minor(version: str) -> str:
    parts = re.findall(r"\d+", version)
    return ".".join(parts[:2])


# ----------------------------------------------------------------------------- discovery
def discover(paths: Iterable[str], settings) -> List[Tuple[str, str]]:
    """(path, display path) of every dependency file under the folders in ``paths`` (and files
    named explicitly), walking as the scan does: excluded folders and files (``settings.is_excluded``)
    left out, symlinked folders not followed."""
    from ascendify.fsutil import display_path

    cwd = os.getcwd()
    out: List[Tuple[str, str]] = []
    seen: set = set()
    for given in paths:
        if os.path.isfile(given):
            if is_dependency_file(given):
                real = os.path.realpath(given)
                if real not in seen:
                    seen.add(real)
                    out.append((given, display_path(given, cwd)))
            continue
        if not os.path.isdir(given):
            continue
        for dirpath, dirnames, filenames in os.walk(given):
            dirnames[:] = sorted(d for d in dirnames if not (settings.is_excluded(os.path.relpath(os.path.join(dirpath, d), given)) or settings.is_excluded(d))
                                 and not os.path.islink(os.path.join(dirpath, d)))
            for fn in sorted(filenames):
                full = os.path.join(dirpath, fn)
                if not is_dependency_file(full) or settings.is_excluded(os.path.relpath(full, given)):
                    continue
                real = os.path.realpath(full)
                if real in seen or not os.path.isfile(full):
                    continue
                seen.add(real)
                out.append((full, display_path(full, cwd)))
    return out


def read_all(entries: List[Tuple[str, str]]) -> List[DepFile]:
    """Every dependency file, each once (a file included with ``-r`` is read once, where it is first reached)."""
    files: List[DepFile] = []
    seen_real: set = set()
    by_display: Dict[str, DepFile] = {}
    for path, display in entries:
        if os.path.realpath(path) in seen_real:
            continue
        inc_seen: set = set()
        for df in read_file(path, display, inc_seen):
            if df.path in by_display:
                continue
            by_display[df.path] = df
            files.append(df)
        seen_real |= inc_seen or {os.path.realpath(path)}
    return files


# ----------------------------------------------------------------------------- the audit
class _Reporter:
    def __init__(self, settings, rules):
        self.settings = settings
        self.rules = rules
        self.findings: List[Finding] = []
        self._noqa: Dict[str, dict] = {}  # file -> its ``# noqa`` lines (semantic.noqa, as for Python files)

    def _suppressed(self, df: DepFile, line: int, code: str) -> bool:
        got = self._noqa.get(df.path)
        if got is None:
            got = self._noqa[df.path] = noqa_map(split_lines(df.text) if df.text else [])
        return line in got and suppresses(got[line], code)

    def add(self, code: str, df: DepFile, line: int, col: int, end_col: int, fields: dict, severity: Optional[str] = None, fix=None) -> None:
        if self.settings is not None and not self.settings.enabled(code, df.path):
            return
        if self._suppressed(df, line, code):
            return
        r = self.rules[code]
        try:
            msg = r.message.format(**fields)
        except (KeyError, IndexError):
            msg = r.message
        self.findings.append(Finding(code, msg, df.path, line, col, line, max(end_col, col), severity or r.severity, r.category, fix))


def audit(files: List[DepFile], settings=None) -> List[Finding]:
    """DEP findings for ``files`` (one project: version pairs are judged across all of them).

    ``settings`` (``ascendify.config.Settings`` or None) selects rules and per-file ignores; a line
    with ``# noqa`` / ``# noqa: DEP001`` is not reported."""
    from ascendify.rules.registry import load_rules

    rep = _Reporter(settings, load_rules())
    all_reqs = [r for df in files for r in df.requirements]
    keys = {r.key for r in all_reqs}
    by_path = {df.path: df for df in files}
    for df in files:
        if df.problem:
            rep.add("DEP007", df, 1, 0, 0, {"what": f"{df.path}: {df.problem}"})
        for line, col, note in df.notes:
            rep.add("DEP007", df, line, col, col, {"what": note})
        for ix in df.indexes:
            if ix.option == "conda-channel":
                if ix.url.strip().lower() == "nvidia":
                    rep.add("DEP002", df, ix.line, ix.col, ix.end_col, _cuda_fields("the conda channel nvidia supplies CUDA packages", conda=True))
            elif _CUDA_INDEX.search(ix.url):
                rep.add("DEP002", df, ix.line, ix.col, ix.end_col, _cuda_fields(f"{ix.option} {ix.url} is PyTorch's CUDA wheel index"))
            elif _NVIDIA_INDEX.search(ix.url):
                fields = _cuda_fields(f"{ix.option} {ix.url} is NVIDIA's index of CUDA packages (RAPIDS, TensorRT, ...)")
                fields.update(why="nothing it serves runs on an Ascend host.", replacement="drop the index with the packages that need it",
                              source="https://rapids.ai/wsl2.html (RAPIDS installs from https://pypi.nvidia.com for CUDA 11/12 environments)")
                rep.add("DEP002", df, ix.line, ix.col, ix.end_col, fields)
        for req in df.requirements:
            _audit_requirement(rep, df, req, keys)
    _audit_pairs(rep, files, by_path)
    rep.findings.sort(key=Finding.sort_key)
    return rep.findings


def _cuda_fields(what: str, conda: bool = False) -> dict:
    if conda:
        return {"what": what, "why": "conda's CUDA packages select the CUDA build of PyTorch; there is no conda build of torch_npu.",
                "replacement": "install torch (CPU build on x86) and torch-npu with pip", "source": "https://pypi.org/project/torch-npu/"}
    return {"what": what, "why": "torch_npu is built against the CPU build of torch; a CUDA build pulls CUDA libraries an Ascend host cannot use.",
            "replacement": "the CPU build (x86: torch==X+cpu from https://download.pytorch.org/whl/cpu; aarch64: the plain PyPI wheel) plus the matching torch-npu",
            "source": "https://pypi.org/project/torch-npu/"}


def _audit_requirement(rep: _Reporter, df: DepFile, req: Requirement, keys: set) -> None:
    if req.key in TORCH_KEYS + ("torchvision", "torchaudio"):
        label = f"{req.name}{'==' + req.version if req.version else ''}"
        if req.local and req.local.lower().startswith("cu"):
            rep.add("DEP002", df, req.line, req.col, req.end_col, _cuda_fields(f"{label}+{req.local} is a CUDA build"))
        elif req.url and (re.search(r"(\+|%2B)cu\d+", req.url, re.I) or _CUDA_INDEX.search(req.url)):
            rep.add("DEP002", df, req.line, req.col, req.end_col, _cuda_fields(f"{req.name} @ {req.url} is a CUDA wheel"))
        elif req.kind == "conda" and "cuda" in req.build.lower():
            rep.add("DEP002", df, req.line, req.col, req.end_col, _cuda_fields(f"{req.text}: the build string selects CUDA", conda=True))
        return
    p = match_package(req)
    if p is None:
        return
    if any(u in keys for u in p.get("unless", [])):
        return
    fields = {"name": req.name if not req.url else f"{req.name} ({req.url})", "what": f"{req.text}", "why": p["why"], "replacement": p["replacement"],
              "source": p["source"], "unverified": "" if p["verified"] else "; unverified: no public source confirms the replacement"}
    if p["code"] == "DEP002":
        fields["what"] = f"{req.text} is a CUDA package" if req.kind == "conda" else f"{req.name} is a CUDA runtime wheel"
    fix = None
    if p.get("safe_replacement") and p["verified"] and df.kind in ("requirements", "pyproject") and req.kind in FIX_KINDS:
        from ascendify.deps.fix import replace_fix

        fix = replace_fix(df, req, p["safe_replacement"])
    rep.add(p["code"], df, req.line, req.col, req.end_col, fields, severity=p.get("severity"), fix=fix)


def _audit_pairs(rep: _Reporter, files: List[DepFile], by_path: Dict[str, DepFile]) -> None:
    from ascendify.kb import versions as V

    torch_pins = [(df, r) for df in files for r in df.requirements if r.key in TORCH_KEYS and r.exact]
    distinct = {V.base_version(r.version) or r.version for _, r in torch_pins}
    has_npu = any(r.key in NPU_KEYS for df in files for r in df.requirements)

    def torch_for(df: DepFile) -> Optional[Requirement]:
        same = [r for d, r in torch_pins if d is df]
        if same:
            return same[0]
        return torch_pins[0][1] if len(distinct) == 1 else None

    tab = pairing()
    for df in files:
        for req in df.requirements:
            if req.key in ("torchvision", "torchaudio") and req.exact:
                t = torch_for(df)
                if t is None:
                    continue
                tl, want = _line_minor(t.version), None
                table = tab[req.key]
                got = _line_minor(req.version)
                want = table["by_torch"].get(tl)
                if req.key == "torchaudio" and _vkey(got) >= _vkey(table.get("stable_abi_from", "99")) and _vkey(tl) >= _vkey(got):
                    continue  # torchaudio 2.11+ supports its torch and every later one
                if want is None or want == got:
                    continue
                rep.add("DEP003", df, req.line, req.col, req.end_col,
                        {"pkg": req.name, "version": req.version, "torch": t.version, "torch_line": tl, "want": want, "source": table["source"]})
            if req.key in NPU_KEYS and req.exact:
                t = torch_for(df)
                if t is None:
                    continue
                built = V.base_version(req.version)
                if built and built != V.base_version(t.version):
                    want = _npu_for(t.version)
                    rep.add("DEP006", df, req.line, req.col, req.end_col,
                            {"torch_npu": req.version, "built_for": built, "torch": t.version, "want": want[0] if want else "(none: see DEP005)"})
    known = sorted({V.base_version(r.torch) for r in V.releases()} - {None}, key=_vkey)
    for df, t in torch_pins:
        want = _npu_for(t.version)
        if want is None:
            near = [k for k in known if _line_minor(k) == _line_minor(t.version)]
            if not near:  # the releases either side of the pinned one
                i = sum(1 for k in known if _vkey(k) < _vkey(t.version))
                near = known[max(0, i - 2): i + 2]
            target = getattr(rep.settings, "torch_npu", "") or ""
            built = V.base_version(next((r.torch for r in V.releases() if r.torch_npu == target), "") or "") if target else ""
            wrote = (f"; the code fixes were written for torch_npu {target}" + (f" (torch {built})" if built else "")
                     + ": pin that torch, or re-run `ascendify fix` with --torch-npu for the release you pin") if target else ""
            rep.add("DEP005", df, t.line, t.col, t.end_col, {"torch": t.version, "known": ", ".join(near), "wrote": wrote})
            continue
        if has_npu:
            continue
        fix = None
        # a constraints file installs nothing; in a hash-checked file (--hash) a pin without its hash breaks the install
        if df.kind in ("requirements", "pyproject") and t.kind in FIX_KINDS and not df.constraint and "--hash" not in df.text:
            from ascendify.deps.fix import pin_fix

            fix = pin_fix(df, t, want[0])
        where = ""
        if getattr(rep.settings, "target", "npu") == "agnostic":
            # the agnostic copy must still install on CUDA and CPU hosts: torch 2.5+ imports every installed
            # "torch.backends" entry point with `import torch` and raises if one fails (torch 2.6.0's
            # torch/__init__.py _import_device_backends), and torch_npu does not import without CANN
            fix = None
            where = " on Ascend hosts only (not in the agnostic copy's requirements: installed on a CUDA or CPU host, it makes `import torch` raise)"
        rep.add("DEP004", df, t.line, t.col, t.end_col, {"torch": t.version, "torch_npu": want[0], "cann": want[1], "where": where}, fix=fix)


def _vkey(v: str) -> tuple:
    return tuple(int(x) for x in re.findall(r"\d+", v)[:3]) or (0,)


def _npu_for(torch_version: str) -> Optional[Tuple[str, str]]:
    """(torch_npu release, CANN) built for a torch release: the newest row of the version KB
    for that torch, else the newest PyPI build the table does not map to a CANN; None if none."""
    from ascendify.kb import versions as V

    rows, others = V.torch_npu_for_torch(torch_version)
    if rows:
        return rows[0].torch_npu, rows[0].cann
    if others:
        return others[-1], "not mapped by the compatibility table"
    return None


def audit_paths(paths: Iterable[str], settings=None) -> Tuple[List[Finding], List[DepFile]]:
    """Discover, read and audit the dependency files of ``paths``: (findings, files read)."""
    if settings is None:
        from ascendify.config import Settings

        settings = Settings().validate()
    files = read_all(discover(paths, settings))
    return audit(files, settings), files
