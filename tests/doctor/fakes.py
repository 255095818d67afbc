"""Fake Ascend installs for doctor tests.

Files follow the formats in op-support-and-versions.md §7 (key=value install-info
files, version.cfg, driver/firmware version.info, /etc/ascend_install.info, the
npu-smi table layouts of §7.3).  Content is written here, not copied.
"""

from __future__ import annotations

import os
import stat
import sys
import textwrap
from typing import Dict, Iterable, List, Optional

ASCEND = "/usr/local/Ascend"


def write(root: str, path: str, text: str, mode: Optional[int] = None) -> str:
    host = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(host), exist_ok=True)
    with open(host, "w", encoding="utf-8") as fh:
        fh.write(text)
    if mode is not None:
        os.chmod(host, mode)
    return host


def write_bytes(root: str, path: str, data: bytes) -> str:
    host = os.path.join(root, path.lstrip("/"))
    os.makedirs(os.path.dirname(host), exist_ok=True)
    with open(host, "wb") as fh:
        fh.write(data)
    return host


def mkdir(root: str, path: str) -> str:
    host = os.path.join(root, path.lstrip("/"))
    os.makedirs(host, exist_ok=True)
    return host


def codes(*nums: int) -> str:
    return ",".join(f"[V100R001C{n}]" for n in nums)


def toolkit_info(version: str, inner: int, compat: Iterable[int], arch: str = "aarch64", path: str = "") -> str:
    return textwrap.dedent(f"""\
        package_name=Ascend-cann-toolkit
        version={version}
        innerversion=V100R001C{inner}SPC001B100
        compatible_version={codes(*compat)}
        arch={arch}
        os=linux
        path={path}
        """)


def driver_info(version: str, inner: int, compat: Iterable[int], fw_range: str = "[7.0.0,8.9.9]") -> str:
    return textwrap.dedent(f"""\
        Version={version}
        ascendhal_version=7.35.19
        aicpu_version=1.0
        tdt_version=1.0
        Innerversion=V100R001C{inner}SPC002B300
        compatible_version={codes(*compat)}
        compatible_version_fw={fw_range}
        package_version={version}
        """)


INSTALL_INFO = textwrap.dedent("""\
    UserName=HwHiAiUser
    UserGroup=HwHiAiUser
    Driver_Install_Type=full
    Driver_Install_Path_Param=/usr/local/Ascend
    Firmware_Install_Path_Param=/usr/local/Ascend
    """)


def make_cann(root: str, version: str = "8.3.RC1", inner: int = 23, compat: Iterable[int] = (19, 20, 21, 22, 23),
              layout: str = "ascend-toolkit", arch: str = "aarch64", ops: Optional[str] = None,
              kernels_cfg: bool = True, tbe: bool = True, nnal: Optional[str] = None) -> str:
    """Install a fake CANN; returns the target-system home (…/latest or …/cann)."""
    if layout == "ascend-toolkit":
        real = f"{ASCEND}/ascend-toolkit/{version}"
        home = f"{ASCEND}/ascend-toolkit/latest"
        mkdir(root, real)
        link = os.path.join(root, home.lstrip("/"))
        os.symlink(real, link)  # absolute link, as the installer makes it: must be re-rooted
        write(root, f"{ASCEND}/ascend-toolkit/set_env.sh", "# fake set_env.sh\n")
    else:
        real = f"{ASCEND}/cann-{version}"
        home = f"{ASCEND}/cann"
        mkdir(root, real)
        os.symlink(f"cann-{version}", os.path.join(root, home.lstrip("/")))  # relative link
        write(root, f"{real}/set_env.sh", "# fake set_env.sh\n")
    write(root, f"{real}/{arch}-linux/ascend_toolkit_install.info",
          toolkit_info(version, inner, compat, arch, f"{real}/{arch}-linux"))
    for sub in ("runtime", "compiler", "lib64", "opp", "python/site-packages"):
        mkdir(root, f"{real}/{sub}")
    if tbe:
        write(root, f"{real}/python/site-packages/tbe/__init__.py", "")
    if kernels_cfg and layout == "ascend-toolkit":
        write(root, f"{real}/version.cfg", textwrap.dedent(f"""\
            # version: 1.0
            runtime_running_version=[7.8.0.1.100:{version}]
            compiler_running_version=[7.8.0.1.100:{version}]
            opp_kernel_running_version=[7.8.0.1.100:{version}]
            """))
    if ops:
        write(root, f"{real}/{arch}-linux/ascend_ops_install.info", textwrap.dedent(f"""\
            package_name=Ascend-cann-{ops}-ops
            version={version}
            innerversion=V100R001C{inner}SPC001B100
            arch={arch}
            os=linux
            """))
    if nnal:
        write(root, f"{ASCEND}/nnal/atb/set_env.sh", "# fake atb set_env\n")
        write(root, f"{ASCEND}/nnal/atb/latest/version.info", f"version={nnal}\n")
    return home


