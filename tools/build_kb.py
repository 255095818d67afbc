#!/usr/bin/env python3
"""Regenerate the package's operator knowledge base (src/ascendify/kb/data).

Usage::

    python tools/build_kb.py                       # from ../shared/reference/data
    python tools/build_kb.py --shared /path/to/reference
    python tools/build_kb.py --wheel torch_npu-2.15.0-….whl --torch-wheel torch-2.15.0-….whl
    python tools/build_kb.py --wheel torch_npu-2.13.0-….whl --torch-wheel installed
    python tools/build_kb.py --check               # exit 1 if the data would change

Inputs are public files only (torch-npu / torch wheels from PyPI, op-plugin and
Ascend/pytorch docs from their GitHub mirrors, mstt advisor rules); see
reference/data/README.md.  Each output table records package, version, file,
commit or sha256 and the upstream licence.  Build-time needs PyYAML.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import io
import json
import os
import re
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import kb_aicpu  # noqa: E402
import kb_ops  # noqa: E402
import kb_opplugin  # noqa: E402
import kb_torch  # noqa: E402

DEFAULT_OUT = os.path.join(ROOT, "src", "ascendify", "kb", "data")
TORCH_NPU_LICENCE = "BSD-3-Clause"
TORCH_LICENCE = "BSD-3-Clause"


def default_shared() -> str:
    for cand in (os.path.join(ROOT, "..", "shared", "reference"), "/work/shared/reference"):
        if os.path.isdir(os.path.join(cand, "data")):
            return os.path.abspath(cand)
    return os.path.abspath(os.path.join(ROOT, "..", "shared", "reference"))


def dumps(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False, sort_keys=False, separators=(",", ":")).encode("utf-8")


def gz(data: bytes) -> bytes:
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as fh:
        fh.write(data)
    return buf.getvalue()


class Writer:
    """Collects output files; writes them (atomically) or compares them (--check)."""

    def __init__(self, out: str, check: bool):
        self.out, self.check, self.changed, self.written = out, check, [], []

    def put(self, rel: str, data: bytes) -> None:
        path = os.path.join(self.out, rel)
        old = None
        if os.path.exists(path):
            with open(path, "rb") as fh:
                old = fh.read()
        if rel.endswith(".gz") and old is not None:
            try:
                same = gzip.decompress(old) == gzip.decompress(data)
            except OSError:
                same = False
        else:
            same = old == data
        if not same:
            self.changed.append(rel)
        self.written.append(rel)
        if not self.check and not same:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = path + ".tmp"
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)


def wheel_readme_rows(data_dir: str) -> "dict[str, dict]":
    """torch_npu version → {file, git_version, sha256_prefix} from data/README.md §1."""
    rows = {}
    with open(os.path.join(data_dir, "README.md"), encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r"\|\s*(\d+\.\d+\.\d+(?:\.post\d+)?)\s*\|\s*(torch_npu-\S+\.whl)\s*\|\s*([0-9a-f]{40})\s*\|\s*([0-9a-f]+)", line)
            if m:
                rows[m.group(1)] = {"file": m.group(2), "git_version": m.group(3), "sha256_prefix": m.group(4)}
    return rows


def version_key(v: str) -> tuple:
    m = re.match(r"(\d+)\.(\d+)\.(\d+)(?:\.post(\d+))?", v)
    return tuple(int(x or -1) for x in m.groups()) if m else (0, 0, 0, 0)


def build_releases(shared: str, w: Writer, wheels: "list[str]", torch_wheels: "list[str]",
                   args_out: str = DEFAULT_OUT) -> "list[dict]":
    """One ``ops/<torch_npu>.json.gz`` per release.

    Primary classification: :func:`kb_ops.classify` over the wheel's NPU yaml
    and the vendored torch dispatch entries (``tools/kb_inputs/torch``).  The
    research CSV of the same release is the second source: where the two
    disagree both classes are kept (``disagreements`` in the table).  Without
    torch entries the CSV alone is used.
    """
    data = os.path.join(shared, "data")
    readme = wheel_readme_rows(data)
    index = []
    for d in sorted(glob.glob(os.path.join(data, "torch_npu_wheels", "*")), key=lambda p: version_key(os.path.basename(p))):
        ver = os.path.basename(d)
        with open(os.path.join(d, "npu_native_functions_by_codegen.yaml"), encoding="utf-8") as fh:
            npu = kb_ops.parse_npu_yaml(fh.read())
        csvs = glob.glob(os.path.join(data, "derived", f"aten_op_classification_torch*_torch_npu{ver}.csv"))
        csv_rows = kb_ops.read_classification_csv(csvs[0]) if len(csvs) == 1 else None
        m = re.search(r"_torch([0-9.]+)_torch_npu", os.path.basename(csvs[0])) if csvs else None
        torch_ver = m.group(1) if m else ".".join(ver.split(".")[:3])
        tdoc = kb_torch.load(torch_ver)
        info = readme.get(ver, {})
        prov = [{"package": "torch-npu", "version": ver, "file": f"{info.get('file', '?')}:{kb_ops.NPU_YAML_IN_WHEEL}",
                 "commit": info.get("git_version", ""), "sha256_prefix": info.get("sha256_prefix", ""),
                 "repository": "Ascend/pytorch", "index": "PyPI", "licence": TORCH_NPU_LICENCE,
                 "copy": f"reference/data/torch_npu_wheels/{ver}/npu_native_functions_by_codegen.yaml"}]
        if tdoc:
            rows = kb_ops.classify(tdoc["entries"], npu["aten"], npu["sparse"])
            tp = dict(tdoc["provenance"])
            tp["file"] = tp.get("file", "") + ":" + tp.pop("member", kb_ops.TORCH_YAML_IN_WHEEL)
            prov.append(tp)
            rows_from = "tools/kb_ops.py classify() over both yamls"
        elif csv_rows is not None:
            rows = csv_rows
            rows_from = "research CSV"
        else:
            print(f"warning: no torch dispatch data or CSV for torch_npu {ver}; skipped", file=sys.stderr)
            continue
        disagreements = {}
        if csv_rows is not None:
            prov.append({"package": "research table", "file": "reference/data/derived/" + os.path.basename(csvs[0]),
                         "note": "derived by the op-support research from the same two yamls; kept as second source",
                         "licence": "derived from BSD-3-Clause data"})
            mine = {r[0]: r for r in rows}
            for r in csv_rows:
                own = mine.get(r[0])
                if own is None:
                    disagreements[r[0]] = {"research_csv": r[1], "primary": "absent"}
                elif own[1] != r[1]:
                    disagreements[r[0]] = {"research_csv": r[1], "primary": own[1]}
        entry = _emit_release(w, ver, torch_ver, rows, npu, prov, rows_from, d, disagreements,
                              opplugin=kb_opplugin.compare(data, ver, npu["aten"], "master"), opplugin_commit=
                              readme_branches(data).get("master", ""))
        index.append(entry)
    # Extra releases straight from wheels (one command per new release); with the default output they are
    # vendored in tools/kb_inputs/torch_npu/ so later plain rebuilds keep them.
    added = {}
    for p in sorted(glob.glob(os.path.join(HERE, "kb_inputs", "torch_npu", "*.json.gz"))):
        with gzip.open(p, "rb") as fh:
            d = json.loads(fh.read().decode("utf-8"))
        added[d["version"]] = d
    for i, wpath in enumerate(wheels):
        info = kb_ops.read_wheel(wpath)
        npu = kb_ops.parse_npu_yaml(info["yaml"])
        tsrc = torch_wheels[i] if i < len(torch_wheels) else (torch_wheels[-1] if torch_wheels else None)
        tdoc = None
        if tsrc:
            tdoc = kb_torch.extract(tsrc)
            if not w.check and tsrc.endswith(".whl") and os.path.abspath(args_out) == os.path.abspath(DEFAULT_OUT):
                kb_torch.save(tdoc)  # vendor the torch side so the next plain rebuild reproduces this release
        elif info["torch"]:
            tdoc = kb_torch.load(info["torch"])
        if not tdoc:
            raise SystemExit(f"{wpath}: pass --torch-wheel (the torch {info['torch'] or '?'} wheel, or 'installed')")
        if info["torch"] and tdoc["torch"] and info["torch"] != tdoc["torch"]:
            print(f"warning: {info['file']} pins torch {info['torch']} but the torch data is {tdoc['torch']}", file=sys.stderr)
        entry = {"version": info["version"], "torch": tdoc["torch"], "npu": npu,
                 "provenance": {"package": "torch-npu", "version": info["version"],
                                "file": f"{info['file']}:{kb_ops.NPU_YAML_IN_WHEEL}", "commit": info["git_version"],
                                "sha256": info["sha256"], "repository": "Ascend/pytorch", "index": "PyPI",
                                "licence": TORCH_NPU_LICENCE},
                 "_tdoc": tdoc}
        added[info["version"]] = entry
        if not w.check and os.path.abspath(args_out) == os.path.abspath(DEFAULT_OUT):
            os.makedirs(os.path.join(HERE, "kb_inputs", "torch_npu"), exist_ok=True)
            keep = {k: v for k, v in entry.items() if k != "_tdoc"}
            with open(os.path.join(HERE, "kb_inputs", "torch_npu", f"{info['version']}.json.gz"), "wb") as fh:
                fh.write(gz(dumps(keep)))
    for ver, entry in added.items():
        if any(e["torch_npu"] == ver for e in index) and "_tdoc" not in entry:
            continue  # the reference data has this release
        tdoc = entry.get("_tdoc") or kb_torch.load(entry["torch"])
        if not tdoc:
            print(f"warning: no torch {entry['torch']} dispatch data for added release {ver}; skipped", file=sys.stderr)
            continue
        rows = kb_ops.classify(tdoc["entries"], entry["npu"]["aten"], entry["npu"].get("sparse", {}))
        tp = dict(tdoc["provenance"])
        tp["file"] = tp.get("file", "") + ":" + tp.pop("member", kb_ops.TORCH_YAML_IN_WHEEL)
        index = [e for e in index if e["torch_npu"] != ver]
        index.append(_emit_release(w, ver, tdoc["torch"], rows, entry["npu"], [entry["provenance"], tp],
                                   "tools/kb_ops.py classify() over both yamls", None, {}))
    index.sort(key=lambda e: version_key(e["torch_npu"]))
    return index


def readme_branches(data_dir: str) -> "dict[str, str]":
    """op-plugin branch → commit from data/README.md §2."""
    out = {}
    with open(os.path.join(data_dir, "README.md"), encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r"\|\s*([0-9a-z.]+)\s*\|\s*([0-9a-f]{40})\s*\|\s*\d{4}-", line)
            if m:
                out[m.group(1)] = m.group(2)
    return out


def _emit_release(w: Writer, ver: str, torch_ver: str, rows, npu, prov, rows_from: str, wheel_dir,
                  disagreements: dict, opplugin: "dict | None" = None, opplugin_commit: str = "") -> dict:
    extra = {"disagreements": disagreements}
    if opplugin:
        opplugin = dict(opplugin)
        opplugin["source"] = {"package": "op-plugin", "repository": "Ascend/op-plugin (GitHub mirror)",
                              "file": f"op_plugin/config/op_plugin_functions.yaml (branch {opplugin['branch']})",
                              "commit": opplugin_commit, "licence": "BSD-3-Clause",
                              "note": "branch tip expanded for " + opplugin["torch_line"] + "; the wheel is primary"}
        extra["op_plugin"] = opplugin
    if wheel_dir:
        p = os.path.join(wheel_dir, "cpu_fallback_messages_in_libtorch_npu.txt")
        if os.path.exists(p):
            with open(p, encoding="utf-8", errors="replace") as fh:
                extra["hardcoded_fallback_messages"] = [l.strip() for l in fh if "aten::" in l]
    doc = kb_ops.release_table(torch_npu=ver, torch=torch_ver, rows=rows, npu=npu, provenance=prov,
                               rows_from=rows_from, extra=extra)
    rel = f"ops/{ver}.json.gz"
    w.put(rel, gz(dumps(doc)))
    return {"torch_npu": ver, "torch": torch_ver, "file": rel, "class_counts": doc["class_counts"],
            "aten_overloads": len(rows), "npu_registered_aten_overloads": doc["npu_registered_aten_overloads"],
            "custom_npu_ops": doc["custom_npu_ops"], "impl_split": doc["impl_split"],
            "commit": prov[0].get("commit", ""), "classification_from": rows_from,
            "disagreements_with_research_csv": len(disagreements),
            "differences_with_op_plugin_master": len((opplugin or {}).get("differences", {}))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=None, help="reference folder (default ../shared/reference)")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--wheel", action="append", default=[], help="torch-npu wheel to add as a release")
    ap.add_argument("--torch-wheel", action="append", default=[],
                    help="matching torch wheel (or 'installed' or a native_functions.yaml path)")
    ap.add_argument("--docs", default=os.path.join(ROOT, "docs", "ops-and-probe.md"),
                    help="markdown file whose generated-counts block is refreshed")
    ap.add_argument("--check", action="store_true", help="do not write; exit 1 if anything would change")
    args = ap.parse_args(argv)
    shared = os.path.abspath(args.shared or default_shared())
    data = os.path.join(shared, "data")
    if not os.path.isdir(data):
        print(f"error: {data} not found; pass --shared PATH_TO/reference", file=sys.stderr)
        return 2
    w = Writer(args.out, args.check)
    wheel_dirs = {os.path.basename(p): p for p in glob.glob(os.path.join(data, "torch_npu_wheels", "*"))}
    aicpu = kb_aicpu.build_aicpu(data, wheel_dirs)
    aicpu["rules"].extend(kb_aicpu.curated_rules(os.path.join(args.out, "curated.toml")))
    w.put("aicpu_rules.json", json.dumps(aicpu, ensure_ascii=False, indent=1).encode("utf-8") + b"\n")
    index = build_releases(shared, w, args.wheel, args.torch_wheel, args.out)
    extra_steps = []
    import kb_apis
    extra_steps.append(kb_apis)
    summary = {"schema": 1, "releases": index}
    for step in extra_steps:
        summary.update(step.build(shared, w, index))
    w.put("index.json", json.dumps(summary, ensure_ascii=False, indent=1).encode("utf-8") + b"\n")
    # The doctor helper's version tables.
    vpath = os.path.join(HERE, "kb_versions.py")
    if os.path.exists(vpath) and not args.check:
        import importlib.util
        spec = importlib.util.spec_from_file_location("kb_versions", vpath)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.build(shared, args.out)
    if os.path.exists(os.path.join(HERE, "kb_docs.py")):
        import kb_docs
        kb_docs.refresh(args.docs, summary, w)
    if args.check:
        if w.changed:
            print("out of date: " + ", ".join(w.changed))
            return 1
        print("KB data up to date")
        return 0
    print(f"wrote {len(w.changed)} changed of {len(w.written)} files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
