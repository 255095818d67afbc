#!/usr/bin/env python3
"""Extract the vendored inputs of the diagnose catalogue (tools/diagnose_inputs/).

Reads bare git mirrors of the public repositories (``git --git-dir=... show
COMMIT:PATH``) and writes compact JSON extracts: codes, names and the short
message template only — no code and no long explanation texts.  Each output
records repository URL, commit, file path, the sha256 of the file read and the
licence.  Run it only to refresh the inputs; ``tools/diagnose_catalogue.py``
builds the package data from the extracts without network or mirrors.

    python tools/diagnose_extract.py --runtime /work/.mirror/hicann+runtime/repo \\
        --ge /work/.mirror/hicann+ge/repo --pytorch /work/.mirror/Ascend+pytorch/repo
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "diagnose_inputs")

CANN_LICENCE = "CANN Open Software License Agreement Version 2.0"
TORCH_NPU_LICENCE = "BSD-3-Clause"


def _show(git_dir: str, path: str) -> tuple:
    commit = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    data = subprocess.run(["git", "--git-dir", git_dir, "show", f"{commit}:{path}"], check=True, capture_output=True).stdout
    return commit, data


def _prov(repo: str, commit: str, path: str, data: bytes, licence: str) -> dict:
    return {"repository": f"https://github.com/{repo}", "commit": commit, "path": path,
            "url": f"https://github.com/{repo}/blob/{commit}/{path}", "sha256": hashlib.sha256(data).hexdigest(),
            "licence": licence}


def _entries(doc: dict) -> list:
    out = []
    for e in doc["error_info_list"]:
        out.append({"code": e["ErrCode"], "class": (e.get("errClass") or "").strip(), "title": (e.get("errTitle") or "").strip(),
                    "message": e.get("ErrMessage", "").strip(), "args": [a.strip() for a in e.get("Arglist", "").split(",") if a.strip()]})
    return out


def cann_codes(runtime: str, ge: str) -> dict:
    """E-codes of the CANN error manager: hicann/runtime error_code.json and GE's error_registry.cc (JSON in a raw string)."""
    p1 = "src/dfx/error_manager/error_code.json"
    c1, d1 = _show(runtime, p1)
    p2 = "base/common/error_registry/error_registry.cc"
    c2, d2 = _show(ge, p2)
    blocks = re.findall(r'R"\((.*?)\)"', d2.decode("utf-8"), re.S)
    ge_entries = []
    for b in blocks:
        ge_entries += _entries(json.loads(b))
    rt_entries = _entries(json.loads(d1.decode("utf-8")))
    for e in rt_entries:
        e["from"] = "runtime"
    for e in ge_entries:
        e["from"] = "ge"
    # English per-code pages of the runtime repository (docs/en/error_code_ref/<group>/<code>-<title>.md)
    tree = subprocess.run(["git", "--git-dir", runtime, "ls-tree", "-r", "--name-only", c1, "docs/en/error_code_ref"],
                          check=True, capture_output=True, text=True).stdout.split()
    pages = {}
    for p in tree:
        m = re.match(r".*/(E[0-9A-Z][0-9]{4})-[^/]*\.md$", p)
        if m:
            pages[m.group(1)] = f"https://github.com/hicann/runtime/blob/{c1}/{p}"
    for e in rt_entries:
        if e["code"] in pages:
            e["page"] = pages[e["code"]]
    return {
        "provenance": [_prov("hicann/runtime", c1, p1, d1, CANN_LICENCE), _prov("hicann/ge", c2, p2, d2, CANN_LICENCE)],
        "note": "Fields kept: ErrCode, errClass, errTitle, ErrMessage (the message template), Arglist; the suggestion texts are dropped.",
        "codes": sorted(rt_entries + ge_entries, key=lambda e: e["code"]),
    }


_DEFINE = re.compile(r"#define\s+(ACL_ERROR_[A-Z0-9_]+)\s+(\d{6})\b\s*(?://\s*(.*))?")
_CONST = re.compile(r"static const (?:int|int32_t|uint32_t) (ACL_ERROR_[A-Z0-9_]+) = (\d{6})U?;\s*(?://\s*(.*))?")


