"""The Python environment being checked, read from package metadata only.

torch / torch_npu / numpy versions come from ``*.dist-info/METADATA`` (never
``import torch_npu``: a broken stack can crash the interpreter).  The environment
is the current interpreter, another interpreter (``--python``: asked for its
``sys.path`` in a subprocess that imports nothing else), or site-packages found
under ``--root``.
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata as md
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ascendify.doctor.sysroot import SysRoot
from ascendify.kb.versions import spec_matches  # noqa: F401  (re-exported: doctor.core reads it from here)

ROOT_SITE_GLOBS = [
    "/usr/local/lib/python3*/site-packages", "/usr/local/lib/python3*/dist-packages",
    "/usr/local/python3*/lib/python3*/site-packages",
    "/usr/lib/python3*/site-packages", "/usr/lib/python3/dist-packages",
    "/opt/conda/lib/python3*/site-packages", "/opt/conda/envs/*/lib/python3*/site-packages",
    "/root/miniconda3/lib/python3*/site-packages", "/root/miniconda3/envs/*/lib/python3*/site-packages",
    "/root/anaconda3/lib/python3*/site-packages", "/root/anaconda3/envs/*/lib/python3*/site-packages",
    "/home/*/miniconda3/envs/*/lib/python3*/site-packages", "/home/*/anaconda3/envs/*/lib/python3*/site-packages",
    "/usr/local/lib64/python3*/site-packages",
]


@dataclass
class Dist:
    name: str
    version: str
    requires: List[str]
    location: str


@dataclass
class PyEnv:
    """``python``: ``"3.11.7"`` or None; ``site_dirs``: host paths searched for
    packages and modules; ``label``: what the user should read (interpreter or dir)."""

    python: Optional[str]
    site_dirs: List[str]
    label: str
    executable: Optional[str] = None
    problems: List[str] = field(default_factory=list)
    broken: Dict[str, str] = field(default_factory=dict)
    _dists: Optional[Dict[str, Dist]] = None

    def _load(self) -> Dict[str, Dist]:
        if self._dists is None:
            found: Dict[str, Dist] = {}
            try:
                for d in md.distributions(path=[p for p in self.site_dirs if os.path.isdir(p)]):
                    try:
                        name = d.metadata.get("Name")
                    except Exception:  # noqa: BLE001 - garbled METADATA
                        name = None
                    if not name:
                        path = str(getattr(d, "_path", "") or "")
                        m = re.match(r"([A-Za-z0-9_.]+?)-[0-9][^-]*\.(dist|egg)-info$", os.path.basename(path))
                        if m:
                            self.broken.setdefault(normalize(m.group(1)), path)
                        continue
                    key = normalize(name)
                    if key in found:
                        continue  # first on the path wins, like the import system
                    loc = ""
                    try:
                        loc = str(d.locate_file(""))
                    except Exception:  # noqa: BLE001
                        pass
                    found[key] = Dist(name, d.version or "", list(d.requires or []), loc)
            except Exception as exc:  # noqa: BLE001 - unreadable site dir
                self.problems.append(f"reading package metadata failed: {exc}")
            self._dists = found
        return self._dists

    def dist(self, name: str) -> Optional[Dist]:
        """Installed distribution by name (``torch_npu`` == ``torch-npu``), or None."""
        return self._load().get(normalize(name))

    def has_module(self, name: str, extra_dirs: Optional[List[str]] = None) -> Optional[str]:
        """Host path where a top-level module would be imported from, or None.
        Finds the file without importing it."""
        dirs = [p for p in list(extra_dirs or []) + self.site_dirs if os.path.isdir(p)]
        try:
            spec = importlib.machinery.PathFinder.find_spec(name, dirs)
        except Exception:  # noqa: BLE001
            return None
        if spec is None:
            return None
        return spec.origin or (list(spec.submodule_search_locations or [""])[0])


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


_PROBE = "import sys, json; print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3], 'path': sys.path}))"


def from_interpreter(python: Optional[str] = None, timeout: float = 20.0) -> PyEnv:
    """The environment of ``python`` (default: this interpreter)."""
    if not python or os.path.abspath(python) == os.path.abspath(sys.executable):
        return PyEnv("%d.%d.%d" % sys.version_info[:3], [p for p in sys.path if p], sys.executable,
                     sys.executable)
    try:
        out = subprocess.run([python, "-c", _PROBE], capture_output=True, text=True,
                             timeout=timeout)
        data = json.loads(out.stdout.strip().splitlines()[-1])
        return PyEnv(data["version"], [p for p in data["path"] if p], python, python)
    except FileNotFoundError:
        env = PyEnv(None, [], python, python)
        env.problems.append(f"{python}: no such interpreter")
        return env
    except subprocess.TimeoutExpired:
        env = PyEnv(None, [], python, python)
        env.problems.append(f"{python}: did not answer within {timeout:.0f} s")
        return env
    except (OSError, ValueError, KeyError, IndexError) as exc:
        env = PyEnv(None, [], python, python)
        env.problems.append(f"{python}: could not read sys.path ({exc})")
        return env


def from_root(root: SysRoot, site_packages: Optional[str] = None) -> PyEnv:
    """Pick the site-packages under ``root``: ``site_packages`` if given, else the
    first one holding torch_npu, else torch, else any."""
    cands: List[str] = []
    if site_packages:
        cands = [site_packages]
    else:
        for pat in ROOT_SITE_GLOBS:
            cands.extend(root.glob(pat))
    if not cands:
        return PyEnv(None, [], "no site-packages found under --root")

    def has(d: str, prefix: str) -> bool:
        try:
            return any(n.lower().startswith(prefix) and n.endswith(".dist-info") for n in os.listdir(root.host(d)))
        except OSError:
            return False

    best = next((c for c in cands if has(c, "torch_npu-")), None) or \
        next((c for c in cands if has(c, "torch-")), None) or cands[0]
    m = re.search(r"python(3\.\d+)", best)
    env = PyEnv(m.group(1) if m else None, [root.host(best)], best)
    others = [c for c in cands if c != best]
    if others and not site_packages:
        env.problems.append(f"also found: {', '.join(others[:3])}{' …' if len(others) > 3 else ''} "
                            "(choose with --site-packages)")
    return env


# ----------------------------------------------------------------------------- requirements

_REQ = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\[[^\]]*\])?\s*\(?([^;)]*)\)?\s*(?:;(.*))?$")


def requirement(requires: List[str], name: str) -> Optional[str]:
    """The version specifier a distribution's ``Requires-Dist`` gives for ``name``
    (``"==2.7.1.*"``), ``""`` if unversioned, None if not required (extras ignored)."""
    for r in requires or []:
        m = _REQ.match(r)
        if not m or normalize(m.group(1)) != normalize(name):
            continue
        if m.group(3) and "extra" in m.group(3):
            continue
        return m.group(2).strip()
    return None


