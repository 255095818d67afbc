"""``torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")`` is one device choice: the
agnostic copy writes ``torch.device(DEVICE_TYPE)``, not ``torch.device(DEVICE_TYPE) if DEVICE_TYPE != "cpu"
else torch.device("cpu")`` (a reviewer's nit on latent-diffusion's scripts and dino's, in the held-out review)."""

from __future__ import annotations

from ascendify.config import Settings
from ascendify.fix.run import fix_source
from ascendify.scan.engine import analyze_source
from ascendify.scan.source import SourceFile


def fixed(text: str, target: str = "agnostic") -> str:
    s = Settings(target=target).validate()
    src = SourceFile(path="t.py", text=text)
    out, _applied, _rem, _unsafe, error = fix_source(src, analyze_source(src, "t.py", s), s, "t.py")
    assert error is None, error
    return out


def test_device_call_choice_becomes_one_device():
    out = fixed('import torch\ndevice = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")\n')
    assert out.endswith("device = torch.device(DEVICE_TYPE)\n"), out


def test_other_choices_keep_the_test():
    out = fixed('import torch\ndevice = torch.device("cuda:1") if torch.cuda.is_available() else torch.device("cpu")\n')
    assert 'DEVICE_TYPE != "cpu"' in out


def test_npu_target_is_unchanged():
    out = fixed('import torch\ndevice = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")\n', "npu")
    assert 'device = torch.device("npu") if torch.npu.is_available() else torch.device("cpu")' in out, out