def make_driver(root: str, version: str = "25.3.rc1", inner: int = 23, compat: Iterable[int] = (19, 20, 21, 22, 23),
                fw: Optional[str] = "7.7.0.1.231", fw_range: str = "[7.0.0,8.9.9]", install_info: bool = True) -> None:
    write(root, f"{ASCEND}/driver/version.info", driver_info(version, inner, compat, fw_range))
    for sub in ("lib64", "lib64/common", "lib64/driver"):
        mkdir(root, f"{ASCEND}/driver/{sub}")
    if fw:
        write(root, f"{ASCEND}/firmware/version.info", f"Version={fw}\n")
    if install_info:
        write(root, "/etc/ascend_install.info", INSTALL_INFO)


def metadata(name: str, version: str, requires: Iterable[str] = ()) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n"


def make_site(root: str, python: str = "3.11", torch: Optional[str] = "2.7.1", torch_npu: Optional[str] = "2.7.1",
              torch_pin: Optional[str] = "==2.7.1.*", numpy: Optional[str] = "1.26.4",
              deps: Iterable[str] = ("decorator", "sympy", "cffi", "attr", "psutil")) -> str:
    """site-packages under ``/usr/local/lib/python<X.Y>/site-packages``; returns its target path."""
    sp = f"/usr/local/lib/python{python}/site-packages"
    mkdir(root, sp)

    def dist(name: str, version: str, requires: Iterable[str] = ()) -> None:
        write(root, f"{sp}/{name}-{version}.dist-info/METADATA", metadata(name, version, requires))

    if torch:
        dist("torch", torch, ["filelock", "sympy>=1.13"])
        write(root, f"{sp}/torch/__init__.py", "")
    if torch_npu:
        reqs = ["pyyaml", "setuptools"] + ([f"torch{torch_pin}"] if torch_pin else [])
        dist("torch_npu", torch_npu, reqs)
        write(root, f"{sp}/torch_npu/__init__.py", "")
    if numpy:
        dist("numpy", numpy)
        write(root, f"{sp}/numpy/__init__.py", "")
    for mod in deps:
        write(root, f"{sp}/{mod}/__init__.py", "")
    return sp