def acl_codes(runtime: str, pytorch: str) -> dict:
    """Numeric aclError codes: names from the runtime's public headers, short meaning from torch_npu's NPUErrorCodes.h."""
    prov, names = [], {}
    for path in ("include/external/acl/acl_base_rt.h", "include/external/acl/error_codes/rt_error_codes.h",
                 "include/external/acl/error_codes/ge_error_codes.h"):
        c, d = _show(runtime, path)
        prov.append(_prov("hicann/runtime", c, path, d, CANN_LICENCE))
        for line in d.decode("utf-8").splitlines():
            m = _DEFINE.search(line) or _CONST.search(line)
            if m:
                names.setdefault(int(m.group(2)), {"name": m.group(1), "comment": (m.group(3) or "").strip(), "header": path})
    path = "torch_npu/csrc/core/npu/NPUErrorCodes.h"
    c, d = _show(pytorch, path)
    prov.append(_prov("Ascend/pytorch", c, path, d, TORCH_NPU_LICENCE))
    text = d.decode("utf-8")
    short = {}
    for m in re.finditer(r'\{(\d{6}),\s*"([^"\\]*)', text):
        short[int(m.group(1))] = m.group(2).strip()
    codes = []
    for code in sorted(set(names) | set(short)):
        n = names.get(code, {})
        codes.append({"code": code, "name": n.get("name", ""), "comment": n.get("comment", ""), "header": n.get("header", ""),
                      "torch_npu": short.get(code, "")})
    return {"provenance": prov,
            "note": "name/comment: the #define or constant and its trailing comment; torch_npu: the first sentence of the "
                    "explanation torch_npu prints after '[Error]:' for this code (the remedy texts are dropped).",
            "codes": codes}


def torch_npu_codes(pytorch: str) -> dict:
    """torch_npu's ERR<SS><CCC>: SubModule and ErrCode enums and their descriptions (NPUException.h / .cpp)."""
    ph = "torch_npu/csrc/core/npu/NPUException.h"
    pc = "torch_npu/csrc/core/npu/NPUException.cpp"
    ch, dh = _show(pytorch, ph)
    cc, dc = _show(pytorch, pc)
    h, cpp = dh.decode("utf-8"), dc.decode("utf-8")
    sub = dict((n, int(v)) for n, v in re.findall(r"(\w+) = (\d+)", re.search(r"enum class SubModule \{([^}]*)\}", h).group(1)))
    err = dict((n, int(v)) for n, v in re.findall(r"(\w+) = (\d+)", re.search(r"enum class ErrCode \{([^}]*)\}", h).group(1)))
    sub_names = dict(re.findall(r"\{SubModule::(\w+), \"([^\"]+)\"\}", cpp))
    err_desc = dict(re.findall(r"\{ErrCode::(\w+), \"([^\"]+)\"\}", cpp))
    return {"provenance": [_prov("Ascend/pytorch", ch, ph, dh, TORCH_NPU_LICENCE), _prov("Ascend/pytorch", cc, pc, dc, TORCH_NPU_LICENCE)],
            "format": "ERR<submodule, 2 digits><code, 3 digits> <SUBMODULE> <description>",
            "submodules": [{"id": f"{v:02d}", "enum": k, "name": sub_names.get(k, k)} for k, v in sorted(sub.items(), key=lambda x: x[1])],
            "codes": [{"code": f"{v:03d}", "enum": k, "description": err_desc.get(k, "")} for k, v in sorted(err.items(), key=lambda x: x[1])]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", required=True, help="git dir of github.com/hicann/runtime")
    ap.add_argument("--ge", required=True, help="git dir of github.com/hicann/ge")
    ap.add_argument("--pytorch", required=True, help="git dir of github.com/Ascend/pytorch")
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    for name, doc in (("cann_error_codes.json", cann_codes(a.runtime, a.ge)), ("acl_error_codes.json", acl_codes(a.runtime, a.pytorch)),
                      ("torch_npu_error_codes.json", torch_npu_codes(a.pytorch))):
        with open(os.path.join(OUT, name), "w", encoding="utf-8") as fh:
            json.dump(doc, fh, ensure_ascii=False, indent=1)
            fh.write("\n")
        print(name, len(doc["codes"]))


if __name__ == "__main__":
    main()
