"""``ascendify doctor``: read an Ascend install and report what is wrong.

Every check returns a :class:`~ascendify.doctor.model.Check`; no check raises.
Facts and file formats: op-support-and-versions.md §5–7 (version matrix, CANN ↔
driver, soc_version strings, install-info files, set_env.sh, npu-smi layouts),
accuracy-profiling-atc.md §5 (error texts, environment variables).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ascendify.doctor import parsers as P
from ascendify.doctor.model import Check, Report, rules
from ascendify.doctor.pyenv import PyEnv, from_interpreter, from_root, requirement, spec_matches
from ascendify.doctor.sysroot import SysRoot
from ascendify.kb import chips as kbchips
from ascendify.kb import versions as V

ASCEND = "/usr/local/Ascend"
SRC_FILES = "op-support-and-versions.md §7.1"
SRC_MATRIX = V.SOURCE_MATRIX
GROUP_ORDER = ("python", "torch", "torch_npu", "cann", "driver", "firmware", "devices", "matrix", "env", "deep")


@dataclass
class Options:
    """Inputs of one doctor run.

    ``env``: the target's environment (None = unknown → environment checks skipped;
    the CLI passes ``os.environ`` for the live system).  ``npu_smi``: an executable
    or a file with saved ``npu-smi info`` output.  Timeouts in seconds.
    """

    root: str = "/"
    env: Optional[Mapping[str, str]] = None
    env_label: str = "this shell"
    npu_smi: Optional[str] = None
    npu_smi_board: Optional[str] = None
    chip: Optional[str] = None
    require_npu: bool = False
    deep: bool = False
    python: Optional[str] = None
    site_packages: Optional[str] = None
    timeout: float = 15.0
    deep_timeout: float = 180.0


@dataclass
class Install:
    """One CANN toolkit install found on disk (target-system paths)."""

    home: str                      # e.g. /usr/local/Ascend/ascend-toolkit/latest
    info_path: str
    layout: str                    # "ascend-toolkit" (≤ 8.3) or "cann" (8.5+)
    kv: Dict[str, str] = field(default_factory=dict)
    error: Optional[str] = None

    @property
    def version(self) -> Optional[str]:
        return self.kv.get("version")

    @property
    def base(self) -> str:
        """Folder holding set_env.sh (``…/ascend-toolkit`` or ``…/cann``)."""
        parent = os.path.dirname(self.home)
        return parent if self.layout == "ascend-toolkit" else self.home


def _first_line(text: str, limit: int = 200) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


class Doctor:
    """Collects facts once, then runs the checks in report order."""

    def __init__(self, opts: Options) -> None:
        self.o = opts
        self.r = SysRoot(opts.root)
        self.env = opts.env
        self.checks: List[Check] = []
        self.notes: List[str] = []
        self.rules = rules()
        # facts
        self.py: Optional[PyEnv] = None
        self.torch = None
        self.torch_npu = None
        self.numpy = None
        self.installs: List[Install] = []
        self.cann: Optional[Install] = None
        self.driver: Dict[str, str] = {}
        self.driver_path: Optional[str] = None
        self.firmware: Dict[str, str] = {}
        self.smi: Optional[P.NpuSmiInfo] = None
        self.smi_label: Optional[str] = None
        self.socs: Dict[Tuple[int, int], str] = {}
        self.chip: Optional[kbchips.ChipInfo] = None
        self.requested_family: Optional[str] = None
        self.detected_family: Optional[str] = None
        self.requested: Optional[kbchips.ChipInfo] = None

    # ------------------------------------------------------------------ helpers
    def add(self, *a: Any, **k: Any) -> Check:
        c = Check(*a, **k)
        self.checks.append(c)
        return c

    def getenv(self, name: str) -> Optional[str]:
        if self.env is None:
            return None
        v = self.env.get(name)
        return v if v not in (None, "") else None

    @property
    def cann_version(self) -> Optional[str]:
        return self.cann.version if self.cann and not self.cann.error else None

    @property
    def family(self) -> Optional[str]:
        """Chip family: detected on the devices, else from --chip."""
        if self.chip:
            return self.chip.family
        return self.detected_family or self.requested_family

    # ------------------------------------------------------------------ run
    def run(self) -> Report:
        self._safe("chip", self._requested_chip)
        self._safe("python", self.check_python)
        self._safe("cann", self.check_cann)
        self._safe("driver", self.check_driver)
        self._safe("devices", self.check_devices)
        if self.cann is not None:
            self._safe("cann", self._check_ops)   # needs the chip from the devices
            self._safe("cann", self._check_nnal)
        self._safe("matrix", self.check_matrix)
        self._safe("env", self.check_env)
        stack = bool(self.torch_npu or self.installs or self.driver or self.smi and self.smi.chips)
        self._safe("cann", lambda: self._missing_pieces(stack))
        if self.o.deep:
            from ascendify.doctor.deep import run_deep
            self._safe("deep", lambda: self.checks.extend(run_deep(self)))
        if not stack:
            self._no_stack()
        order = {g: i for i, g in enumerate(GROUP_ORDER)}
        self.checks.sort(key=lambda c: order.get(c.id.split(".")[0], len(order)))
        chip = {
            "requested": self.o.chip,
            "detected": sorted(set(self.socs.values())),
            "family": self.family,
            "bf16": (self.chip or self.requested).bf16 if (self.chip or self.requested) else None,
        }
        facts = {
            "python": self.py.python if self.py else None,
            "torch": self.torch.version if self.torch else None,
            "torch_npu": self.torch_npu.version if self.torch_npu else None,
            "numpy": self.numpy.version if self.numpy else None,
            "cann": self.cann_version,
            "cann_path": self.cann.home if self.cann else None,
            "driver": self.driver.get("version"),
            "firmware": self.firmware.get("version"),
            "npu_smi": self.smi.version if self.smi else None,
        }
        return Report(self.checks, facts, self.r.root, stack, self.o.require_npu, chip, self.notes)

    def _safe(self, group: str, fn: Any) -> None:
        """Run one stage; an unexpected exception becomes a ``fail`` result, never a traceback."""
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - last line of defence for odd input
            self.add(f"{group}.internal_error", f"doctor {group} checks", "fail",
                     found=f"doctor could not finish the {group} checks: {type(exc).__name__}: {exc}",
                     fix="please report this with the files involved (ASCENDIFY_DEBUG=1 for details)")
            if os.environ.get("ASCENDIFY_DEBUG"):
                raise

    def _missing_pieces(self, stack: bool) -> None:
        """With part of a stack installed, a missing piece is a problem, not a skip."""
        if not stack:
            return
        sev = "fail" if self.o.require_npu else "warn"
        for c in self.checks:
            if c.status != "skipped":
                continue
            if c.id == "cann.toolkit" and self.torch_npu:
                c.status = "fail"
                c.found += f" — torch_npu {self.torch_npu.version} cannot start without it"
            elif c.id == "torch_npu.installed" and self.installs:
                c.status = sev
            elif c.id in ("driver.version", "devices.npu_smi") and (self.installs or self.torch_npu):
                if c.id == "driver.version" and "not installed" not in (c.found or ""):
                    continue
                c.status = sev
                c.found += " — fine for building images, but no NPU can run here"

    def _requested_chip(self) -> None:
        if not self.o.chip:
            return
        text = self.o.chip.strip()
        fam = kbchips.family_code(text)
        if text.lower() in kbchips.FAMILY_ALIASES:
            members = kbchips.family_chips(fam) if fam else []
            self.requested = members[0] if members else None
        else:
            self.requested = kbchips.chip_info(text)
        self.requested_family = fam
        if self.requested is None and fam is None:
            self.notes.append(f"--chip {self.o.chip!r} is not a soc_version or family the KB knows "
                              f"(try 910B3, 910b, a3, 310p)")

    # ------------------------------------------------------------------ 1. python / torch / torch_npu
    def check_python(self) -> None:
        if self.r.is_live and not self.o.site_packages:
            self.py = from_interpreter(self.o.python)
        else:
            self.py = from_root(self.r, self.o.site_packages)
        py = self.py
        for p in py.problems:
            self.notes.append(f"python: {p}")
        self.torch = py.dist("torch")
        self.torch_npu = py.dist("torch_npu")
        self.numpy = py.dist("numpy")
        where = py.label
        if py.python:
            self.add("python.version", "Python", "ok", found=f"Python {py.python} ({where})")
        else:
            self.add("python.version", "Python", "skipped", found=f"Python version unknown ({where})",
                     fix="pass --python /path/to/python or --site-packages DIR")
        if self.torch:
            self.add("torch.installed", "torch", "ok", found=f"torch {self.torch.version}",
                     details={"location": self.torch.location})
        else:
            self.add("torch.installed", "torch", "fail" if self.torch_npu else "warn",
                     found=f"torch is not installed in {where}",
                     fix="pip install torch==<version matching torch_npu> (CPU build; torch_npu adds the NPU)")
        if not self.torch_npu and "torch-npu" in py.broken:
            self.add("torch_npu.installed", "torch_npu", "fail",
                     found=f"{py.broken['torch-npu']}/METADATA is unreadable (garbled or truncated)",
                     fix="pip install --force-reinstall --no-deps torch_npu==<version>")
            return
        if not self.torch_npu:
            self.add("torch_npu.installed", "torch_npu", "skipped", found=f"torch_npu is not installed in {where}",
                     fix=self._torch_npu_hint())
            return
        pin = requirement(self.torch_npu.requires, "torch")
        det = {"version": self.torch_npu.version, "requires_torch": pin, "location": self.torch_npu.location}
        self.add("torch_npu.installed", "torch_npu", "ok", found=f"torch_npu {self.torch_npu.version}"
                 + (f" (wheel requires torch{pin})" if pin else " (wheel metadata pins no torch version)"),
                 details=det, source="wheel METADATA Requires-Dist")
        if self.torch and pin:
            ok = spec_matches(self.torch.version, pin)
            if ok is False:
                self.add("torch_npu.torch_pin", "torch matches the torch_npu wheel", "fail",
                         found=f"torch {self.torch.version}; torch_npu {self.torch_npu.version} requires torch{pin}",
                         expected=f"torch{pin}",
                         fix=f"pip install 'torch{pin}' (or the torch_npu built for torch {self.torch.version})",
                         source="torch_npu wheel METADATA Requires-Dist")
            elif ok:
                self.add("torch_npu.torch_pin", "torch matches the torch_npu wheel", "ok",
                         found=f"torch {self.torch.version} satisfies torch{pin}")

    def _torch_npu_hint(self) -> str:
        if self.torch:
            rows, others = V.torch_npu_for_torch(self.torch.version)
            if rows:
                r = rows[0]
                return f"pip install torch_npu=={r.torch_npu} (for torch {r.torch}; needs CANN {r.cann})"
            if others:
                rec = V.recommended()
                return (f"torch {self.torch.version}: PyPI has torch_npu {', '.join(others)} (not yet in the "
                        f"compatibility table); tested stack: torch {rec.get('torch')} + torch_npu "
                        f"{rec.get('torch_npu')} + CANN {rec.get('cann')}")
        rec = V.recommended()
        return (f"pip install torch=={rec.get('torch')} torch_npu=={rec.get('torch_npu')} "
                f"(recommended with CANN {rec.get('cann')})")

    # ------------------------------------------------------------------ 2. CANN
    def _find_installs(self) -> List[Install]:
        homes: List[Tuple[str, str]] = []
        for var in ("ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
            v = self.getenv(var)
            if v:
                homes.append((v.rstrip("/") or "/", "cann" if "/cann" in v else "ascend-toolkit"))
        bases = [ASCEND]
        if self.r.is_live and self.getenv("HOME"):
            bases.append(os.path.join(self.getenv("HOME"), "Ascend"))
        elif not self.r.is_live:
            bases += self.r.glob("/home/*/Ascend") + self.r.glob("/root/Ascend")
        for b in bases:
            homes.append((f"{b}/ascend-toolkit/latest", "ascend-toolkit"))
            homes.append((f"{b}/cann", "cann"))
            for d in self.r.glob(f"{b}/ascend-toolkit/*"):
                if not d.endswith("/latest") and self.r.isdir(d):
                    homes.append((d, "ascend-toolkit"))
            for d in self.r.glob(f"{b}/cann-*"):
                homes.append((d, "cann"))
        seen = set()
        out: List[Install] = []
        for home, layout in homes:
            infos = self.r.glob(f"{home}/*-linux/ascend_toolkit_install.info")
            if not infos and self.r.exists(f"{home}/ascend_toolkit_install.info"):
                infos = [f"{home}/ascend_toolkit_install.info"]
            for info in infos:
                key = os.path.realpath(self.r.host(info))
                if key in seen:
                    continue
                seen.add(key)
                inst = Install(home=home, info_path=info, layout=layout)
                text, err = self.r.read_text(info)
                if err:
                    inst.error = err
                else:
                    kv, bad = P.parse_kv(text)
                    inst.kv = kv
                    if not kv.get("version"):
                        inst.error = (f"{info}: no version= line ({'; '.join(bad[:2]) or 'empty file'}) — "
                                      "truncated or garbled; reinstall the CANN toolkit")
                    elif V.cann_key(kv["version"]) is None:
                        inst.error = f"{info}: version={kv['version']!r} is not a CANN version — garbled file"
                out.append(inst)
        return out

    def check_cann(self) -> None:
        self.installs = self._find_installs()
        if not self.installs:
            stale = self.getenv("ASCEND_HOME_PATH")
            self.add("cann.toolkit", "CANN toolkit", "skipped",
                     found="CANN toolkit not found (no ascend_toolkit_install.info under "
                           f"{ASCEND}/ascend-toolkit/latest/<arch>-linux/ or {ASCEND}/cann/<arch>-linux/"
                           + (f"; ASCEND_HOME_PATH={stale} has none either" if stale else "") + ")",
                     fix=self._install_hint("toolkit"), source=SRC_FILES)
            self.add("cann.ops", "CANN kernels / ops package", "skipped", found="no CANN toolkit")
            self.add("cann.nnal", "NNAL / ATB", "skipped", found="no CANN toolkit")
            return
        home_env = self.getenv("ASCEND_HOME_PATH")
        active = None
        if home_env:
            hk = os.path.realpath(self.r.host(home_env))
            active = next((i for i in self.installs if os.path.realpath(self.r.host(i.home)) == hk), None)
        if active is None:
            active = next((i for i in self.installs if i.home.endswith(("/latest", "/cann"))), self.installs[0])
        self.cann = active
        others = [f"{i.version or '?'} at {i.home}" for i in self.installs if i is not active]
        det: Dict[str, Any] = {"path": active.home, "layout": active.layout, "info_file": active.info_path,
                               "innerversion": active.kv.get("innerversion"), "arch": active.kv.get("arch"),
                               "also_installed": others}
        if active.error:
            self.add("cann.toolkit", "CANN toolkit", "fail", found=active.error, details=det,
                     fix="reinstall the CANN toolkit (Ascend-cann-toolkit_<version>_linux-<arch>.run --install)",
                     source=SRC_FILES)
        else:
            v = active.version
            note = ""
            look = V.lookup_cann(v)
            status = "ok"
            if not look.exact:
                note = f"; {look.note}"
                status = "warn"
            mixed = self._mixed_components(active)
            fix = None
            if mixed:
                status = "warn"
                note += f"; components from other releases: {', '.join(mixed)}"
                fix = f"reinstall CANN {v} completely (toolkit + kernels/ops + nnal from the same release)"
            det["mixed_components"] = mixed
            self.add("cann.toolkit", "CANN toolkit", status,
                     found=f"CANN {v} ({active.layout} layout, {active.home})" + note
                     + (f"; also installed: {', '.join(others)}" if others else ""),
                     fix=fix, details=det, source=SRC_FILES)

    def _mixed_components(self, inst: Install) -> List[str]:
        """Components whose recorded release differs from the toolkit's
        (``version.cfg`` ``*_running_version=[inner:release]``, ``<comp>/version.info``)."""
        want = V.cann_release_of(inst.version or "")
        out: List[str] = []
        if not want:
            return out
        text, _ = self.r.read_text(f"{inst.home}/version.cfg")
        for comp, kinds in sorted(P.parse_version_cfg(text or "").items()):
            rel = (kinds.get("running") or kinds.get("installed") or ("", ""))[1]
            if rel and V.cann_release_of(rel) and V.cann_release_of(rel) != want:
                out.append(f"{comp} {rel}")
        for comp in ("runtime", "compiler", "opp"):
            t, _ = self.r.read_text(f"{inst.home}/{comp}/version.info")
            if t:
                kv, _ = P.parse_kv(t)
                rel = kv.get("version")
                if rel and V.cann_release_of(rel) and V.cann_release_of(rel) != want and \
                        not any(x.startswith(comp + " ") for x in out):
                    out.append(f"{comp} {rel}")
        return out

    def _check_ops(self) -> None:
        inst = self.cann
        assert inst is not None
        found: List[Tuple[str, str]] = []  # (chip token, description)
        for f in self.r.glob(f"{inst.home}/*-linux/ascend_*ops*_install.info") + \
                self.r.glob(f"{inst.home}/*-linux/ascend_*kernels*_install.info"):
            text, err = self.r.read_text(f)
            if err:
                found.append(("?", err))
                continue
            kv, _ = P.parse_kv(text)
            pkg = kv.get("package_name", "")
            m = re.search(r"cann-(?:kernels-)?([A-Za-z0-9]+)(?:-ops)?$", pkg) or re.search(r"A3", pkg)
            tok = (m.group(1) if m and m.groups() else ("A3" if m else "?")).lower()
            found.append((tok, f"{pkg or '?'} {kv.get('version', '?')}"))
        cfg_text, _ = self.r.read_text(f"{inst.home}/version.cfg")
        cfg = P.parse_version_cfg(cfg_text or "")
        kern = cfg.get("opp_kernel", {}).get("running") or cfg.get("opp_kernel", {}).get("installed")
        if kern:
            found.append(("", f"opp_kernel {kern[1]} (version.cfg; chip not recorded)"))
        fam = self.family
        want = None
        if fam:
            info = self.chip or self.requested or (kbchips.family_chips(fam) or [None])[0]
            want = (info.kernels_package or "").lower() if info else None
        desc = "; ".join(d for _, d in found)
        new_layout = V.cann_key(inst.version or "0.0") is not None and V.cann_key(inst.version or "0.0") >= V.cann_key("8.5.0")
        pkg_hint = self._install_hint("ops")
        if not found:
            self.add("cann.ops", "CANN kernels / ops package", "warn",
                     found="no kernels/ops package recorded (no ascend_ops_install.info, no opp_kernel in version.cfg)",
                     expected="the operator package for the chip" + (f" ({want})" if want else ""),
                     fix=pkg_hint, source=SRC_FILES + "; cann_hdk_recommended.json package_name_patterns")
            return
        toks = {t for t, _ in found if t and t != "?"}
        if want and toks and want not in toks:
            # A3's ops package name is not in the reference notes ("A3 ops package"): warn only.
            self.add("cann.ops", "CANN kernels / ops package", "warn" if want == "a3" else "fail",
                     found=f"{desc} — for {', '.join(sorted(toks))}, but the chip is {fam}",
                     expected=f"ops package for {want}", fix=pkg_hint,
                     details={"packages": [d for _, d in found]}, source=SRC_FILES)
            return
        self.add("cann.ops", "CANN kernels / ops package", "ok", found=desc,
                 details={"packages": [d for _, d in found], "new_layout": new_layout}, source=SRC_FILES)

    def _check_nnal(self) -> None:
        base = os.path.dirname(self.cann.base) if self.cann else ASCEND
        atb = f"{base}/nnal/atb"
        if not self.r.isdir(atb):
            self.add("cann.nnal", "NNAL / ATB", "skipped", found=f"{atb} not installed (only needed by "
                     "ATB users such as vllm-ascend / MindIE)")
            return
        setenv = self.r.exists(f"{atb}/set_env.sh")
        vers = []
        for f in self.r.glob(f"{atb}/*/atb/*/version.info") + self.r.glob(f"{atb}/*/version.info") + \
                self.r.glob(f"{atb}/latest/*install.info") + self.r.glob(f"{base}/nnal/*/*install.info"):
            text, err = self.r.read_text(f)
            if text:
                kv, _ = P.parse_kv(text)
                if kv.get("version"):
                    vers.append(kv["version"])
        vers = sorted(set(vers))
        status, fix = "ok", None
        if not setenv:
            status, fix = "warn", f"reinstall NNAL (Ascend-cann-nnal_<cann>_linux-<arch>.run); {atb}/set_env.sh is missing"
        found = f"NNAL/ATB at {atb}" + (f", version {', '.join(vers)}" if vers else "")
        cv = self.cann_version
        if vers and cv and all(V.cann_release_of(x) != V.cann_release_of(cv) for x in vers):
            status = "warn"
            fix = f"install Ascend-cann-nnal_{cv} to match CANN {cv} (NNAL packages are per CANN release)"
            found += f" — CANN is {cv}"
        self.add("cann.nnal", "NNAL / ATB", status, found=found, fix=fix,
                 source="op-support-and-versions.md §7.1; cann_hdk_recommended.json package_name_patterns (nnal)")

    # ------------------------------------------------------------------ driver / firmware
    def check_driver(self) -> None:
        text, err = self.r.read_text("/etc/ascend_install.info")
        inst: Dict[str, str] = {}
        if text is not None:
            inst, bad = P.parse_kv(text)
            if not inst:
                self.add("driver.install_info", "/etc/ascend_install.info", "warn",
                         found=f"/etc/ascend_install.info has no key=value lines ({'; '.join(bad[:1]) or 'empty'})",
                         fix="reinstall the driver, or bind-mount the host's /etc/ascend_install.info into the container",
                         source=SRC_FILES)
            else:
                self.add("driver.install_info", "/etc/ascend_install.info", "ok",
                         found=f"driver install path {inst.get('driver_install_path_param', '?')}, user "
                               f"{inst.get('username', '?')}", details=inst, source=SRC_FILES)
        elif "not found" in (err or ""):
            self.add("driver.install_info", "/etc/ascend_install.info", "skipped", found="not present",
                     fix="containers: -v /etc/ascend_install.info:/etc/ascend_install.info" if self.installs else None)
        else:
            self.add("driver.install_info", "/etc/ascend_install.info", "warn", found=err)
        dpath = (inst.get("driver_install_path_param") or ASCEND).rstrip("/")
        fpath = (inst.get("firmware_install_path_param") or dpath).rstrip("/")
        self.driver_path = f"{dpath}/driver"
        self._read_version_info("driver", f"{dpath}/driver/version.info")
        self._read_version_info("firmware", f"{fpath}/firmware/version.info")
        self._check_compat()

    def _read_version_info(self, kind: str, path: str) -> None:
        text, err = self.r.read_text(path)
        cid, title = f"{kind}.version", f"NPU {kind}"
        if text is None:
            if "not found" in (err or ""):
                hint = self._install_hint(kind)
                if kind == "firmware" and self.driver:
                    # containers mount only the driver; firmware lives on the host
                    self.add(cid, title, "skipped", found=f"{path} not present (normal inside a container)",
                             fix=None)
                else:
                    self.add(cid, title, "skipped", found=f"{kind} not installed ({path} not found)", fix=hint,
                             source=SRC_FILES)
            else:
                self.add(cid, title, "fail", found=err, fix=f"check permissions of {path}", source=SRC_FILES)
            return
        kv, bad = P.parse_kv(text)
        ver = kv.get("version") or kv.get("package_version")
        if not ver or not re.match(r"^\d+\.\d+", ver):
            self.add(cid, title, "fail", found=f"{path}: no readable Version= line "
                     f"({'; '.join(bad[:2]) or 'empty or truncated'})",
                     fix=f"reinstall the {kind} package (Ascend-hdk-<chip>-npu-{kind}_<ver>.run)", source=SRC_FILES)
            return
        kv["version"] = ver
        if kind == "driver":
            self.driver = kv
        else:
            self.firmware = kv
        extra = ""
        if kind == "driver" and kv.get("innerversion"):
            extra = f", {kv['innerversion']}"
        self.add(cid, title, "ok", found=f"{kind} {ver} ({path}{extra})", details={"file": path},
                 source=SRC_FILES)

    def _check_compat(self) -> None:
        c_inner = V.inner_code(self.cann.kv.get("innerversion")) if self.cann else None
        c_compat = P.compat_codes(self.cann.kv.get("compatible_version")) if self.cann else []
        d_inner = V.inner_code(self.driver.get("innerversion"))
        d_compat = P.compat_codes(self.driver.get("compatible_version"))
        src = ("op-support-and-versions.md §5.2 (compatible_version lists in ascend_toolkit_install.info and "
               "driver version.info; code meaning inferred from samples)")
        if not (self.cann and self.driver):
            self.add("driver.compat_codes", "CANN ↔ driver compatible_version", "skipped",
                     found="needs both CANN and driver version files")
        elif not (c_inner and d_compat) and not (d_inner and c_compat):
            self.add("driver.compat_codes", "CANN ↔ driver compatible_version", "skipped",
                     found="innerversion / compatible_version fields missing (older packages)", source=src)
        else:
            cv, dv = self.cann_version, self.driver.get("version")
            det = {"cann_code": c_inner, "driver_accepts": d_compat, "driver_code": d_inner, "cann_accepts": c_compat}
            if c_inner and d_compat and c_inner not in d_compat:
                rec = V.hdk_recommended(cv or "", self.family)
                want = (rec or {}).get("driver") or (rec or {}).get("hdk")
                self.add("driver.compat_codes", "CANN ↔ driver compatible_version", "fail",
                         found=f"driver {dv} accepts CANN codes {','.join(d_compat)}; CANN {cv} is {c_inner}",
                         expected=f"{c_inner} in the driver's compatible_version",
                         fix=(f"upgrade the driver+firmware (install guide pairs CANN {cv} with driver {want})"
                              if want else f"upgrade the driver+firmware to a release that lists {c_inner}")
                         + ", or install an older CANN the driver accepts",
                         details=det, source=src)
            elif d_inner and c_compat and d_inner not in c_compat:
                self.add("driver.compat_codes", "CANN ↔ driver compatible_version", "warn",
                         found=f"CANN {cv} lists driver codes {','.join(c_compat)}; driver {dv} is {d_inner}",
                         expected=f"{d_inner} in CANN's compatible_version",
                         fix="use the driver the CANN release notes pair with it (newer drivers may use other codes)",
                         details=det, source=src)
            else:
                self.add("driver.compat_codes", "CANN ↔ driver compatible_version", "ok",
                         found=f"CANN {cv} ({c_inner or '?'}) and driver {dv} ({d_inner or '?'}) list each other",
                         details=det, source=src)
        # firmware range from the driver
        rng = P.fw_range(self.driver.get("compatible_version_fw"))
        fw = self.firmware.get("version")
        if rng and fw:
            lo, hi = rng
            k = P.num_key(fw)[:3]
            ok = P.num_key(lo)[:3] <= k <= P.num_key(hi)[:3]
            self.add("driver.firmware_range", "firmware within the driver's range", "ok" if ok else "fail",
                     found=f"firmware {fw}; driver {self.driver.get('version')} accepts [{lo}, {hi}]",
                     expected=None if ok else f"firmware between {lo} and {hi}",
                     fix=None if ok else "install the firmware package released with this driver (same HDK version)",
                     source="op-support-and-versions.md §5.2 (compatible_version_fw)")
        else:
            self.add("driver.firmware_range", "firmware within the driver's range", "skipped",
                     found="needs driver compatible_version_fw and firmware version.info")
        # install-guide recommendation
        cv = self.cann_version
        dv = self.driver.get("version")
        if cv and dv:
            rec = V.hdk_recommended(cv, self.family)
            if not rec:
                self.add("driver.recommended", "driver is the install-guide pair for CANN", "skipped",
                         found=f"no install-guide pair for CANN {cv} in the KB", source=V.SOURCE_HDK)
            else:
                want = rec.get("driver") or rec.get("hdk")
                older = (P.driver_key(dv) or ()) < (P.driver_key(want) or ())
                fw_want = rec.get("firmware")
                fw_old = bool(fw_want and fw and P.num_key(fw) < P.num_key(fw_want))
                status = "warn" if older or fw_old else "ok"
                self.add("driver.recommended", "driver is the install-guide pair for CANN", status,
                         found=f"driver {dv}" + (f", firmware {fw}" if fw else "")
                               + f"; CANN {cv} install guide pairs driver {want}"
                               + (f" + firmware {fw_want}" if fw_want else ""),
                         expected=f"driver ≥ {want}" if older else None,
                         fix=f"upgrade driver/firmware to HDK {want}" if status == "warn" else None,
                         details=rec, source=V.SOURCE_HDK)

    # ------------------------------------------------------------------ devices
    def _npu_smi_source(self) -> Tuple[Optional[str], str]:
        """(executable or None, saved text or "") from --npu-smi / PATH."""
        p = self.o.npu_smi
        if p:
            try:
                with open(p, "rb") as fh:
                    head = fh.read(4)
            except OSError as exc:
                return None, f"!{p}: {exc.strerror or exc}"
            if (head.startswith(b"#!") or head.startswith(b"\x7fELF")) and os.access(p, os.X_OK):
                return p, ""
            with open(p, "rb") as fh:
                return None, fh.read(1 << 20).decode("utf-8", "replace")
        if not self.r.is_live:
            return None, ""
        path = self.getenv("PATH") or os.environ.get("PATH", "")
        exe = shutil.which("npu-smi", path=path + os.pathsep + "/usr/local/bin:/usr/local/sbin")
        return exe, ""

    def _run(self, argv: List[str]) -> Tuple[Optional[str], Optional[str]]:
        try:
            res = subprocess.run(argv, capture_output=True, text=True, timeout=self.o.timeout, errors="replace")
        except subprocess.TimeoutExpired:
            return None, (f"`{' '.join(argv[-3:]) if len(argv) > 2 else ' '.join(argv)}` did not finish within "
                          f"{self.o.timeout:.0f} s — the driver may be hung (check `dmesg`, reboot or reset the device)")
        except PermissionError:
            return None, f"{argv[0]}: permission denied (run as root or a user in the HwHiAiUser group)"
        except OSError as exc:
            return None, f"{argv[0]}: cannot run ({exc.strerror or exc})"
        if res.returncode != 0:
            msg = _first_line(res.stderr) or _first_line(res.stdout) or f"exit code {res.returncode}"
            return None, f"`npu-smi {' '.join(argv[1:])}` failed: {msg}"
        return res.stdout, None

    def check_devices(self) -> None:
        exe, saved = self._npu_smi_source()
        if saved.startswith("!"):
            self.add("devices.npu_smi", "npu-smi info", "fail", found=saved[1:], fix="pass a readable --npu-smi file")
            return self._devices_skipped("npu-smi output unreadable")
        if exe is None and not saved:
            why = ("npu-smi not found on PATH or /usr/local/bin (driver not installed, or not mounted into "
                   "the container: -v /usr/local/bin/npu-smi:/usr/local/bin/npu-smi -v /usr/local/dcmi:/usr/local/dcmi)"
                   if self.r.is_live else "npu-smi is not run for --root; pass --npu-smi FILE with saved `npu-smi info` output")
            status = "fail" if self.o.require_npu else "skipped"
            self.add("devices.npu_smi", "npu-smi info", status, found=why,
                     fix=self._install_hint("driver") if self.r.is_live and not self.driver else None)
            return self._devices_skipped("no npu-smi")
        if exe:
            text, err = self._run([exe, "info"])
            self.smi_label = exe
        else:
            text, err = saved, None
            self.smi_label = f"saved output {self.o.npu_smi}"
        if err:
            self.add("devices.npu_smi", "npu-smi info", "fail", found=err)
            return self._devices_skipped("npu-smi failed")
        smi = P.parse_npu_smi(text or "")
        self.smi = smi
        if not smi.chips:
            self.add("devices.npu_smi", "npu-smi info", "fail",
                     found=f"{self.smi_label}: could not parse ({'; '.join(smi.problems[:2])})",
                     fix="run `npu-smi info` by hand; if it prints an error, reinstall/restart the driver")
            return self._devices_skipped("npu-smi unparsable")
        status = "warn" if smi.problems else "ok"
        dv = self.driver.get("version")
        found = (f"npu-smi {smi.version or '?'}: {len({c.npu for c in smi.chips})} NPU(s), {len(smi.chips)} chip(s), "
                 f"{smi.layout} layout ({self.smi_label})")
        fix = None
        if smi.problems:
            found += f"; {'; '.join(smi.problems[:2])}"
        if dv and smi.version and smi.version.lower() != dv.lower():
            status = "warn"
            found += f"; driver version.info says {dv}"
            fix = ("the running driver and the version.info file differ — reinstall the driver, or mount the "
                   "host's /usr/local/Ascend/driver into the container")
        self.add("devices.npu_smi", "npu-smi info", status, found=found, fix=fix, source="op-support-and-versions.md §7.3")
        self._chips(exe)
        self._memory()
        self._dev_nodes()

    def _devices_skipped(self, why: str) -> None:
        status = "fail" if self.o.require_npu else "skipped"
        self.add("devices.chips", "NPU chips", status, found=f"no device information ({why})")
        self.add("devices.memory", "device memory held by other processes", "skipped", found=why)
        self._dev_nodes()

    def _chips(self, exe: Optional[str]) -> None:
        smi = self.smi
        assert smi is not None
        board_cache: Dict[str, Optional[str]] = {}
        rows = []
        bad_health = []
        unknown = []
        for c in smi.chips:
            soc = None
            if c.name.lower() == "ascend910" and smi.layout == "A3" or c.name.lower().startswith("ascend950") \
                    or c.name.lower() in ("950dt", "950pr"):
                key = c.name
                if key not in board_cache:
                    board_cache[key] = self._board_soc(exe, c)
                soc = board_cache[key]
                if soc is None and smi.layout == "A3":
                    soc = "Ascend910_93xx"
            else:
                info = kbchips.chip_info(c.name)
                soc = info.soc_version if info else ("Ascend" + c.name if not c.name.lower().startswith("ascend") else c.name)
            self.socs[(c.npu, c.chip)] = soc
            info = kbchips.chip_info(soc) if soc != "Ascend910_93xx" else None
            fam = info.family if info else ("910C" if soc == "Ascend910_93xx" else None)
            if info and self.chip is None:
                self.chip = info
            if fam is None:
                unknown.append(soc)
            if c.health.upper() != "OK":
                bad_health.append(f"NPU {c.npu} chip {c.chip}: {c.health}")
            rows.append({"npu": c.npu, "chip": c.chip, "name": c.name, "soc_version": soc, "family": fam,
                         "health": c.health, "bus_id": c.bus_id, "used_mb": c.used_mb, "total_mb": c.total_mb})
        if self.chip is None and any(r["family"] == "910C" for r in rows):
            self.detected_family = "910C"
        socs = sorted({r["soc_version"] for r in rows})
        fam = self.family
        info = self.chip or (kbchips.family_chips(fam)[0] if fam else None)
        bf16 = info.bf16 if info else None
        caps = []
        if info:
            caps.append(f"family {info.family} ({info.series or info.family_name})")
            caps.append("bf16 " + ({True: "yes", False: "no", None: "unknown"}[bf16]))
            if info.aclnn_only:
                caps.append("aclnn-only")
            if not info.torch_npu_supported:
                caps.append("NOT supported by torch_npu")
        found = f"{', '.join(socs)}: " + ", ".join(caps) if caps else ", ".join(socs)
        status, fix, expected = "ok", None, None
        if bad_health:
            crit = any(re.search(r"(?i)alarm|critical|abnormal|fault", b) for b in bad_health)
            status = "fail" if crit else "warn"
            found += "; health: " + "; ".join(bad_health)
            fix = "check `npu-smi info -t health -i <id>` and the device log; reset or replace the device"
        if unknown:
            status = "warn" if status == "ok" else status
            found += f"; not in the KB: {', '.join(sorted(set(unknown)))}"
        if info and not info.torch_npu_supported:
            status = "fail"
            fix = "torch_npu does not support this chip (use ATC/ACL inference instead)"
        if self.o.chip and self.requested_family and fam:
            want = self.requested_family
            if want != fam:
                status = "warn" if status == "ok" else status
                expected = f"--chip {self.o.chip} ({want})"
                found += f"; you asked for {want}"
                fix = fix or f"run with --chip {socs[0]} or on a {want} machine; kernels packages and dtype support differ"
        self.add("devices.chips", "NPU chips", status, found=found, expected=expected, fix=fix,
                 details={"chips": rows, "bf16": bf16,
                          "bf16_note": info.bf16_note if info else None},
                 source="kb/data/chips.json (soc_versions.json; op-support-and-versions.md §6)")

    def _board_soc(self, exe: Optional[str], c: P.NpuChip) -> Optional[str]:
        text = None
        if self.o.npu_smi_board:
            text, _ = SysRoot("/").read_text(self.o.npu_smi_board)
        elif exe:
            text, err = self._run([exe, "info", "-t", "board", "-i", str(c.npu), "-c", str(c.chip)])
            if err:
                self.notes.append(f"npu-smi board query: {err}")
        if not text:
            return None
        return P.board_soc_version(P.parse_board(text))

    def _memory(self) -> None:
        smi = self.smi
        assert smi is not None
        me = os.getpid()
        procs = [p for p in smi.processes if p.pid != me]
        by_npu: Dict[int, List[P.NpuProcess]] = {}
        for p in procs:
            by_npu.setdefault(p.npu, []).append(p)
        held = []
        for npu, ps in sorted(by_npu.items()):
            mem = sum(p.memory_mb or 0 for p in ps)
            held.append(f"NPU {npu}: " + ", ".join(f"pid {p.pid}{' ' + p.name if p.name else ''}"
                                                   f" {p.memory_mb if p.memory_mb is not None else '?'} MB" for p in ps)
                        + (f" (total {mem} MB)" if len(ps) > 1 else ""))
        # memory used with no visible process (other container / zombie)
        ghost = []
        for c in smi.chips:
            if c.used_mb and c.total_mb and c.npu not in by_npu and c.used_mb > 0.2 * c.total_mb:
                ghost.append(f"NPU {c.npu} chip {c.chip}: {c.used_mb}/{c.total_mb} MB used, no process listed")
        det = {"processes": [p.__dict__ for p in procs], "unexplained": ghost}
        if held or ghost:
            self.add("devices.memory", "device memory held by other processes", "warn",
                     found="; ".join(held + ghost),
                     expected="free devices for a new job",
                     fix="wait for or stop those jobs (`kill <pid>`), or pick free devices with "
                         "ASCEND_RT_VISIBLE_DEVICES; memory with no process may belong to another container",
                     details=det, source="op-support-and-versions.md §7.3 (npu-smi process table)")
        else:
            self.add("devices.memory", "device memory held by other processes", "ok",
                     found="no processes hold device memory", details=det)

    def _dev_nodes(self) -> None:
        if not self.r.is_live and not self.r.isdir("/dev"):
            self.add("devices.dev_nodes", "/dev/davinci* device nodes", "skipped", found="no /dev under --root")
            return
        nodes = [n for n in self.r.glob("/dev/davinci*") if re.search(r"davinci\d+$", n)]
        ctl = [n for n in ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc") if self.r.exists(n)]
        if not nodes and not ctl:
            relevant = bool(self.driver or self.installs or self.torch_npu or (self.smi and self.smi.chips))
            status = "fail" if (relevant or self.o.require_npu) else "skipped"
            self.add("devices.dev_nodes", "/dev/davinci* device nodes", status,
                     found="no /dev/davinci<N>, /dev/davinci_manager, /dev/devmm_svm, /dev/hisi_hdc",
                     fix=("inside a container: docker run --device /dev/davinci0 --device /dev/davinci_manager "
                          "--device /dev/devmm_svm --device /dev/hisi_hdc …; on a host: install the driver")
                     if relevant else None, source=SRC_FILES)
            return
        missing = [n for n in ("/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc") if n not in ctl]
        status = "ok" if nodes and not missing else "fail"
        self.add("devices.dev_nodes", "/dev/davinci* device nodes", status,
                 found=f"{len(nodes)} davinci device(s)" + (f"; missing {', '.join(missing)}" if missing else "")
                 + ("" if nodes else "; no /dev/davinci<N>"),
                 fix=None if status == "ok" else "add the missing --device flags to docker run", source=SRC_FILES)

    # ------------------------------------------------------------------ 3. matrix
    def check_matrix(self) -> None:
        tn = self.torch_npu.version if self.torch_npu else None
        cv = self.cann_version
        tv = self.torch.version if self.torch else None
        # torch_npu ↔ CANN
        if not (tn and cv):
            miss = [n for n, v in (("torch_npu", tn), ("CANN", cv)) if not v]
            self.add("matrix.torch_npu_cann", "torch_npu ↔ CANN", "skipped",
                     found=f"needs {' and '.join(miss)}", source=SRC_MATRIX)
        else:
            look = V.lookup_torch_npu(tn)
            needed, options = V.suggest_for_mismatch(tn, cv, tv)
            row = look.release
            det = {"row": row.__dict__ if row else None, "exact_row": look.exact,
                   "torch_npu_for_installed_cann": options}
            if row is None:
                self.add("matrix.torch_npu_cann", "torch_npu ↔ CANN", "warn",
                         found=f"torch_npu {tn} with CANN {cv}: {look.note}",
                         fix=(f"torch_npu releases made for CANN {cv}: {', '.join(options[:3])}" if options else
                              "check the torch_npu release notes for the CANN it needs"),
                         details=det, source=SRC_MATRIX)
            elif V.cann_key(V.cann_release_of(cv)) == V.cann_key(needed):
                self.add("matrix.torch_npu_cann", "torch_npu ↔ CANN", "ok" if look.exact else "warn",
                         found=f"torch_npu {tn} ↔ CANN {cv}"
                               + (f" (row {row.branch})" if look.exact else f"; {look.note}"),
                         details=det, source=SRC_MATRIX)
            else:
                torch_of = {r.torch_npu: r.torch for r in V.releases_matching(cann=cv)}
                shown = [o if V.base_version(torch_of.get(o, "")) == V.base_version(tv or "") else
                         f"{o} (with torch {torch_of.get(o)})" for o in options[:3]]
                alt = f"install torch_npu {' / '.join(shown)}" if options else \
                    f"no torch_npu release in the table targets CANN {cv}"
                status = "fail" if look.exact else "warn"
                lead = f"torch_npu {tn} needs CANN {needed}" if look.exact else \
                    f"{look.note}, which needs CANN {needed}"
                self.add("matrix.torch_npu_cann", "torch_npu ↔ CANN", status,
                         found=f"{lead}; installed CANN {cv}",
                         expected=f"CANN {needed}",
                         fix=f"{alt} or CANN {needed}" if options else f"install CANN {needed} ({alt})",
                         details=det, source=SRC_MATRIX)
        # torch ↔ torch_npu (table)
        if tn and tv:
            look = V.lookup_torch_npu(tn)
            if look.release and V.base_version(look.release.torch) != V.base_version(tv):
                self.add("matrix.torch_torch_npu", "torch ↔ torch_npu", "fail",
                         found=f"torch_npu {tn} is built for torch {look.release.torch}; installed torch {tv}",
                         expected=f"torch {look.release.torch}",
                         fix=f"pip install torch=={look.release.torch}", source=SRC_MATRIX)
            elif V.base_version(tn) != V.base_version(tv) and not look.release:
                self.add("matrix.torch_torch_npu", "torch ↔ torch_npu", "fail",
                         found=f"torch_npu {tn} vs torch {tv} (torch_npu's version follows the torch it is built for)",
                         expected=f"torch {V.base_version(tn)}", fix=f"pip install torch=={V.base_version(tn)}",
                         source=SRC_MATRIX)
            else:
                self.add("matrix.torch_torch_npu", "torch ↔ torch_npu", "ok",
                         found=f"torch {tv} ↔ torch_npu {tn}", source=SRC_MATRIX)
        else:
            self.add("matrix.torch_torch_npu", "torch ↔ torch_npu", "skipped", found="needs torch and torch_npu")
        # Python ↔ torch
        pv = self.py.python if self.py else None
        if tv and pv:
            ok_list = V.python_versions(tv)
            mm = ".".join(pv.split(".")[:2])
            if not ok_list:
                self.add("matrix.python", "Python ↔ torch", "skipped",
                         found=f"torch {tv} has no Python row in the KB", source=SRC_MATRIX)
            elif mm in ok_list:
                self.add("matrix.python", "Python ↔ torch", "ok", found=f"Python {mm} is supported by torch {tv}",
                         source=SRC_MATRIX)
            else:
                self.add("matrix.python", "Python ↔ torch", "fail" if self.torch_npu else "warn",
                         found=f"Python {mm}; torch_npu releases for torch {V.base_version(tv)} support Python "
                               f"{ok_list[0]}–{ok_list[-1]}",
                         expected=f"Python {ok_list[0]}–{ok_list[-1]}",
                         fix=f"create the environment with Python {ok_list[-1]} (e.g. conda create -n npu python={ok_list[-1]})",
                         source=SRC_MATRIX)
        else:
            self.add("matrix.python", "Python ↔ torch", "skipped", found="needs Python and torch versions")

    # ------------------------------------------------------------------ 4. environment
    def check_env(self) -> None:
        if self.env is None:
            for cid, title in (("env.set_env", "set_env.sh sourced"), ("env.python_deps", "CANN Python dependencies"),
                               ("env.numpy", "numpy vs CANN"), ("env.visible_devices", "ASCEND_RT_VISIBLE_DEVICES"),
                               ("env.alloc_conf", "PYTORCH_NPU_ALLOC_CONF"), ("env.vars", "HCCL / runtime variables")):
                if cid in ("env.python_deps", "env.numpy"):
                    continue
                self.add(cid, title, "skipped", found="environment of the --root system unknown",
                         fix="pass --env-file FILE (output of `env` inside that system)")
            self._python_deps()
            self._numpy()
            return
        self._set_env()
        self._python_deps()
        self._numpy()
        self._visible_devices()
        self._alloc_conf()
        self._env_vars()

    def _set_env(self) -> None:
        src = self.rules["set_env"]["source"]
        if not self.installs:
            self.add("env.set_env", "set_env.sh sourced", "skipped", found="no CANN toolkit")
            return
        inst = self.cann
        setenv = f"{inst.base}/set_env.sh"
        missing = [v for v in self.rules["set_env"]["required"] if not self.getenv(v)]
        if missing:
            self.add("env.set_env", "set_env.sh sourced", "fail",
                     found=f"{', '.join(missing)} not set ({self.o.env_label}) — set_env.sh was not sourced",
                     expected="ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, ASCEND_OPP_PATH set; CANN lib64 on LD_LIBRARY_PATH",
                     fix=f"source {setenv}  (add it to ~/.bashrc or the container's entrypoint)", source=src)
            return
        home = self.getenv("ASCEND_HOME_PATH")
        problems = []
        if not self.r.isdir(home):
            problems.append(f"ASCEND_HOME_PATH={home} does not exist")
        else:
            for sub in self.rules["set_env"]["home_subdirs"]:
                if not self.r.isdir(f"{home}/{sub}"):
                    problems.append(f"$ASCEND_HOME_PATH/{sub} missing (torch_npu refuses to start)")
        opp = self.getenv("ASCEND_OPP_PATH")
        if opp and not self.r.isdir(opp):
            problems.append(f"ASCEND_OPP_PATH={opp} does not exist")
        ld = [p.rstrip("/") for p in (self.getenv("LD_LIBRARY_PATH") or "").split(":") if p]
        ld_real = {os.path.realpath(self.r.host(p)) for p in ld}

        def on_ld(path: str) -> bool:
            return path.rstrip("/") in ld or os.path.realpath(self.r.host(path)) in ld_real

        if not on_ld(f"{home}/lib64"):
            problems.append(f"LD_LIBRARY_PATH lacks {home}/lib64")
        warn = []
        if self.driver_path and self.driver:
            for sub in self.rules["set_env"]["driver_ld_dirs"][:1]:
                d = f"{self.driver_path}/{sub}"
                if self.r.isdir(d) and not on_ld(d) and not on_ld(f"{d}/driver") and not on_ld(f"{d}/common"):
                    warn.append(f"LD_LIBRARY_PATH lacks the driver's {d} (+ /common, /driver)")
        active_ver = self.cann_version
        if problems:
            self.add("env.set_env", "set_env.sh sourced", "fail", found="; ".join(problems),
                     fix=f"source {setenv} in a fresh shell", source=src)
        elif warn:
            self.add("env.set_env", "set_env.sh sourced", "warn", found="; ".join(warn),
                     fix=f"export LD_LIBRARY_PATH={self.driver_path}/lib64:{self.driver_path}/lib64/common:"
                         f"{self.driver_path}/lib64/driver:$LD_LIBRARY_PATH", source=src)
        else:
            self.add("env.set_env", "set_env.sh sourced", "ok",
                     found=f"ASCEND_HOME_PATH={home}" + (f" (CANN {active_ver})" if active_ver else ""), source=src)

    def _pythonpath_dirs(self) -> List[str]:
        out = []
        for p in (self.getenv("PYTHONPATH") or "").split(":"):
            if p:
                out.append(self.r.host(p))
        return out

    def _python_deps(self) -> None:
        spec = self.rules["cann_python_deps"]
        if not self.installs:
            self.add("env.python_deps", "CANN Python dependencies", "skipped", found="no CANN toolkit")
            return
        if not self.py or not self.py.site_dirs:
            self.add("env.python_deps", "CANN Python dependencies", "skipped", found="no Python environment found")
            return
        extra = self._pythonpath_dirs()
        missing_pip, tbe_msg = [], None
        for m in spec["modules"]:
            where = self.py.has_module(m["module"], extra)
            if where:
                continue
            if m.get("from_cann"):
                cann_sp = f"{self.cann.home}/python/site-packages" if self.cann else None
                in_cann = [d for d in ([cann_sp] if cann_sp else []) + self.r.glob(f"{self.cann.home}/*-linux/python/site-packages")
                           if self.r.isdir(f"{d}/{m['module']}")] if self.cann else []
                if in_cann and self.env is None:
                    continue  # PYTHONPATH of the --root system is unknown; set_env.sh adds it
                if in_cann:
                    tbe_msg = (f"'{m['module']}' is in {in_cann[0]} but not on PYTHONPATH (set_env.sh not sourced"
                               + (" in this environment" if self.env is not None else "") + ")")
                else:
                    tbe_msg = f"'{m['module']}' not found on PYTHONPATH nor in the CANN install"
            else:
                missing_pip.append(m.get("pip", m["module"]))
        if not missing_pip and not tbe_msg:
            self.add("env.python_deps", "CANN Python dependencies", "ok",
                     found="decorator, sympy, cffi, attrs, psutil, tbe importable", source=spec["source"])
            return
        parts = []
        if missing_pip:
            parts.append(f"missing: {', '.join(missing_pip)}")
        if tbe_msg:
            parts.append(tbe_msg)
        fixes = []
        if missing_pip:
            fixes.append(f"pip install {' '.join(missing_pip)}")
        if tbe_msg:
            fixes.append(f"source {self.cann.base}/set_env.sh" if "not on PYTHONPATH" in tbe_msg
                         else "reinstall the CANN toolkit")
        self.add("env.python_deps", "CANN Python dependencies", "fail", found="; ".join(parts),
                 expected="importable without errors (else `EH9999 init env failed` / `No module named 'tbe'`)",
                 fix="; ".join(fixes), source=spec["source"])

    def _numpy(self) -> None:
        cv = self.cann_version
        if not self.numpy:
            if self.installs:
                self.add("env.numpy", "numpy vs CANN", "warn", found="numpy is not installed; CANN's op compiler needs it",
                         fix="pip install 'numpy<2'" if cv and V.cann_key(cv) < V.cann_key("8.3.RC1") else "pip install numpy",
                         source=self.rules["cann_python_deps"]["source"])
            else:
                self.add("env.numpy", "numpy vs CANN", "skipped", found="no CANN toolkit and no numpy")
            return
        nv = self.numpy.version
        major = P.num_key(nv)[:1]
        if not cv:
            self.add("env.numpy", "numpy vs CANN", "skipped", found=f"numpy {nv}; no CANN version to compare")
            return
        for rule in self.rules["numpy"]:
            if V.cann_key(cv) < V.cann_key(rule["cann_below"]) and major and major[0] > rule["max_major"]:
                self.add("env.numpy", "numpy vs CANN", rule["status"],
                         found=f"numpy {nv} with CANN {cv}: {rule['message']}",
                         expected=f"numpy < {rule['max_major'] + 1}",
                         fix="pip install 'numpy<2'",
                         details={"verified": rule["verified"]}, source=rule["source"])
                return
        self.add("env.numpy", "numpy vs CANN", "ok", found=f"numpy {nv} with CANN {cv}")

    def _visible_devices(self) -> None:
        asc = self.getenv("ASCEND_RT_VISIBLE_DEVICES")
        cuda = self.getenv("CUDA_VISIBLE_DEVICES")
        src = "op-support-and-versions.md §7.2, accuracy-profiling-atc.md §5.5"
        n_logical = len(self.smi.chips) if self.smi and self.smi.chips else None
        if asc is not None:
            toks = [t.strip() for t in asc.split(",")]
            bad = [t for t in toks if not t.isdigit()]
            ids = [int(t) for t in toks if t.isdigit()]
            problems = []
            if bad:
                problems.append(f"not integers: {', '.join(repr(b) for b in bad)}")
            if len(set(ids)) != len(ids):
                problems.append("duplicate ids")
            if n_logical is not None and any(i >= n_logical for i in ids):
                problems.append(f"ids ≥ {n_logical} (npu-smi shows {n_logical} chip(s))")
            if problems:
                self.add("env.visible_devices", "ASCEND_RT_VISIBLE_DEVICES", "fail",
                         found=f"ASCEND_RT_VISIBLE_DEVICES={asc!r}: {'; '.join(problems)}",
                         expected="comma-separated device ids, e.g. 0,1,2,3",
                         fix=f"export ASCEND_RT_VISIBLE_DEVICES={','.join(str(i) for i in range(n_logical or 1))}",
                         source=src)
                return
            if cuda is not None and cuda != asc:
                self.add("env.visible_devices", "ASCEND_RT_VISIBLE_DEVICES", "warn",
                         found=f"ASCEND_RT_VISIBLE_DEVICES={asc} but a leftover CUDA_VISIBLE_DEVICES={cuda}",
                         fix="unset CUDA_VISIBLE_DEVICES (NPUs are selected by ASCEND_RT_VISIBLE_DEVICES)", source=src)
                return
            self.add("env.visible_devices", "ASCEND_RT_VISIBLE_DEVICES", "ok",
                     found=f"ASCEND_RT_VISIBLE_DEVICES={asc}", source=src)
            return
        if cuda is not None:
            self.add("env.visible_devices", "ASCEND_RT_VISIBLE_DEVICES", "warn",
                     found=f"CUDA_VISIBLE_DEVICES={cuda} is set, ASCEND_RT_VISIBLE_DEVICES is not — "
                           "the CUDA variable does not select NPUs",
                     fix=f"export ASCEND_RT_VISIBLE_DEVICES={cuda}; unset CUDA_VISIBLE_DEVICES", source=src)
            return
        self.add("env.visible_devices", "ASCEND_RT_VISIBLE_DEVICES", "ok", found="not set (all devices visible)",
                 source=src)

    def _alloc_conf(self) -> None:
        spec = self.rules["alloc_conf"]
        val = self.getenv("PYTORCH_NPU_ALLOC_CONF")
        cuda_conf = self.getenv("PYTORCH_CUDA_ALLOC_CONF")
        if val is None:
            if cuda_conf:
                self.add("env.alloc_conf", "PYTORCH_NPU_ALLOC_CONF", "warn",
                         found=f"PYTORCH_CUDA_ALLOC_CONF={cuda_conf!r} is set; torch_npu reads PYTORCH_NPU_ALLOC_CONF",
                         fix=f"export PYTORCH_NPU_ALLOC_CONF={cuda_conf!r} (keep only NPU keys)", source=spec["source"])
            else:
                self.add("env.alloc_conf", "PYTORCH_NPU_ALLOC_CONF", "ok", found="not set (defaults)")
            return
        problems = []
        for item in [x.strip() for x in val.split(",") if x.strip()]:
            if ":" not in item:
                problems.append(f"{item!r} is not key:value")
                continue
            k, v = [s.strip() for s in item.split(":", 1)]
            rule = spec["keys"].get(k)
            if rule is None:
                if k in spec["cuda_only_keys"]:
                    problems.append(f"{k} is a CUDA allocator option")
                else:
                    problems.append(f"unknown key {k!r} (known: {', '.join(spec['keys'])})")
                continue
            t = rule["type"]
            if t == "int":
                if not v.isdigit() or int(v) < rule.get("min", 0):
                    problems.append(f"{k} needs a positive integer (MB), got {v!r}")
            elif t == "float":
                try:
                    f = float(v)
                    if not (rule["min_exclusive"] < f < rule["max_exclusive"]):
                        problems.append(f"{k} must be between 0 and 1, got {v}")
                except ValueError:
                    problems.append(f"{k} needs a number between 0 and 1, got {v!r}")
            elif t == "bool_title" and v not in rule["values"]:
                problems.append(f"{k} takes True or False, got {v!r}")
        if problems:
            self.add("env.alloc_conf", "PYTORCH_NPU_ALLOC_CONF", "fail",
                     found=f"PYTORCH_NPU_ALLOC_CONF={val!r}: {'; '.join(problems)}",
                     expected="comma-separated key:value, e.g. expandable_segments:True or max_split_size_mb:128",
                     fix="export PYTORCH_NPU_ALLOC_CONF=expandable_segments:True", source=spec["source"])
        else:
            self.add("env.alloc_conf", "PYTORCH_NPU_ALLOC_CONF", "ok", found=f"PYTORCH_NPU_ALLOC_CONF={val}",
                     source=spec["source"])

    def _env_vars(self) -> None:
        spec = self.rules["env_ranges"]
        fam = self.family
        problems, notes = [], []
        seen = []
        for name, rule in spec["vars"].items():
            v = self.getenv(name)
            if v is None:
                continue
            seen.append(f"{name}={v}")
            r = dict(rule)
            if fam and fam in rule.get("per_family", {}):
                r.update(rule["per_family"][fam])
            if not re.fullmatch(r"-?\d+", v.strip()):
                problems.append(f"{name}={v!r} is not an integer")
                continue
            n = int(v)
            lo, hi = r.get("min"), r.get("max")
            lo_ex = r.get("min_exclusive")
            if (lo is not None and "min_exclusive" not in r and n < lo) or (hi is not None and n > hi) or \
                    (lo_ex is not None and n <= lo_ex):
                rng = f"({lo_ex}, {hi}]" if lo_ex is not None else f"[{lo}, {hi if hi is not None else '∞'}]"
                problems.append(f"{name}={n} is outside {rng}{' for ' + fam if fam in rule.get('per_family', {}) else ''}"
                                + (f" (default {r['default']})" if r.get("default") else ""))
                continue
            if r.get("deprecated_for") and not self.getenv(r["deprecated_for"]):
                notes.append(f"{name} is the old name of {r['deprecated_for']}")
            if str(n) in r.get("note_if", {}):
                notes.append(f"{name}={n}: {r['note_if'][str(n)]}")
            if r.get("note") and fam in rule.get("per_family", {}):
                notes.append(f"{name}: {r['note']}")
        if problems:
            self.add("env.vars", "HCCL / runtime variables", "fail", found="; ".join(problems + notes),
                     fix="unset the variable or set a value inside the range", source=spec["source"])
        elif notes:
            self.add("env.vars", "HCCL / runtime variables", "warn", found="; ".join(notes), source=spec["source"])
        else:
            self.add("env.vars", "HCCL / runtime variables", "ok",
                     found=", ".join(seen) if seen else "none of HCCL_*/TASK_QUEUE_ENABLE/ASCEND_LAUNCH_BLOCKING set",
                     source=spec["source"])

    # ------------------------------------------------------------------ no stack
    def _chip_token(self) -> str:
        info = self.chip or self.requested
        if info and info.kernels_package:
            return info.kernels_package.lower() if info.family != "910C" else "A3"
        return "<chip: 910b|310p|950|…>"

    def _install_hint(self, what: str) -> str:
        rec = V.recommended()
        cann = rec.get("cann", "9.1.0")
        tok = self._chip_token()
        hdk = V.hdk_recommended(cann, self.family) or {}
        if what == "toolkit":
            return (f"install CANN {cann}: Ascend-cann-toolkit_{cann}_linux-<arch>.run --install, then "
                    + self._install_hint("ops")[len("install "):])
        if what == "ops":
            cv = self.cann_version or cann
            if V.cann_key(cv) and V.cann_key(cv) >= V.cann_key("8.5.0"):
                name = f"Ascend-cann-{tok}-ops_{cv}_linux-<arch>.run" if tok != "A3" else f"the A3 ops package for CANN {cv}"
            else:
                name = (f"Ascend-cann-kernels-{tok}_{cv}_linux-<arch>.run" if tok != "A3"
                        else f"Atlas-A3-cann-kernels_{cv}_linux-<arch>.run")
            return f"install {name}"
        if what in ("driver", "firmware"):
            ver = hdk.get(what) or hdk.get("hdk") or "<HDK version for your CANN>"
            if tok == "A3":
                return (f"install the Atlas A3 HDK {what} package, version {ver} (host; its file name is not "
                        f"in the KB — see the A3 install guide)")
            t = tok
            if what == "driver":
                return f"install Ascend-hdk-{t}-npu-driver_{ver}_linux-<arch>.run (host; HDK paired with CANN {cann})"
            return f"install Ascend-hdk-{t}-npu-firmware_{ver}.run (host)"
        return ""

    def _no_stack(self) -> None:
        info = self.chip or self.requested
        rec = V.recommended()
        chip_txt = f"{info.family_name} ({info.series})" if info else "your chip (pass --chip 910b|a3|310p|…)"
        py = rec.get("python") or ["?"]
        self.notes.insert(0, f"No Ascend stack found{' under ' + self.r.root if not self.r.is_live else ''} "
                             f"(no torch_npu, CANN, driver or npu-smi). To set up {chip_txt}, install in this "
                             f"order, then `source set_env.sh` (tested: torch {rec.get('torch')} + torch_npu "
                             f"{rec.get('torch_npu')} + CANN {rec.get('cann')}, Python {py[0]}–{py[-1]}):")
        if self.o.require_npu:
            for c in self.checks:
                if c.status == "skipped" and c.id in ("cann.toolkit", "driver.version", "torch_npu.installed"):
                    c.status = "fail"


def run_doctor(opts: Options) -> Report:
    """Run every check; never raises for bad input (each problem is a check result)."""
    return Doctor(opts).run()
