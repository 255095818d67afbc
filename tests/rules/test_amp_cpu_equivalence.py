"""AMP001/AMP002 agnostic rewrites keep a CPU-only run in fp32, loss for loss, like the CUDA code did there."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from .helpers import fixed_text

pytestmark = pytest.mark.slow  # trains two tiny models in subprocesses

CUDA_SCRIPT = '''\
import torch
import torch.nn as nn
from torch.cuda.amp import autocast, GradScaler

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
scaler = GradScaler()
scaler2 = torch.amp.GradScaler()
x = torch.randn(64, 16)
y = torch.randn(64, 1)
losses = []
for step in range(8):
    opt.zero_grad()
    with autocast():
        with torch.autocast(device_type="cuda", dtype=torch.float16):
            with torch.cuda.amp.autocast(enabled=True):
                loss = nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    losses.append(loss.item())
print(repr(losses))
'''

FP32_REFERENCE = '''\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(64, 16)
y = torch.randn(64, 1)
losses = []
for step in range(8):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    losses.append(loss.item())
print(repr(losses))
'''


def _run(path: str) -> str:
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([sys.executable, path], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_agnostic_amp_rewrite_trains_like_fp32_on_cpu(tmp_path):
    src = tmp_path / "train.py"
    src.write_text(CUDA_SCRIPT, encoding="utf-8")
    text = CUDA_SCRIPT
    for code in ("AMP001", "AMP002"):
        src.write_text(text, encoding="utf-8")
        text = fixed_text(str(src), code, "agnostic")
    body = text.splitlines()  # the prelude names "cuda" in its accelerator test: look past it
    assert "torch.cuda.amp" not in text and not any('"cuda"' in line for line in body if not line.startswith("DEVICE_TYPE ="))
    assert text.count('enabled=DEVICE_TYPE != "cpu"') == 5
    fixed = tmp_path / "fixed.py"
    fixed.write_text(text, encoding="utf-8")
    ref = tmp_path / "ref.py"
    ref.write_text(FP32_REFERENCE, encoding="utf-8")
    got, want = _run(str(fixed)), _run(str(ref))
    assert got == want
    assert len(eval(got)) == 8