def set_env(home: str, driver: bool = True, extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """What `source set_env.sh` exports (op-support-and-versions.md §7.2), target-system paths."""
    ld = [f"{home}/lib64", f"{home}/lib64/plugin/opskernel", f"{home}/lib64/plugin/nnengine"]
    if driver:
        ld += [f"{ASCEND}/driver/lib64", f"{ASCEND}/driver/lib64/common", f"{ASCEND}/driver/lib64/driver"]
    env = {
        "PATH": "/usr/bin:/bin",
        "ASCEND_TOOLKIT_HOME": home,
        "ASCEND_HOME_PATH": home,
        "ASCEND_OPP_PATH": f"{home}/opp",
        "ASCEND_AICPU_PATH": home,
        "TOOLCHAIN_HOME": f"{home}/toolkit",
        "LD_LIBRARY_PATH": ":".join(ld),
        "PYTHONPATH": f"{home}/python/site-packages:{home}/opp/built-in/op_impl/ai_core/tbe",
    }
    env.update(extra or {})
    return env


def make_dev(root: str, n: int = 2) -> None:
    for i in range(n):
        write(root, f"/dev/davinci{i}", "")
    for name in ("davinci_manager", "devmm_svm", "hisi_hdc"):
        write(root, f"/dev/{name}", "")


# ----------------------------------------------------------------------------- npu-smi outputs

SEP = "+---------------------------+---------------+----------------------------------------------------+"
SEP2 = "+===========================+===============+====================================================+"


def smi_a2(names: List[str], hbm_used: Optional[List[int]] = None, procs: Iterable[tuple] = (),
           version: str = "25.3.rc1", health: Optional[List[str]] = None) -> str:
    """A2 layout (910B*): name row + metric row per NPU; HBM column present."""
    hbm_used = hbm_used or [3300] * len(names)
    health = health or ["OK"] * len(names)
    out = [
        "+------------------------------------------------------------------------------------------------+",
        f"| npu-smi {version:<24} Version: {version:<46}|",
        SEP,
        "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|",
        "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |",
        SEP2,
    ]
    for i, name in enumerate(names):
        out.append(f"| {i:<5} {name:<19} | {health[i]:<13} | 90.1        40                0    / 0             |")
        out.append(f"| 0                         | 0000:{0xc1 + i:02X}:00.0  | 0           0    / 0          "
                   f"{hbm_used[i]:>5}/ 65536         |")
        out.append(SEP2)
    out += _proc_table(procs, range(len(names)))
    return "\n".join(out) + "\n"


def _proc_table(procs: Iterable[tuple], npus: Iterable[int]) -> List[str]:
    procs = list(procs)
    out = [SEP, "| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |", SEP2]
    for npu in npus:
        mine = [p for p in procs if p[0] == npu]
        if not mine:
            out.append(f"| No running processes found in NPU {npu:<61}|")
        for (n, chip, pid, pname, mem) in mine:
            out.append(f"| {n:<7} {chip:<17} | {pid:<13} | {pname:<24} | {mem:<23} |")
        out.append(SEP2)
    return out


def smi_a3(npus: int = 1, procs: Iterable[tuple] = (), version: str = "25.3.rc1") -> str:
    """A3 layout: `Chip  Phy-ID` header, Name `Ascend910`, two chip rows per NPU."""
    out = [
        f"| npu-smi {version:<24} Version: {version:<46}|",
        SEP,
        "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|",
        "| Chip  Phy-ID              | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |",
        SEP2,
    ]
    phy = 0
    for n in range(npus):
        for chip in (0, 1):
            out.append(f"| {n:<5} {'Ascend910':<19} | OK            | 170.2       36                0    / 0             |")
            out.append(f"| {chip:<5} {phy:<19} | 0000:{0x9d + phy:02X}:00.0  | 0           0    / 0          3200 / 65536         |")
            out.append(SEP)
            phy += 1
    out += _proc_table(procs, range(npus))
    return "\n".join(out) + "\n"


def smi_310p(cards: int = 1, procs: Iterable[tuple] = (), version: str = "24.1.rc2") -> str:
    """310P3 layout: `Chip  Device` header, no HBM column, NPU ids like 8 / 16."""
    out = [
        f"| npu-smi {version:<24} Version: {version:<46}|",
        SEP,
        "| NPU     Name                  | Health          | Power(W)     Temp(C)           Hugepages-Usage(page) |",
        "| Chip    Device                | Bus-Id          | AICore(%)    Memory-Usage(MB)                        |",
        SEP2,
    ]
    for c in range(cards):
        npu = 8 * (c + 1)
        out.append(f"| {npu:<7} {'310P3':<21} | OK              | NA           50                0     / 0             |")
        out.append(f"| 0       {c:<21} | 0000:{0x81 + c:02X}:00.0    | 0            1800 / 21527                            |")
        out.append(SEP2)
    out += _proc_table(procs, [8 * (c + 1) for c in range(cards)])
    return "\n".join(out) + "\n"


BOARD_A3 = textwrap.dedent("""\
        NPU ID                         : 0
        Chip ID                        : 0
        Chip Type                      : Ascend
        Chip Name                      : Ascend910
        NPU Name                       : 9392
    """)


def fake_npu_smi(dirpath: str, info: str, board: str = "", sleep: float = 0.0, rc: int = 0) -> str:
    """An executable `npu-smi` printing ``info`` for `info` and ``board`` for `info -t board`."""
    os.makedirs(dirpath, exist_ok=True)
    with open(os.path.join(dirpath, "info.txt"), "w") as fh:
        fh.write(info)
    with open(os.path.join(dirpath, "board.txt"), "w") as fh:
        fh.write(board)
    path = os.path.join(dirpath, "npu-smi")
    with open(path, "w") as fh:
        fh.write(textwrap.dedent(f"""\
            #!{sys.executable}
            import os, sys, time
            here = os.path.dirname(os.path.abspath(__file__))
            time.sleep({sleep})
            if {rc}:
                sys.stderr.write("dcmi module initialize failed. ret is -8005\\n")
                sys.exit({rc})
            name = "board.txt" if "-t" in sys.argv else "info.txt"
            sys.stdout.write(open(os.path.join(here, name)).read())
            """))
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path
