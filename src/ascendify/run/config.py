"""The emulator's configuration (the JSON file named by ``ASCENDIFY_RUN_CONFIG``), validated once."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional

from ascendify.errors import AscendifyError

MODES = ("auto", "shim", "python")
MAX_DEVICES = 64


class Config:
    __slots__ = ("torch_npu", "requested", "chip", "devices", "mode", "fallback_disabled", "events_dir",
                 "project_root", "release_note", "cpu_rng")

    def __init__(self, torch_npu: str, requested: Optional[str], chip: str, devices: int, mode: str,
                 fallback_disabled: bool, events_dir: Optional[str], project_root: Optional[str],
                 release_note: Optional[str], cpu_rng: bool = False):
        self.torch_npu = torch_npu
        self.requested = requested
        self.chip = chip
        self.devices = devices
        self.mode = mode
        self.fallback_disabled = fallback_disabled
        self.events_dir = events_dir
        self.project_root = project_root
        self.release_note = release_note
        self.cpu_rng = cpu_rng

    def as_dict(self) -> Dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


def from_dict(d: Dict[str, Any]) -> Config:
    """Validate a config dict; AscendifyError (one line) for bad values."""
    if not isinstance(d, dict):
        raise AscendifyError("ascendify run: the emulator config must be a JSON object")
    from ascendify.kb import ops as kbops

    req = d.get("torch_npu")
    try:
        release, note = kbops.resolve_release(None if req is None else str(req))
    except ValueError as e:
        raise AscendifyError(f"ascendify run: {e}") from None
    chip = str(d.get("chip") or "Ascend910B3")
    try:
        devices = int(d.get("devices", 8))
    except (TypeError, ValueError):
        raise AscendifyError(f"ascendify run: devices must be an integer, got {d.get('devices')!r}") from None
    if not 1 <= devices <= MAX_DEVICES:
        raise AscendifyError(f"ascendify run: devices must be between 1 and {MAX_DEVICES}, got {devices}")
    mode = str(d.get("mode") or "auto")
    if mode not in MODES:
        raise AscendifyError(f"ascendify run: mode must be one of {', '.join(MODES)}, got {mode!r}")
    fb = bool(d.get("fallback_disabled")) or os.environ.get("TORCH_NPU_FALLBACK_CPU_DISABLE") == "1"
    ev = d.get("events_dir")
    root = d.get("project_root")
    return Config(release, None if req is None else str(req), chip, devices, mode, fb,
                  os.path.abspath(ev) if ev else None, os.path.realpath(root) if root else None, note,
                  bool(d.get("cpu_rng")))


def load_file(path: str) -> Config:
    try:
        with open(path, encoding="utf-8") as fh:
            d = json.load(fh)
    except OSError as e:
        raise AscendifyError(f"ascendify run: cannot read the emulator config {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise AscendifyError(f"ascendify run: the emulator config {path} is not JSON ({e.msg}, line {e.lineno})") from None
    return from_dict(d)


def bf16_supported(chip: str) -> bool:
    """bf16 on this SoC per the chip KB (unknown chips: the 910B and later families support it)."""
    try:
        from ascendify.kb import chips

        info = chips.chip_info(chip)
    except Exception:  # noqa: BLE001 - the KB is optional here
        info = None
    if info is not None and info.bf16 is not None:
        return bool(info.bf16)
    return not chip.startswith(("Ascend310", "Ascend910A", "Ascend910ProA", "Ascend910PremiumA", "Ascend910ProB"))


def hbm_bytes(chip: str) -> int:
    try:
        from ascendify.kb import chips

        n = chips.hbm_bytes(chip)
    except Exception:  # noqa: BLE001
        n = None
    return int(n) if n else 64 << 30
