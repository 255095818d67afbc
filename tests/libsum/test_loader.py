"""The loader: lazy per library, version choice, project pins; and EXT017 with a pinned release."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from ascendify import libsum

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_index_records_release_files():
    idx = libsum.index()
    t = idx["timm"]["versions"]["0.4.12"]
    # the smallest file of the release: here the sdist (PyPI's sha256 of it)
    assert t["file"] == "timm-0.4.12.tar.gz"
    assert t["sha256"] == "b14be70dbd4528b5ca8657cf5bc2672c7918c3d9ebfbffe80f4785b54e884b1e"
    assert t["url"].startswith("https://files.pythonhosted.org/") and t["url"].endswith("/timm-0.4.12.tar.gz")
    assert set(idx) >= {"timm", "transformers", "diffusers", "peft", "accelerate", "bitsandbytes", "deepspeed", "xformers",
                        "flash-attn", "torchvision", "torchaudio", "torchmetrics", "lightning", "pytorch-lightning", "mmcv",
                        "mmengine", "ultralytics", "fairscale", "open-clip-torch"}


def test_only_the_imported_library_is_read():
    code = ("from ascendify import libsum\n"
            "libsum.index()\n"
            "assert libsum.LOADED == [], libsum.LOADED\n"
            "s = libsum.for_module('timm.utils', {})\n"
            "assert s.version and libsum.LOADED == ['timm'], libsum.LOADED\n"
            "assert libsum.for_module('numpy', {}) is None and libsum.LOADED == ['timm']\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_version_choice():
    assert libsum.choose("timm", "0.4.12") == ("0.4.12", "timm 0.4.12, the release the project pins")
    v, how = libsum.choose("timm", "0.5.4")
    assert v == "0.4.12" and "nearest summarised release below the pinned 0.5.4" in how
    v, how = libsum.choose("timm", None)
    assert v == "1.0.31" and "newest release summarised" in how
    v, how = libsum.choose("timm", "0.3.2")
    assert v == "0.4.12" and "the oldest release summarised (the pinned 0.3.2 is older than any summarised)" in how


def test_reexport_and_method_lookup():
    s = libsum.for_module("timm", {"timm": "0.4.12"})
    q, e = s.entry("timm.utils.NativeScaler")
    assert q == "timm.utils.cuda.NativeScaler" and e["kind"] == "class"
    assert e["work"][0][:3] == ["torch.cuda.amp.GradScaler", "timm/utils/cuda.py", 40]
    assert s.method("timm.utils.ApexScaler", "__call__")[0] == "timm.utils.cuda.ApexScaler.__call__"
    assert s.entry("timm.create_model") is None


def test_project_pins_from_requirements(tmp_path):
    (tmp_path / "requirements.txt").write_text("timm==0.4.12\ntorch>=1.8\n")
    sub = tmp_path / "pkg"
    sub.mkdir()
    (sub / "train.py").write_text("")
    pins = libsum.project_pins(str(sub / "train.py"))
    assert pins.get("timm") == "0.4.12" and "torch" not in pins


def _scan(tmp_path, req: str, body: str) -> list:
    from ascendify.config import Settings
    from ascendify.scan.engine import discover, scan_files

    proj = tmp_path / "proj"
    proj.mkdir()
    if req:
        (proj / "requirements.txt").write_text(req)
    (proj / "main.py").write_text(body)
    s = Settings(select=["EXT017"]).validate()
    res = scan_files(discover([str(proj)], s, lambda p, m: None), s, None, jobs=1)
    return [f for f in res.findings if f.code == "EXT017"]


BODY = """\
from timm.utils import NativeScaler, ApexScaler
from timm.data import create_loader

