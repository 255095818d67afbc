#!/usr/bin/env python3
"""Generate the library summaries (src/ascendify/libsum/data/) from the public releases on PyPI.

    python tools/libsum.py --all                 # every library of data/sources.toml
    python tools/libsum.py --package timm        # one library (all its listed releases)
    python tools/libsum.py --all --offline       # only files already in the cache (sha256 checked)

For each release listed in ``src/ascendify/libsum/data/sources.toml`` it downloads the smallest
file of the release (wheel or sdist, through PyPI's simple JSON API, the index pip reads) into the
cache (``--cache``, default ``~/.cache/ascendify/libsum``), checks its sha256 against PyPI's (and
against the one ``index.json`` recorded, when regenerating), reads the Python sources of the
library's modules with ``ast`` only (nothing is installed or imported) and writes
``<package>.json.gz`` (one section per release) and ``index.json``.  The output is deterministic:
keys sorted, gzip without a timestamp.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile
import urllib.request
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

from ascendify.deps.parse import normalize as _norm  # noqa: E402
from ascendify.libsum.analyze import analyze  # noqa: E402

DATA = os.path.join(HERE, "..", "src", "ascendify", "libsum", "data")
SIMPLE = "https://pypi.org/simple/{}/"

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore


def release_file(package: str, version: str) -> dict:
    """{filename, url, sha256, size} of the smallest wheel/sdist of ``package==version`` on PyPI."""
    req = urllib.request.Request(SIMPLE.format(_norm(package)), headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        d = json.load(r)
    stem = _norm(package).replace("-", "_")
    cands = []
    for f in d["files"]:
        fn = f["filename"]
        low = fn.lower().replace("-", "_")
        if f.get("yanked"):
            continue
        if fn.endswith(".whl"):
            parts = fn[:-4].split("-")
            if len(parts) >= 2 and _norm(parts[0]) == _norm(package) and parts[1] == version:
                cands.append(f)
        elif fn.endswith((".tar.gz", ".zip")) and (low.startswith(f"{stem}_{version.replace('-', '_')}.") or fn.startswith(f"{package}-{version}.")):
            cands.append(f)
    if not cands:
        raise SystemExit(f"libsum: no wheel or sdist of {package}=={version} on PyPI")
    best = min(cands, key=lambda f: (f.get("size") or 0, f["filename"]))
    return {"file": best["filename"], "url": best["url"], "sha256": best["hashes"]["sha256"]}


def fetch(info: dict, cache: str, offline: bool) -> bytes:
    path = os.path.join(cache, info["file"])
    if os.path.exists(path):
        with open(path, "rb") as fh:
            data = fh.read()
    elif offline:
        raise SystemExit(f"libsum: {info['file']} is not in {cache} (run without --offline)")
    else:
        with urllib.request.urlopen(info["url"], timeout=300) as r:
            data = r.read()
        os.makedirs(cache, exist_ok=True)
        tmp = path + ".part"
        with open(tmp, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    got = hashlib.sha256(data).hexdigest()
    if got != info["sha256"]:
        raise SystemExit(f"libsum: sha256 of {path} is {got}, PyPI says {info['sha256']}: delete the file and rerun")
    return data


def sources_of(data: bytes, filename: str, modules: list) -> dict:
    """module name -> (path inside the library, text) for the .py files of ``modules``."""
    files = {}
    if filename.endswith(".whl") or filename.endswith(".zip"):
        z = zipfile.ZipFile(io.BytesIO(data))
        for n in z.namelist():
            if n.endswith(".py"):
                files[n] = z.read(n)
    else:
        t = tarfile.open(fileobj=io.BytesIO(data), mode="r:gz")
        for m in t.getmembers():
            if m.isfile() and m.name.endswith(".py"):
                files[m.name] = t.extractfile(m).read()
    out = {}
    for mod in modules:
        # the shallowest folder named like the module that holds an __init__.py
        inits = sorted((n for n in files if n.endswith(f"{mod}/__init__.py")), key=lambda n: n.count("/"))
        if not inits:
            continue
        prefix = inits[0][: -len(f"{mod}/__init__.py")]
        for n, raw in files.items():
            if n.startswith(prefix + mod + "/"):
                rel = n[len(prefix):]
                name = rel[:-3].replace("/", ".")
                if name.endswith(".__init__"):
                    name = name[: -len(".__init__")]
                if all(p.isidentifier() for p in name.split(".")):
                    out[name] = (rel, raw.decode("utf-8", "replace"))
    return out


def _cuda_only() -> list:
    with open(os.path.join(HERE, "..", "src", "ascendify", "rules", "data", "cuda_only.toml"), "rb") as fh:
        return tomllib.load(fh)["lib"]


TRANSFER = ("load torch_npu and torch_npu.contrib.transfer_to_npu (maps torch.cuda.*, .cuda() and \"cuda\" devices to the NPU), "
            "or pass device=\"npu\" / torch.device(\"npu\") where the library takes a device",
            "https://github.com/Ascend/pytorch/blob/9e73e708ab9350d203475609f36f8a43f6a0c2ab/torch_npu/contrib/transfer_to_npu.py")
HCCL = ("use the HCCL backend (backend=\"hccl\") on Ascend",
        "https://www.hiascend.com/document/detail/zh/Pytorch/600/ptmoddevg/trainingmigrguide/PT_LMTMOG_0022.html (HCCL backend); rules/data/dst.toml DST001")


def advice_for(qual: str, work: list, lib: dict, table: list, version: str = "") -> tuple:
    for a in lib.get("advice", ()):
        if a.get("versions") and version not in a["versions"]:
            continue
        if qual == a["match"] or qual.startswith(a["match"] + "."):
            return a["text"], a["source"]
    for what, *_rest in work:
        root = what.split(".")[0].split("(")[0]
        for entry in table:
            if any(what == i or what.startswith(i + ".") for i in entry["imports"]) or root in entry["imports"]:
                src = entry["source"] if entry.get("verified", True) else f"unverified ({entry['source']})"
                return entry["alternative"], src
        if "nccl" in what:
            return HCCL
    return TRANSFER


def summarise(lib: dict, version: str, cache: str, offline: bool, known: dict) -> dict:
    info = known.get(version) if offline else None
    if info is None:
        info = release_file(lib["package"], version)
        old = known.get(version)
        if old and old["sha256"] != info["sha256"]:
            raise SystemExit(f"libsum: {lib['package']}=={version} on PyPI has sha256 {info['sha256']}, index.json recorded {old['sha256']}")
    data = fetch(info, cache, offline)
    src = sources_of(data, info["file"], lib["modules"])
    if not src:
        raise SystemExit(f"libsum: {info['file']} holds none of the modules {lib['modules']}")
    res = analyze(src, tuple(lib.get("roots", ())))
    table = _cuda_only()
    advice: list = []
    for q, e in res["entries"].items():
        if "work" in e and lib.get("npu_aware"):
            e["npu_aware"] = True  # the library dispatches to the NPU itself (sources.toml says where)
        if "work" in e:
            a = list(advice_for(q, e["work"], lib, table, version))
            if a not in advice:
                advice.append(a)
            e["advice"] = advice.index(a)
    # keep the bases of classes only where a method reached through them has an entry
    has = {q.rsplit(".", 1)[0] for q, e in res["entries"].items() if e["kind"] == "method"}
    bases = res["bases"]
    reach: dict = {}

    def reaches(c: str, depth: int = 0) -> bool:
        if c in reach:
            return reach[c]
        reach[c] = False
        ok = c in has or (depth < 20 and any(reaches(b, depth + 1) for b in bases.get(c, ())))
        reach[c] = ok
        return ok

    kept = {c: b for c, b in bases.items() if reaches(c)}
    owners = has | set(kept)  # re-exported names are kept only where they lead to an entry
    res["aliases"] = {a: c for a, c in res["aliases"].items() if c in res["entries"] or c in owners}
    section = {"npu_aware": lib.get("npu_aware", ""), "file": info["file"], "url": info["url"], "sha256": info["sha256"], "modules": len(src),
               "entries": res["entries"], "aliases": res["aliases"], "bases": kept, "advice": advice}
    return section


def write_gz(path: str, obj) -> None:
    raw = json.dumps(obj, sort_keys=True, separators=(",", ":")).encode("utf-8")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9, filename="") as g:
        g.write(raw)
    tmp = path + ".tmp"
    with open(tmp, "wb") as fh:
        fh.write(buf.getvalue())
    os.replace(tmp, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--all", action="store_true", help="every library of sources.toml")
    ap.add_argument("--package", action="append", default=[], help="one library (PyPI name); repeatable")
    ap.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache", "ascendify", "libsum"))
    ap.add_argument("--offline", action="store_true", help="use the URLs/sha256 of index.json and the cached files only")
    ap.add_argument("--out", default=DATA, help="output folder (default: the package data)")
    a = ap.parse_args(argv)
    with open(os.path.join(DATA, "sources.toml"), "rb") as fh:
        libs = tomllib.load(fh)["lib"]
    if not a.all and not a.package:
        ap.error("give --all or --package NAME")
    chosen = libs if a.all else [l for l in libs if l["package"] in a.package]
    missing = set(a.package) - {l["package"] for l in libs}
    if missing:
        ap.error(f"not in sources.toml: {', '.join(sorted(missing))}")
    index_path = os.path.join(a.out, "index.json")
    index = {}
    if os.path.exists(index_path):
        with open(index_path, encoding="utf-8") as fh:
            index = json.load(fh)
    index.pop("_about", None)
    for lib in chosen:
        known = {v: {k: x for k, x in info.items() if k in ("file", "url", "sha256")}
                 for v, info in index.get(lib["package"], {}).get("versions", {}).items()}
        out = {"package": lib["package"], "modules": lib["modules"], "versions": {}}
        for v in lib["versions"]:
            sec = summarise(lib, v, a.cache, a.offline, known)
            out["versions"][v] = sec
            print(f"{lib['package']}=={v}: {sec['modules']} modules, {len(sec['entries'])} entries, "
                  f"{sum(1 for e in sec['entries'].values() if e.get('npu_aware'))} npu-aware", flush=True)
        gz = os.path.join(a.out, f"{lib['package']}.json.gz")
        write_gz(gz, out)
        with open(gz, "rb") as fh:
            data_sha = hashlib.sha256(fh.read()).hexdigest()
        index[lib["package"]] = {"modules": lib["modules"], "data": f"{lib['package']}.json.gz", "data_sha256": data_sha, "versions": {
            v: {"file": s["file"], "url": s["url"], "sha256": s["sha256"], "entries": len(s["entries"])}
            for v, s in out["versions"].items()}}
        write_index(index_path, index, libs)  # after each library: an interrupted run keeps what it made
    write_index(index_path, index, libs)
    return 0


def write_index(path: str, index: dict, libs: list) -> None:
    out = {k: index[k] for k in sorted(index) if any(k == l["package"] for l in libs)}
    out["_about"] = "Library summaries made by tools/libsum.py --all from the PyPI releases below (file, url, sha256 of the file read). See README.md."
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
