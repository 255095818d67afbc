"""Parsers for the files and command outputs of an Ascend install.

Formats (op-support-and-versions.md §7): ``key=value`` install-info files
(``ascend_toolkit_install.info``, ``ascend_ops_install.info``, driver/firmware
``version.info``, ``/etc/ascend_install.info``), ``version.cfg``
(``<component>_running_version=[<inner>:<release>]``) and the ``npu-smi info``
table (A2, A3 and 310P layouts, §7.3).  Parsers never raise: bad input gives an
empty result plus a list of problems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

_KV = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*=\s*(.*?)\s*$")


def parse_kv(text: str) -> Tuple[Dict[str, str], List[str]]:
    """``key=value`` lines → ``({key_lower: value}, problems)``.

    Comments (``#``) and blank lines are skipped; other lines are reported.
    Keys are lower-cased (driver files spell ``Version``/``Innerversion``).
    """
    out: Dict[str, str] = {}
    bad: List[str] = []
    for n, line in enumerate((text or "").splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = _KV.match(s)
        if not m:
            bad.append(f"line {n} is not key=value: {s[:60]!r}")
            continue
        out[m.group(1).lower()] = m.group(2).strip().strip('"')
    return out, bad


def compat_codes(value: Optional[str]) -> List[str]:
    """``"[V100R001C15],[V100R001C18]"`` → ``["C15", "C18"]``."""
    return re.findall(r"V\d+R\d+(C\d+)", value or "")


def fw_range(value: Optional[str]) -> Optional[Tuple[str, str]]:
    """``"[7.0.0,8.9.9]"`` → ``("7.0.0", "8.9.9")``; None if malformed."""
    m = re.match(r"^\s*\[\s*([\w.]+)\s*,\s*([\w.]+)\s*\]\s*$", value or "")
    return (m.group(1), m.group(2)) if m else None


def num_key(version: str) -> Tuple[int, ...]:
    """Leading numeric components: ``"7.7.0.1.231"`` → ``(7, 7, 0, 1, 231)``;
    ``"25.0.rc1.1"`` → ``(25, 0)``."""
    out = []
    for part in str(version or "").split("."):
        if part.isdigit():
            out.append(int(part))
        else:
            break
    return tuple(out)


def driver_key(version: str) -> Optional[Tuple]:
    """Order driver/HDK versions: ``24.1.rc1`` < ``24.1.rc2`` < ``24.1.rc2.1`` <
    ``24.1.0`` < ``25.0.rc1.1``; None if unparsable."""
    m = re.match(r"^\s*(\d+)\.(\d+)(?:\.(rc|RC)?(\d+))?((?:\.\d+)*)", str(version or ""))
    if not m:
        return None
    major, minor, rc, n, extra = m.groups()
    stage = 0 if rc else 1
    ex = tuple(int(x) for x in extra.split(".") if x)
    return (int(major), int(minor), stage, int(n or 0)) + ex


def parse_version_cfg(text: str) -> Dict[str, Dict[str, Tuple[str, str]]]:
    """``version.cfg`` → ``{component: {"running": (inner, release), …}}``."""
    out: Dict[str, Dict[str, Tuple[str, str]]] = {}
    for line in (text or "").splitlines():
        m = re.match(r"^\s*(\w+?)_(running|upgrade|installed)_version\s*=\s*\[([^:\]]*):([^\]]*)\]", line)
        if m:
            out.setdefault(m.group(1), {})[m.group(2)] = (m.group(3).strip(), m.group(4).strip())
    return out


# ----------------------------------------------------------------------------- npu-smi

_BUS = re.compile(r"^[0-9A-Fa-fx]{4,8}:[0-9A-Fa-fx]{2}:[0-9A-Fa-fx]{2}\.[0-9A-Fa-fx]$")
_PAIR = re.compile(r"(\d+)\s*/\s*(\d+)")


@dataclass
class NpuChip:
    """One chip row pair of ``npu-smi info``. Memory in MB; None where absent."""

    npu: int
    chip: int
    name: str
    health: str
    bus_id: str = ""
    phy_id: Optional[int] = None
    device_id: Optional[int] = None
    aicore_pct: Optional[float] = None
    mem_used: Optional[int] = None
    mem_total: Optional[int] = None
    hbm_used: Optional[int] = None
    hbm_total: Optional[int] = None

    @property
    def used_mb(self) -> Optional[int]:
        return self.hbm_used if self.hbm_total else self.mem_used

    @property
    def total_mb(self) -> Optional[int]:
        return self.hbm_total if self.hbm_total else self.mem_total


@dataclass
class NpuProcess:
    npu: int
    chip: int
    pid: int
    name: str
    memory_mb: Optional[int]


@dataclass
class NpuSmiInfo:
    """Parsed ``npu-smi info``: driver version from the header, chips, processes,
    layout (``"A2"``, ``"A3"``, ``"310P"`` or ``"unknown"``) and problems."""

    version: Optional[str] = None
    layout: str = "unknown"
    chips: List[NpuChip] = field(default_factory=list)
    processes: List[NpuProcess] = field(default_factory=list)
    idle_npus: List[int] = field(default_factory=list)
    problems: List[str] = field(default_factory=list)


def _cells(line: str) -> List[str]:
    s = line.strip()
    if not (s.startswith("|") and s.endswith("|")):
        return []
    return [c.strip() for c in s[1:-1].split("|")]


def _ints(text: str) -> List[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def parse_npu_smi(text: str) -> NpuSmiInfo:
    """Parse ``npu-smi info`` output (A2 / A3 / 310P layouts).

    Metric rows are told from name rows by the ``Bus-Id`` cell; with an HBM column
    the last ``used / total`` pair is HBM, else the only pair is DDR memory.
    """
    info = NpuSmiInfo()
    if not text or not text.strip():
        info.problems.append("empty output")
        return info
    m = re.search(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)", text)
    if m:
        info.version = m.group(2)
    has_hbm = False
    section = None
    pending: Optional[NpuChip] = None
    for line in text.splitlines():
        cells = _cells(line)
        if not cells:
            continue
        joined = " ".join(cells)
        if "Name" in cells[0] and "NPU" in cells[0] and len(cells) >= 2 and "Health" in cells[1]:
            section = "dev"
            continue
        if section == "dev" and len(cells) >= 2 and cells[1].startswith("Bus-Id"):
            has_hbm = "HBM" in joined
            first = cells[0].split()
            if "Phy-ID" in first:
                info.layout = "A3"
            elif "Device" in first:
                info.layout = "310P"
            else:
                info.layout = "A2" if has_hbm else "unknown"
            continue
        if "Process id" in joined or ("Process" in joined and "name" in joined.lower() and "NPU" in cells[0]):
            section = "proc"
            continue
        mm = re.match(r"No running processes found in NPU\s+(\d+)", cells[0])
        if mm:
            info.idle_npus.append(int(mm.group(1)))
            section = "proc"
            continue
        if section == "dev" and len(cells) >= 3:
            if _BUS.match(cells[1]):
                if pending is None:
                    info.problems.append(f"metric row without a name row: {line.strip()[:60]!r}")
                    continue
                ids = _ints(cells[0])
                pending.bus_id = cells[1]
                if ids:
                    pending.chip = ids[0]
                if len(ids) > 1:
                    if info.layout == "A3":
                        pending.phy_id = ids[1]
                    else:
                        pending.device_id = ids[1]
                nums = re.findall(r"[\d.]+|NA|-", cells[2])
                try:
                    pending.aicore_pct = float(nums[0]) if nums and nums[0] not in ("NA", "-") else None
                except ValueError:
                    pending.aicore_pct = None
                pairs = [(int(a), int(b)) for a, b in _PAIR.findall(cells[2])]
                if has_hbm and len(pairs) >= 2:
                    pending.mem_used, pending.mem_total = pairs[0]
                    pending.hbm_used, pending.hbm_total = pairs[-1]
                elif pairs:
                    pending.mem_used, pending.mem_total = pairs[-1]
                info.chips.append(pending)
                pending = None
            else:
                parts = cells[0].split(None, 1)
                if parts and parts[0].isdigit() and len(parts) == 2:
                    pending = NpuChip(npu=int(parts[0]), chip=0, name=parts[1].strip(), health=cells[1])
                elif cells[0] or cells[1]:
                    info.problems.append(f"unrecognised row: {line.strip()[:60]!r}")
        elif section == "proc" and len(cells) >= 3:
            ids = _ints(cells[0])
            pid = _ints(cells[1])
            if len(ids) >= 1 and pid:
                mem = _ints(cells[3]) if len(cells) > 3 else []
                info.processes.append(NpuProcess(npu=ids[0], chip=ids[1] if len(ids) > 1 else 0, pid=pid[0],
                                                 name=cells[2], memory_mb=mem[0] if mem else None))
    if pending is not None:
        info.problems.append(f"NPU {pending.npu}: name row without a metric row (truncated output?)")
    if not info.chips and not info.problems:
        info.problems.append("no device rows found (not `npu-smi info` output?)")
    return info


def parse_board(text: str) -> Dict[str, str]:
    """``npu-smi info -t board -i N [-c C]`` → ``{key: value}`` from ``Key : Value``
    lines (keys as printed, e.g. ``"Chip Name"``, ``"NPU Name"``)."""
    out: Dict[str, str] = {}
    for line in (text or "").splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            k, v = k.strip(), v.strip()
            if k and v and len(k) < 60:
                out[k] = v
    return out


def board_soc_version(board: Dict[str, str]) -> Optional[str]:
    """soc_version from board info: ``<Chip Name>_<NPU Name>`` (A3/950, CANN ATC docs),
    e.g. ``Ascend910`` + ``9392`` → ``Ascend910_9392``; None if the keys are absent."""
    low = {k.lower(): v for k, v in board.items()}
    chip = low.get("chip name")
    npu = low.get("npu name")
    if not chip:
        return None
    if not chip.lower().startswith("ascend"):
        chip = "Ascend" + chip
    if npu and npu.upper() not in ("NA", "N/A", "-"):
        return f"{chip}_{npu}"
    return chip