scaler = NativeScaler()
apex_scaler = ApexScaler()
apex_scaler(loss, optimizer)
loader = create_loader(ds, (3, 224, 224), 32, use_prefetcher=True)
plain = create_loader(ds, (3, 224, 224), 32, use_prefetcher=False)
default = create_loader(ds, (3, 224, 224), 32)
"""


def test_rule_uses_the_pinned_release(tmp_path):
    got = _scan(tmp_path, "timm==0.4.12\n", BODY)
    lines = sorted(f.line for f in got)
    assert lines == [4, 6, 7, 9]  # use_prefetcher defaults to True in create_loader
    msg = {f.line: f.message for f in got}
    assert "torch.cuda.amp.GradScaler at timm/utils/cuda.py:40" in msg[4]
    assert "timm 0.4.12, the release the project pins" in msg[4]
    assert "apex.amp.scale_loss" in msg[6]  # instance(...) -> ApexScaler.__call__
    assert ".cuda()" in msg[7] and "timm/data/loader.py" in msg[7]


def test_rule_newest_release_without_pin(tmp_path):
    got = _scan(tmp_path, "", BODY)
    msg = {f.line: f.message for f in got}
    # 1.0.31: NativeScaler's CUDA default only; its loader handles the NPU
    assert sorted(msg) == [4, 6]
    assert 'default device="cuda"' in msg[4] and "the newest release summarised" in msg[4]
    assert 7 not in msg


def test_a_changed_pin_is_not_answered_from_the_scan_cache(tmp_path):
    """The cache key covers the project's pins: EXT017's findings depend on them (a cached scan gave the
    0.4.12 findings after the pin moved to 1.0.31)."""
    from ascendify.config import Settings
    from ascendify.scan.engine import discover, scan_files

    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "main.py").write_text(BODY)
    s = Settings(select=["EXT017"]).validate()

    def lines(pin: str) -> tuple:
        (proj / "requirements.txt").write_text(pin)
        libsum._PIN_FILES_CACHE.clear()  # a new process, as each `ascendify scan` is
        res = scan_files(discover([str(proj)], s, lambda p, m: None), s, str(tmp_path / "cache"), jobs=1)
        return sorted(f.line for f in res.findings if f.code == "EXT017"), res.cached

    assert lines("timm==0.4.12\n") == ([4, 6, 7, 9], 0)
    assert lines("timm==1.0.31\n") == ([4, 6], 0)
    assert lines("timm==1.0.31\n") == ([4, 6], 1)  # unchanged pins: a cache hit


def test_class_through_a_local_name_and_instance_method(tmp_path):
    body = """\
import torch
from timm.utils import ApexScaler
from timm.data.loader import PrefetchLoader

if use_apex:
    scaler_cls = ApexScaler
else:
    scaler_cls = torch.cuda.amp.GradScaler
scaler = scaler_cls()
scaler(loss, optimizer)
state = scaler.state_dict()
other = make_scaler()
other(loss, optimizer)
"""
    got = _scan(tmp_path, "timm==0.4.12\n", body)
    msg = {f.line: f.message for f in got}
    # line 11: ApexScaler.state_dict calls apex only under `if 'state_dict' in amp.__dict__` (library state)
    assert sorted(msg) == [10]
    assert "apex.amp.scale_loss" in msg[10] and "`timm.utils.cuda.ApexScaler.__call__`" in msg[10]


def test_noop_calls_and_pipeline_methods(tmp_path):
    body = """\
from diffusers import StableDiffusionPipelineSafe
from diffusers.training_utils import set_seed

set_seed(0)
pipe = StableDiffusionPipelineSafe.from_pretrained("x")
pipe.enable_sequential_cpu_offload()
pipe.enable_attention_slicing()
"""
    got = _scan(tmp_path, "diffusers==0.16.0\n", body)
    # set_seed only calls torch.cuda.manual_seed_all (a no-op without CUDA): not reported
    assert [(f.line, 'device("cuda")' in f.message) for f in got] == [(6, True)]
    assert "diffusers 0.16.0, the release the project pins" in got[0].message
