"""AMP007 (float16 autocast without a GradScaler) looked for the word GradScaler in the file only: ConvNeXt's
engine.py gets its scaler as a parameter (``loss_scaler``, timm's NativeScaler-style class from utils.py)
and calls ``loss_scaler(loss, optimizer, ...)`` — reported wrongly (found in the held-out review)."""

from __future__ import annotations

import textwrap

from ascendify.config import Settings
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile

HEAD = "import torch\n"


def amp007(body: str) -> list:
    s = Settings(select=["AMP007"]).validate()
    src = SourceFile(path="engine.py", text=HEAD + textwrap.dedent(body).lstrip("\n"))
    return [f.line for f in analyze_source(src, "engine.py", s)]


def test_a_scaler_passed_in_and_called_is_a_scaler():
    assert amp007("""
        def train_one_epoch(model, data, optimizer, loss_scaler, use_amp=True):
            for x, y in data:
                if use_amp:
                    with torch.cuda.amp.autocast():
                        loss = model(x, y)
                    loss_scaler(loss, optimizer, parameters=model.parameters())
                else:
                    loss = model(x, y)
                    loss.backward()
                    optimizer.step()
    """) == []


def test_scaler_scale_call_is_a_scaler():
    assert amp007("""
        def step(model, x, opt, scaler):
            with torch.cuda.amp.autocast():
                loss = model(x)
            scaler.scale(loss).backward()
    """) == []


def test_no_scaler_at_all_is_reported():
    assert amp007("""
        def step(model, x, opt):
            with torch.cuda.amp.autocast():
                loss = model(x)
            loss.backward()
            opt.step()
    """) == [3]
