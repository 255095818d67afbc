"""The torch_npu release a project is judged against, decided once for every command.

Order: ``--torch-npu`` on the command line; ``torch-npu`` in ``[tool.ascendify]``; the torch
the project pins (requirements*.txt, constraints*.txt, pyproject dependencies, setup.cfg /
setup.py ``install_requires``, environment.yml, Pipfile, poetry.lock, Pipfile.lock), mapped to
the torch_npu line built for that torch (torch_npu X.Y.Z pairs with torch X.Y.Z: the version KB,
``kb/data/versions.json``, from Ascend/pytorch's README table); else the newest recommended
stable release, the one ``ascendify doctor`` recommends (``versions.recommended()``).

:func:`resolve` returns the release and the reason a report prints ("from requirements.txt:
torch==2.1.0").
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from ascendify.fsutil import display_path

PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")
MAX_LEVELS = 4
"""Folders walked upwards from the scanned path looking for pins (stops at a project root)."""


@dataclass(frozen=True)
class Pin:
    """A torch requirement found in a project file: ``spec`` is a PEP 440 specifier set
    (``==2.1.0``, ``>=2.1,<2.2``; ``""`` when unversioned)."""

    file: str
    spec: str
    text: str

    @property
    def exact(self) -> bool:
        """``==``, ``===`` or ``~=`` (one release line); a range is not exact."""
        return bool(re.match(r"^\s*(===?|~=)\s*[\w.*+!]+\s*$", self.spec))


@dataclass(frozen=True)
class TargetRelease:
    torch_npu: str
    reason: str
    origin: str  # "option" | "config" | "pin" | "default"


def recommended_release() -> str:
    """The newest recommended stable torch_npu, as ``doctor`` recommends it."""
    from ascendify.kb.versions import recommended

    return str(recommended().get("torch_npu"))


def default_reason() -> str:
    return "no torch pin found in the project; the newest recommended stable release, the one `ascendify doctor` recommends"


# ----------------------------------------------------------------------------- pins
_REQ_LINE = re.compile(r"^\s*(?:py)?torch\s*(?:\[[^\]]*\])?\s*(?P<spec>(?:===?|~=|!=|>=|<=|>|<)[^;#@]*)?(?:;[^#]*)?(?:#.*)?$", re.I)
_URL_PIN = re.compile(r"^\s*torch\s*@\s*\S*?/torch-(?P<v>\d+\.\d+(?:\.\d+)?)", re.I)
_CONDA_PIN = re.compile(r"^\s*-\s*['\"]?(?:pytorch|torch)(?![\w-])\s*(?P<spec>[<>=!~][^#'\"]*)?['\"]?\s*(?:#.*)?$", re.I)
_PIP_IN_YAML = re.compile(r"^\s*-\s*(?P<req>torch\b.*)$", re.I)


def _clean_spec(spec: str) -> str:
    spec = spec.split(";")[0].split("#")[0].strip().strip("'\"")
    # local versions (+cu118) are not part of the release line
    return ",".join(re.sub(r"\+[\w.]+$", "", p.strip()) for p in spec.split(",") if p.strip())


def _from_requirement(req: str, file: str) -> Optional[Pin]:
    req = req.strip()
    m = _URL_PIN.match(req)
    if m:
        return Pin(file, f"=={m.group('v')}", req)
    m = _REQ_LINE.match(req)
    if m and not re.match(r"^\s*torch[\w-]", req, re.I):  # torchvision, torch-npu, torch_geometric are not torch
        return Pin(file, _clean_spec(m.group("spec") or ""), req)
    return None


def _lines(path: str) -> List[str]:
    """A project file's lines ([] when it cannot be read: a pin file is optional)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().splitlines()
    except OSError:
        return []


def _requirements_file(path: str, seen: set) -> Iterator[Pin]:
    if path in seen or len(seen) > 20:
        return
    seen.add(path)
    for line in _lines(path):
        s = line.strip()
        if s.startswith(("-r ", "-c ", "--requirement ", "--constraint ")):
            inc = s.split(None, 1)[1].strip()
            yield from _requirements_file(os.path.join(os.path.dirname(path), inc), seen)
            continue
        if not s or s.startswith(("#", "-")):
            continue
        pin = _from_requirement(s, path)
        if pin:
            yield pin


