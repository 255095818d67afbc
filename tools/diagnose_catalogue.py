#!/usr/bin/env python3
"""Regenerate the code catalogue of ``ascendify diagnose`` from the vendored inputs.

    python tools/diagnose_catalogue.py          # write src/ascendify/diagnose/data/catalogue/*_codes.toml
    python tools/diagnose_catalogue.py --check  # exit 1 if a file would change

Inputs (tools/diagnose_inputs/, provenance in its README.md and in each file):

* ``cann_error_codes.json`` — E-codes of the CANN error manager (hicann/runtime
  ``error_code.json`` + hicann/ge ``error_registry.cc``): code, class, title,
  message template, argument names;
* ``acl_error_codes.json`` — numeric aclError codes (names from hicann/runtime's
  public headers, first sentence of torch_npu's ``NPUErrorCodes.h`` text);
* ``aclnn_codes.json`` — aclnn status codes (hiascend "aclnn Return Codes" page);
* ``torch_npu_error_codes.json`` — torch_npu's ``ERR<SS><CCC>`` enums;
* ``catalogue_notes.toml`` — our own cause / fix texts for codes whose generic
  text (chosen below from the error title) is not specific enough.

Outputs: ``cann_module_codes.toml``, ``acl_codes.toml``, ``torch_npu_codes.toml``.
Every entry gets ``on_code`` (the code that triggers it), a ``source`` URL
pointing at the upstream file (commit-pinned) and an ``example`` log line in the
shape the CANN error manager / torch_npu print it.  Codes that a hand-written
signature in ``signatures.toml`` already explains are skipped (they stay there).
Meaning, cause and fix are our own words; only the short message template is
quoted, because logs print it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
INPUTS = os.path.join(HERE, "diagnose_inputs")
DATA = os.path.join(ROOT, "src", "ascendify", "diagnose", "data")
OUT = os.path.join(DATA, "catalogue")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PID_TS = "[PID: 4242] 2026-05-01-10:00:00.123.456"

# ------------------------------------------------------------------ E-codes

_ARG_VALUES = {
    "value": "[-1]", "values": "[0,1]", "parameter": "[--input_shape]", "param": "[stream]", "params": "[dims]",
    "reason": "the value is out of range", "op_name": "[MatMul_12]", "opname": "[Conv2D_3]", "optype": "[Conv2D]",
    "op_type": "[Conv2D]", "index": "0", "func": "aclrtMemcpy", "func1": "aclrtMalloc", "func2": "mmap",
    "path": "[/data/model/resnet50.om]", "filepath": "[/data/fusion_switch.cfg]", "file": "[/data/model.onnx]",
    "env": "[HCCL_BUFFSIZE]", "module_name": "HCCL", "buf_size": "1048576", "alloc_interface": "malloc",
    "id": "3", "ret_code": "12", "expect": "[1, 2147483647]", "extend_info": "",
    "message": "x shape [8, 128] and y shape [64, 8] cannot be broadcast", "config": "[op_debug_level]",
    "tips": "the value must be a positive integer", "remote_rankid": "3", "ccl_op": "HcclAllReduce",
    "tag": "[AllReduce_7]", "para_name": "[count]", "local_para": "[1024]", "remote_para": "[2048]",
    "version": "[1.0]", "local_version": "[8.2]", "remote_version": "[8.0]", "error_reason": "device ip is invalid",
    "ranktable_path": "/data/rank_table.json", "memory_size": "268435456", "resource_type": "[memory]",
    "resource_info": "[size 268435456]", "suggest": "check the link state with hccn_tool", "pass_name": "[ConvBiasFusionPass]",
    "pass_type": "[built-in]", "intf1": "aclprofInit", "intf2": "aclprofStart", "intf": "aclprofGetStepTimestamp",
    "mode1": "dynamic", "mode2": "static", "operation": "aclprofCreateConfig", "api": "aclprofStart",
    "attr_name": "keep_dims", "incorrect_val": "2", "correct_val": "0 or 1", "incorrect_shape": "[3, 5]",
    "correct_shape": "[3, 4]", "incorrect_size": "3", "correct_size": "4", "param_name": "x", "data_format": "NC1HWC0",
    "expected_format_list": "[ND, NCHW]", "data_dtype": "DT_INT8", "expected_dtype_list": "[DT_FLOAT16, DT_FLOAT]",
    "aicore_error_info": "task failed on device 0, stream_id=3, task_id=17", "opskernel": "AIcoreEngine", "shape": "[input:1,3,224,-1]", "sample": "input_name:n,c,h,w",
}


def _fill(template: str, args: list) -> str:
    parts = template.split("\n")[0].split("%s")
    out = [parts[0]]
    for i, rest in enumerate(parts[1:]):
        name = args[i] if i < len(args) else ""
        out.append(_ARG_VALUES.get(name, name.replace("_", " ") or "x"))
        out.append(rest)
    return re.sub(r"\s+", " ", "".join(out)).strip()


def _short(template: str) -> str:
    s = template.split("\n")[0].replace("%s", "…").strip()
    s = re.sub(r"\s+", " ", s)
    return s if len(s) <= 90 else s[:87].rstrip() + "..."


def _title(message: str, human: str) -> str:
    short = _short(message)
    return short if len(re.sub(r"[…\s.:,\[\]]", "", short)) >= 8 else human


def _human(title: str) -> str:
    return title.replace("/", " or ").replace("_", " ").strip().lower() or "error"


_OPS = set("56789ABZ")

_FIX_BY_MODULE = {
    "1": "Correct the ATC / graph option or model input named in the message (compare with `atc --help` of the installed CANN).",
    "2": "Read the op and pass named in the message; switch the fusion pass off (--fusion_switch_file) or update CANN.",
    "3": "Read the AI CPU op named in the message; prefer an AI Core path (another dtype or op).",
    "4": "Read the op compiler's Python traceback in the plog; check the op's dtype/shape and the CANN Python dependencies.",
    "E": "Read the API and argument named in the message; most runtime argument errors come from a device / stream / context mix-up.",
    "H": "Read the ACL API and argument named in the message.",
    "I": "Read the HCCL message on every rank; make all ranks call the same collectives with the same arguments.",
    "J": "Check the NPU network (hccn_tool) and the IP / port settings named in the message.",
    "K": "Fix the profiling configuration named in the message (one profiling mode at a time).",
    "L": "Check the device with `npu-smi info` and the driver installation.",
    "P": "Fix the dump configuration (acl.json / msprobe config) named in the message.",
}
_OPS_FIX = ("Check the shape, dtype, format and attributes of the inputs of the op named in the message; "
            "rerun with ASCEND_LAUNCH_BLOCKING=1 to find the Python call that launched it.")


def _category(title: str, message: str) -> tuple:
    """(kind, role) from the error title / message."""
    t = title.lower()
    m = message.lower()
    if "tiling" in t:
        return "tiling", "cause"
    if t.startswith("inner_error") or "inner error" in m or t in ("system_terminated",) or t.endswith("inner_error"):
        return "inner", "wrapper"
    if "timeout" in t or "times out" in m or "timed out" in m or "timeout" in m:
        return "timeout", "consequence"
    for key in ("not_supported", "unsupported", "operation_unsupported"):
        if key in t:
            return "unsupported", "cause"
    if "memory" in t or "resource" in t or "insufficient" in t or "busy" in t or "full_service" in t:
        return "resource", "cause"
    if t.startswith(("config_error", "ranktable")) or "ranktable" in t:
        return "config", "cause"
    if t.startswith(("file_operation", "directory_operation")) or "file_" in t:
        return "file", "cause"
    if t.startswith(("compilation_error", "initialization_error")) or "compile" in t:
        return "compile", "cause"
    if t.startswith("environment_error"):
        return "environment", "cause"
    if t.startswith("package_error"):
        return "package", "cause"
    if t.startswith(("execution_error", "communication_error")) or "execute" in m:
        return "execution", "cause"
    if "invalid" in t or t.startswith("invalid_argument") or "incorrect" in m or "invalid" in m:
        return "argument", "cause"
    return "other", "cause"


_PROSE = {
    "1": "GE (the graph engine behind ATC)", "2": "FE (the fusion engine)", "3": "the AI CPU component", "4": "the TBE op compiler",
    "5": "an operator's parameter check", "6": "an operator's parameter check", "7": "a vector operator plugin",
    "8": "a vector operator", "9": "an operator's parameter check", "A": "an operator's parameter check",
    "B": "the TBE pass compiler", "E": "the runtime", "F": "LxFusion / AutoDeploy", "H": "AscendCL", "I": "HCCL", "J": "HCCP (the NPU network process)",
    "K": "profiling", "L": "the NPU driver", "M": "queue scheduling", "O": "AMCT (quantisation)", "P": "the dump component",
    "Z": "an operator / aclnn API",
}
"""How a module reads inside a sentence (the [cann_modules] names are table labels)."""

_CAUSE = {
    "argument": "{Module} checked an argument and rejected it ({human}); the message gives the op or parameter, the value and the rule it broke.",
    "unsupported": "{Module} does not support this case ({human}); the message names the op and the shape, dtype, format or attribute it does not handle on this CANN release or chip.",
    "inner": "Internal error in {module} without a user-level explanation; it usually follows an earlier, more specific error.",
    "timeout": "{Module} gave up waiting ({human}); the component it waited for (a kernel, a peer rank, a device) failed or hung first.",
    "resource": "{Module} ran out of a resource ({human}).",
    "config": "A configuration value that {module} reads is invalid ({human}).",
    "file": "A file or directory operation of {module} failed ({human}): missing path, no permission, full disk or a truncated file.",
    "compile": "Compiling an operator or a fusion pass failed in {module} ({human}).",
    "environment": "The software environment of {module} is wrong ({human}): Python version or Python modules of the CANN op compiler.",
    "package": "A package check of {module} failed ({human}): installed CANN, driver, firmware or ops versions do not fit together.",
    "execution": "Executing a task failed in {module} ({human}).",
    "tiling": "Tiling (splitting the kernel's work over the cores) failed for the op: a shape or attribute value the kernel does not handle.",
    "other": "{Module} reported an error ({human}); the text after the code names the op, argument or resource.",
}
_FIX = {
    "unsupported": "Use a supported dtype / format / shape (cast or reshape the input), replace the op, or upgrade CANN; check the chip with `npu-smi info`.",
    "inner": "Find the first [ERROR] line before it in the plogs of all ranks and fix that; if it stands alone, upgrade CANN or report it with the plog.",
    "timeout": "Find what it waited for: a hung op (ASCEND_LAUNCH_BLOCKING=1) or, in distributed jobs, the rank that failed first.",
    "resource": "Free the resource: stop other processes on the host / NPU, lower the batch size, use fewer streams or threads, free disk space.",
    "config": "Correct the configuration item or environment variable named in the message.",
    "file": "Check the path named in the message, its permissions and the free disk space; regenerate the file if it is incomplete.",
    "compile": "Read the compiler traceback in the plog; change the op's dtype / shape, switch off the failing fusion pass, install the CANN Python dependencies.",
    "environment": "Use a Python version that the CANN release supports, install CANN's Python dependencies (decorator, sympy, cffi, attrs, psutil, numpy) and source set_env.sh.",
    "package": "Install matching driver, firmware, CANN toolkit and ops packages (see the CANN release notes).",
    "tiling": "Change the shape or attribute reaching the op (padding, a different layout), or replace the op; upgrade CANN if a newer release handles it.",
}


def _next(module_char: str, role: str) -> str:
    if module_char == "1":
        return "Re-run the atc command with --log=error and read the plog under $HOME/ascend/log/debug/plog/."
    if module_char in "IJ":
        return "Diagnose the logs of all ranks together (`ascendify diagnose LOGDIR/`) and start from the earliest error."
    if role == "wrapper":
        return "Find the first [ERROR] line in time in the plogs ($HOME/ascend/log/debug/plog/ or ASCEND_PROCESS_LOG_PATH)."
    return "Rerun with ASCEND_LAUNCH_BLOCKING=1 for an accurate Python stack; read the plog for the full message."


def _legacy_codes() -> set:
    with open(os.path.join(DATA, "signatures.toml"), "rb") as fh:
        doc = tomllib.load(fh)
    out = set()
    for s in doc.get("signature", []):
        out.update(str(c) for c in s.get("codes", []))
        out.update(x for x in s.get("any", []) if re.fullmatch(r"E[0-9A-Z][0-9]{4}", x))
    return out


def _notes() -> dict:
    with open(os.path.join(INPUTS, "catalogue_notes.toml"), "rb") as fh:
        return tomllib.load(fh)


def _toml_str(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _render(header: str, entries: list) -> str:
    lines = [header.rstrip(), ""]
    for e in entries:
        lines.append("[[signature]]")
        for k, v in e.items():
            if isinstance(v, bool):
                lines.append(f"{k} = {'true' if v else 'false'}")
            elif isinstance(v, list):
                lines.append(f"{k} = [" + ", ".join(_toml_str(x) for x in v) + "]")
            else:
                lines.append(f"{k} = {_toml_str(v)}")
        lines.append("")
    return "\n".join(lines)


def _header(what: str, inputs: list) -> str:
    return "\n".join([
        f"# GENERATED by tools/diagnose_catalogue.py from tools/diagnose_inputs/{', '.join(inputs)} — do not edit;",
        "# change the inputs or catalogue_notes.toml and regenerate.  Schema: see the header of ../signatures.toml.",
        f"# {what}",
    ])


def build_cann(modules: dict, skip: set, notes: dict) -> tuple:
    with open(os.path.join(INPUTS, "cann_error_codes.json"), encoding="utf-8") as fh:
        doc = json.load(fh)
    urls = {p["repository"].rsplit("/", 1)[-1]: p["url"] for p in doc["provenance"]}
    entries, skipped = [], []
    for c in doc["codes"]:
        code = c["code"]
        if not re.fullmatch(r"E[0-9A-Z][0-9]{4}", code):
            skipped.append(code)  # W-codes (warnings) are not found by the scanner's code shape
            continue
        if code in skip:
            continue
        mc = code[1]
        module = modules.get(mc, "CANN")
        kind, role = _category(c["title"], c["message"])
        if code[2] == "9":
            kind, role = "inner", "wrapper"
        human = _human(c["title"]) if c["title"] else _short(c["message"]).lower()
        n = notes.get(code, {})
        role = n.get("role", role)
        prose = _PROSE.get(mc, module)
        cause = n.get("cause") or _CAUSE[kind].format(module=prose, Module=prose[:1].upper() + prose[1:], human=human.rstrip("."))
        fix = n.get("fix") or (_FIX.get(kind) if kind not in ("argument", "execution", "other") else None) or \
            (_OPS_FIX if mc in _OPS else _FIX_BY_MODULE.get(mc, "Read the message after the code; it names the op, argument or resource."))
        src = [c.get("page") or urls["runtime" if c["from"] == "runtime" else "ge"]]
        if c.get("page"):
            src.append(urls["runtime"])
        if n.get("extra_source"):
            src.append(n["extra_source"])
        entries.append({
            "id": f"cann-{code}", "family": "cann-code", "title": f"{code}: {_title(c['message'], human)}",
            "severity": n.get("severity", "error"), "role": role, "on_code": [code], "message": c["message"].split("\n")[0],
            "cause": cause, "fix": fix, "next_step": n.get("next_step") or _next(mc, role),
            "source": " ".join(src), "example": [f"{code}: {PID_TS} {_fill(c['message'], c['args'])}"],
        })
        if "priority" in n:
            entries[-1]["priority"] = int(n["priority"])
    return entries, skipped


_ACL_API = {"07": "aclrtSynchronizeStream", "00": "aclmdlExecute", "48": "aclopCompileAndExecute", "45": "aclmdlLoadFromFile"}


def _acl_role(code: int, name: str) -> str:
    s = str(code)
    low = name.lower()
    if "timeout" in low or "abort" in low or "retry" in low or "remote" in low:
        return "consequence"
    if s[0] == "5":
        if any(k in low for k in ("exception", "trap", "mem_error", "ecc", "link_error", "socket_close", "overflow",
                                  "dev_setup", "capture", "aicpu")):
            return "cause"
        return "wrapper"
    return "cause"


def _acl_words(name: str) -> str:
    words = re.sub(r"^ACL(?:NN)?_ERR(?:OR)?_(?:RT_|GE_|INNER_)?", "", name).replace("_", " ").lower()
    return words or name.lower()


def build_acl(skip: set, notes: dict) -> list:
    with open(os.path.join(INPUTS, "acl_error_codes.json"), encoding="utf-8") as fh:
        doc = json.load(fh)
    with open(os.path.join(INPUTS, "aclnn_codes.json"), encoding="utf-8") as fh:
        nn = json.load(fh)
    prov = {p["path"]: p["url"] for p in doc["provenance"]}
    tn_url = next(p["url"] for p in doc["provenance"] if p["path"].endswith("NPUErrorCodes.h"))
    comp = {"00": "ACL", "48": "ACL", "07": "runtime", "45": "GE", "61": "aclnn"}
    entries = []
    rows = [dict(c, meaning="") for c in doc["codes"]] + [
        {"code": c["code"], "name": c["name"], "comment": "", "header": "", "torch_npu": "", "meaning": c["meaning"]} for c in nn["codes"]]
    nn_url = nn["provenance"][0]["url"]
    for c in rows:
        code = c["code"]
        if str(code) in skip:
            continue
        s = str(code)
        name = c["name"] or f"ACL code {code}"
        what = c["meaning"] or (c["torch_npu"].rstrip(".") if c["torch_npu"] else "") or c["comment"] or _acl_words(name)
        role = _acl_role(code, name)
        component = comp.get(s[1:3], "CANN")
        n = notes.get(s, {})
        role = n.get("role", role)
        kind = {"1": "argument", "2": "resource", "5": "inner" if role == "wrapper" else "device"}.get(s[0], "other")
        if role == "consequence":
            cause = f"A call into {component} returned {code} ({name}: {what}); it reports a wait that ended or a task stopped because something else failed first."
            fix = "Find what it waited for: the hung op (ASCEND_LAUNCH_BLOCKING=1) or, in distributed jobs, the rank that failed first."
        elif kind == "argument":
            cause = f"A call into {component} was given something it rejects ({name}: {what}); usually a wrong device, stream, model or argument in the calling code or a version mismatch."
            fix = "Read the call named before the code; check the device index, the current device of the thread and that CANN, driver and torch_npu versions match."
        elif kind == "resource":
            cause = f"A call into {component} failed for lack of a resource or support ({name}: {what})."
            fix = "Free the resource (other processes on the NPU, memory, streams) or use a feature the installed driver / CANN supports."
        elif kind == "inner":
            cause = f"Internal {component} error {code} ({name}: {what}); it wraps the specific error printed before it."
            fix = "Read the E-code lines and the plog printed with it; fix the first error in time."
        else:
            cause = f"The device or {component} reported {code} ({name}: {what})."
            fix = "Rerun with ASCEND_LAUNCH_BLOCKING=1 to find the failing op and read the plog and the device log."
        cause = n.get("cause", cause)
        fix = n.get("fix", fix)
        if c["meaning"]:
            src = [nn_url]
        else:
            src = [prov[c["header"]]] if c["header"] else []
            if c["torch_npu"]:
                src.append(tn_url)
        api = _ACL_API.get(s[1:3], "aclrtSynchronizeDevice")
        if s[1:3] == "61":
            example = f"RuntimeError: call aclnnMatmul failed, error code is {code}"
        elif s[0] == "5" and s[1:3] == "07":
            example = f"RuntimeError: SynchronizeStream:torch_npu/csrc/core/npu/NPUStream.cpp:412 NPU function error: {api}, error code is {code}"
        else:
            example = f"RuntimeError: Execute:torch_npu/csrc/core/npu/NPUFunctions.cpp:180 NPU function error: {api}, error code is {code}"
        entries.append({
            "id": f"acl-{code}", "family": "acl-code", "title": f"ACL {code} {name}: {what}",
            "severity": n.get("severity", "error"), "role": role, "on_code": [s],
            "cause": cause, "fix": fix,
            "next_step": n.get("next_step") or ("Rerun with ASCEND_LAUNCH_BLOCKING=1 (device errors are reported at the next "
                                                "synchronising call) and read the plog / device log."),
            "source": " ".join(src), "example": [example],
        })
        if "priority" in n:
            entries[-1]["priority"] = int(n["priority"])
    return entries


def build_torch_npu() -> list:
    with open(os.path.join(INPUTS, "torch_npu_error_codes.json"), encoding="utf-8") as fh:
        doc = json.load(fh)
    url = " ".join(p["url"] for p in doc["provenance"])
    subs = {s["id"]: s["name"] for s in doc["submodules"]}
    fix_by = {
        "100": "Fix the ACL error printed before it (`error code is N` / E-code lines): it carries the reason.",
        "200": "Fix the HCCL error printed before it; in distributed jobs start from the rank that failed first.",
        "300": "Fix the GE error printed before it (E1xxxx / E-code lines) and read the plog.",
    }
    entries = []
    for sub_id, sub in subs.items():
        for c in doc["codes"]:
            ccc = c["code"]
            if ccc == "000":
                continue
            desc = c["description"]
            code = f"ERR{sub_id}{ccc}"
            entries.append({
                "id": f"torch-npu-{code}", "family": "torch-npu-code", "title": f"{code} {sub} {desc}",
                "severity": "error", "role": "wrapper", "on_code": [code],
                "cause": (f"torch_npu's {sub} layer raised the error and tagged it '{desc}'; this suffix marks where torch_npu "
                          "stopped, the message printed before it (CANN E-code, `error code is N`, Python text) carries the reason."),
                "fix": fix_by.get(ccc, "Fix what the message before the ERR code says (argument, type, value, missing resource, permission)."),
                "next_step": "Read the lines just above the `[ERROR] ... ERR` line; rerun with ASCEND_LAUNCH_BLOCKING=1 for an accurate stack.",
                "source": url,
                "example": [f"[ERROR] 2026-05-01-10:00:00 (PID:4242, Device:0, RankID:0) {code} {sub} {desc}"],
            })
    return entries


def generate() -> dict:
    with open(os.path.join(DATA, "signatures.toml"), "rb") as fh:
        modules = dict(tomllib.load(fh).get("cann_modules", {}))
    skip = _legacy_codes()
    notes = {str(k): v for k, v in _notes().items()}
    cann, skipped = build_cann(modules, skip, notes)
    acl = build_acl(skip, notes)
    tnpu = build_torch_npu()
    files = {
        "cann_module_codes.toml": _render(_header(f"{len(cann)} CANN E-codes (module-prefixed codes of the error manager); "
                                                  f"not included: {', '.join(skipped)} (warning codes)", ["cann_error_codes.json"]), cann),
        "acl_codes.toml": _render(_header(f"{len(acl)} numeric aclError / aclnn codes", ["acl_error_codes.json", "aclnn_codes.json"]), acl),
        "torch_npu_codes.toml": _render(_header(f"{len(tnpu)} torch_npu ERR<SS><CCC> codes", ["torch_npu_error_codes.json"]), tnpu),
    }
    return files


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if a generated file differs from the one on disk")
    a = ap.parse_args()
    files = generate()
    stale = []
    for name, text in files.items():
        path = os.path.join(OUT, name)
        old = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if old != text:
            stale.append(name)
            if not a.check:
                os.makedirs(OUT, exist_ok=True)
                with open(path, "w", encoding="utf-8") as fh:
                    fh.write(text)
    if a.check:
        for s in stale:
            print(f"out of date: {s} (run python tools/diagnose_catalogue.py)")
        return 1 if stale else 0
    for name in files:
        print(f"{'wrote' if name in stale else 'unchanged'} {os.path.join(OUT, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
