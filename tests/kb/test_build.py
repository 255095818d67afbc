"""tools/build_kb.py: package data up to date, one-command release from a wheel, provenance, size."""

from __future__ import annotations

import glob
import gzip
import json
import os
import subprocess
import sys
import zipfile

import pytest

from ascendify.kb import DATA_DIR
from ascendify.kb import ops as kbops

from .conftest import ROOT

BUILD = os.path.join(ROOT, "tools", "build_kb.py")


def test_package_data_is_up_to_date(full_reference):
    r = subprocess.run([sys.executable, BUILD, "--shared", full_reference, "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_table_has_provenance_and_licence():
    for rel in kbops.releases():
        t = kbops.load_release(rel)
        prov = t.meta["provenance"]
        npu = next(p for p in prov if p["package"] == "torch-npu")
        tor = next(p for p in prov if p["package"] == "torch")
        assert npu["version"] == rel and len(npu["commit"]) == 40 and npu["licence"] == "BSD-3-Clause"
        assert npu["sha256_prefix"] and npu["file"].endswith("npu_native_functions_by_codegen.yaml")
        assert tor["version"] == t.torch and len(tor["sha256"]) == 64 and tor["licence"] == "BSD-3-Clause"
    aicpu = json.load(open(os.path.join(DATA_DIR, "aicpu_rules.json"), encoding="utf-8"))
    assert aicpu["sources"]["mstt"]["licence"] == "Apache-2.0" and len(aicpu["sources"]["mstt"]["commit"]) == 40


def test_package_data_is_small():
    total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(DATA_DIR, "**", "*"), recursive=True)
                if os.path.isfile(p))
    assert total < 3 * 1024 * 1024


def _fake_wheel(path, reference):
    # a torch-npu wheel assembled from the public 2.13.0 yaml, renamed 2.13.9 (a release the KB lacks)
    with open(os.path.join(reference, "data", "torch_npu_wheels", "2.13.0", "npu_native_functions_by_codegen.yaml"),
              "rb") as fh:
        y = fh.read()
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml", y)
        zf.writestr("torch_npu/version.py", "__version__ = '2.13.9'\ngit_version = '" + "a" * 40 + "'\n")
        zf.writestr("torch_npu-2.13.9.dist-info/METADATA", "Name: torch-npu\nVersion: 2.13.9\nRequires-Dist: torch==2.13.0\n")


def test_add_release_from_wheel_in_one_command(full_reference, tmp_path):
    import torch
    if torch.__version__.split("+")[0] != "2.13.0":
        pytest.skip("needs torch 2.13.0 installed (its native_functions.yaml is the torch side)")
    whl = tmp_path / "torch_npu-2.13.9-cp311-cp311-manylinux_2_28_x86_64.whl"
    _fake_wheel(str(whl), full_reference)
    out = tmp_path / "data"
    out.mkdir()
    # start from a copy of the shipped data so only the new release differs
    for p in glob.glob(os.path.join(DATA_DIR, "*")):
        if os.path.isfile(p):
            (out / os.path.basename(p)).write_bytes(open(p, "rb").read())
    env = dict(os.environ)
    r = subprocess.run([sys.executable, BUILD, "--shared", full_reference, "--out", str(out), "--wheel", str(whl),
                        "--torch-wheel", "installed", "--docs", str(tmp_path / "none.md")],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    idx = json.load(open(out / "index.json", encoding="utf-8"))
    assert [e["torch_npu"] for e in idx["releases"]][-2:] == ["2.13.9", "2.14.0"]
    with gzip.open(out / "ops" / "2.13.9.json.gz") as fh:
        doc = json.loads(fh.read())
    ref = kbops.load_release("2.13.0")
    classes = doc["classes"]
    same = sum(1 for k, v in doc["ops"].items() if ref.ops.get(k, ("",))[0] == classes[v[0]])
    assert same == len(ref.ops)  # same yaml + same torch → the same classification as the shipped 2.13.0 table
    prov = doc["provenance"][0]
    assert prov["version"] == "2.13.9" and len(prov["sha256"]) == 64 and prov["commit"] == "a" * 40
    # the tools' vendored torch input must not have been rewritten with a different source
    assert os.path.exists(os.path.join(ROOT, "tools", "kb_inputs", "torch", "2.13.0.json.gz"))