def _toml(path: str) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _pyproject(path: str) -> Iterator[Pin]:
    d = _toml(path)
    proj = d.get("project", {})
    for req in proj.get("dependencies", []) or []:
        pin = _from_requirement(str(req), path) if isinstance(req, str) else None
        if pin:
            yield pin
    poetry = d.get("tool", {}).get("poetry", {})
    for table in [poetry.get("dependencies", {})] + [g.get("dependencies", {}) for g in poetry.get("group", {}).values() if isinstance(g, dict)]:
        v = table.get("torch") if isinstance(table, dict) else None
        if isinstance(v, dict):
            v = v.get("version")
        if isinstance(v, str):
            yield Pin(path, _poetry_spec(v), f"torch = {v!r}")
    for req in (proj.get("optional-dependencies", {}) or {}).values():
        for r in req if isinstance(req, list) else []:
            pin = _from_requirement(str(r), path)
            if pin:
                yield pin


def _poetry_spec(v: str) -> str:
    v = v.strip()
    if v.startswith("^"):
        return f">={v[1:]},<{int(v[1:].split('.')[0]) + 1}"
    if v.startswith("~") and not v.startswith("~="):
        parts = v[1:].split(".")
        return f">={v[1:]},<{parts[0]}.{int(parts[1]) + 1}" if len(parts) > 1 else f">={v[1:]}"
    if re.match(r"^\d", v):
        return f"=={v}"
    return _clean_spec(v) if v != "*" else ""


def _setup_cfg(path: str) -> Iterator[Pin]:
    import configparser

    cp = configparser.ConfigParser()
    try:
        cp.read(path, encoding="utf-8")
    except (configparser.Error, OSError):
        return
    raw = cp.get("options", "install_requires", fallback="")
    for line in raw.splitlines():
        pin = _from_requirement(line, path)
        if pin:
            yield pin


def _setup_py(path: str) -> Iterator[Pin]:
    try:
        tree = ast.parse("\n".join(_lines(path)))
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.lower().lstrip().startswith("torch"):
            pin = _from_requirement(node.value, path)
            if pin:
                yield pin


def _environment_yml(path: str) -> Iterator[Pin]:
    for line in _lines(path):
        m = _CONDA_PIN.match(line)
        if m:
            yield Pin(path, _conda_spec(m.group("spec") or ""), line.strip())
            continue
        m = _PIP_IN_YAML.match(line)
        if m:
            pin = _from_requirement(m.group("req"), path)
            if pin:
                yield pin


def _conda_spec(spec: str) -> str:
    """A conda match spec (``=2.1`` is 2.1.*, ``==2.1.0``, ``>=1.13``, ``2.1.0=py310_cu118``'s
    build string dropped) as a PEP 440 specifier."""
    parts = []
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        m = re.match(r"^(==|>=|<=|!=|~=|>|<|=)([\w.*+]+)", part)
        if not m:
            continue
        op, v = m.groups()
        if op == "=":
            op, v = "==", (v if v.endswith("*") or v.count(".") >= 2 else v + ".*")
        parts.append(op + re.sub(r"\+[\w.]+$", "", v))
    return ",".join(parts)


def _pipfile(path: str) -> Iterator[Pin]:
    d = _toml(path)
    for table in ("packages", "dev-packages"):
        v = d.get(table, {}).get("torch")
        if isinstance(v, dict):
            v = v.get("version")
        if isinstance(v, str):
            yield Pin(path, "" if v.strip() == "*" else _clean_spec(v), f"torch = {v!r}")


def _poetry_lock(path: str) -> Iterator[Pin]:
    for pkg in _toml(path).get("package", []) or []:
        if isinstance(pkg, dict) and str(pkg.get("name", "")).lower() == "torch" and pkg.get("version"):
            yield Pin(path, "==" + _clean_spec(str(pkg["version"])), f"torch {pkg['version']}")


def _pipfile_lock(path: str) -> Iterator[Pin]:
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except (OSError, ValueError):
        return
    for section in ("default", "develop"):
        v = (d.get(section) or {}).get("torch", {}).get("version") if isinstance(d.get(section), dict) else None
        if isinstance(v, str):
            yield Pin(path, _clean_spec(v), f"torch {v}")


def _files_in(folder: str) -> List[Tuple[str, object]]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out: List[Tuple[str, object]] = []
    for n in names:
        low = n.lower()
        if re.match(r"^(requirements|constraints).*\.(txt|in)$", low):
            out.append((n, _requirements_file))
    req_dir = os.path.join(folder, "requirements")
    if os.path.isdir(req_dir):
        for n in sorted(os.listdir(req_dir)):
            if n.lower().endswith((".txt", ".in")):
                out.append((os.path.join("requirements", n), _requirements_file))
    table = {"pyproject.toml": _pyproject, "setup.cfg": _setup_cfg, "setup.py": _setup_py, "environment.yml": _environment_yml,
             "environment.yaml": _environment_yml, "pipfile": _pipfile, "poetry.lock": _poetry_lock, "pipfile.lock": _pipfile_lock}
    for n in names:
        fn = table.get(n.lower())
        if fn is not None:
            out.append((n, fn))
    return out


def find_pins(start: str) -> List[Pin]:
    """Every torch requirement in the project files at ``start`` (a folder or file) and the
    folders above it, up to the first project root (.git, pyproject.toml, setup.py) or
    :data:`MAX_LEVELS` folders."""
    folder = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    pins: List[Pin] = []
    for _ in range(MAX_LEVELS):
        for name, reader in _files_in(folder):
            path = os.path.join(folder, name)
            pins.extend(reader(path, set()) if reader is _requirements_file else reader(path))  # type: ignore[operator]
        if any(os.path.exists(os.path.join(folder, m)) for m in PROJECT_MARKERS):
            break
        up = os.path.dirname(folder)
        if up == folder:
            break
        folder = up
    return pins


# ----------------------------------------------------------------------------- mapping
def _known_torch() -> List[str]:
    """torch versions with a torch_npu line, newest first (version KB + op KB)."""
    from ascendify.kb import versions as V
    from ascendify.kb.ops import releases as op_releases

    seen = {V.base_version(r.torch) for r in V.releases()} | {V.base_version(r) for r in op_releases()}
    return sorted((s for s in seen if s), key=lambda v: V.pep440_key(v) or (), reverse=True)


def torch_npu_for_pin(pin: Pin) -> Optional[str]:
    """The torch_npu line for a pinned torch: the newest torch with a torch_npu line that
    satisfies the pin (its torch_npu X.Y.Z has the same number).  For a range (``torch>=2.1``,
    ``^2.1``) the recommended release when it satisfies it.  None when nothing fits."""
    from ascendify.kb.versions import spec_matches

    if not pin.spec:
        return None
    rec = recommended_release()
    if not pin.exact and spec_matches(rec, pin.spec):
        return rec
    for v in _known_torch():
        if spec_matches(v, pin.spec):
            return v
    return None


def resolve(cli_value: Optional[str] = None, config_value: Optional[str] = None, config_file: Optional[str] = None,
            project: Optional[str] = None) -> TargetRelease:
    """Decide the target release (see the module docstring)."""
    if cli_value:
        return TargetRelease(str(cli_value), "from --torch-npu", "option")
    if config_value:
        where = os.path.basename(config_file) if config_file else "config"
        return TargetRelease(str(config_value), f"from {where}: [tool.ascendify] torch-npu = \"{config_value}\"", "config")
    if project is not None:
        root = os.path.abspath(project if os.path.isdir(project) else os.path.dirname(project) or ".")
        pins = find_pins(project)
        ordered = [p for p in pins if p.exact] + [p for p in pins if not p.exact]
        for pin in ordered:
            rel = torch_npu_for_pin(pin)
            if rel:
                how = "" if rel != recommended_release() or pin.exact else ", a range, not a pin; the recommended release satisfies it"
                return TargetRelease(rel, f"from {display_path(pin.file, root)}: torch{pin.spec}{how}", "pin")
        if ordered and ordered[0].spec:
            p = ordered[0]
            return TargetRelease(recommended_release(), f"{display_path(p.file, root)} asks for torch{p.spec}, which no torch_npu release in the "
                                 "KB pairs with; the newest recommended stable release", "default")
    return TargetRelease(recommended_release(), default_reason(), "default")


# ----------------------------------------------------------------------------- the agnostic target's torch
ACCELERATOR_TORCH = "2.6.0"
"""``--target agnostic`` writes ``torch.accelerator`` code, which exists from torch 2.6 on (PyTorch docs,
"torch.accelerator": https://docs.pytorch.org/docs/2.7/accelerator.html lists it; see also
``rules/checks/agnostic.py``)."""


def agnostic_torch_conflict(start: str) -> Optional[str]:
    """Why the agnostic target would break the project at ``start`` on its own pinned torch (a pin that no
    torch 2.6 or later satisfies, e.g. deit's ``torch==1.13.1``: its migrated modules raised AttributeError
    at import on CUDA, found in review), or None."""
    from ascendify.kb.versions import pep440_key, spec_matches

    floor = pep440_key(ACCELERATOR_TORCH) or ()
    later = [v for v in _known_torch() if (pep440_key(v) or ()) >= floor] + ["2.99.0", "3.0.0"]
    root = os.path.abspath(start if os.path.isdir(start) else os.path.dirname(start) or ".")
    for pin in find_pins(start):
        if pin.spec and not any(spec_matches(v, pin.spec) for v in later):
            return (f"{display_path(pin.file, root)} asks for torch{pin.spec}, and --target agnostic writes torch.accelerator code, "
                    f"which needs torch {ACCELERATOR_TORCH[:3]} or later: use --target npu, or raise the torch pin first")
    return None
