"""Faults a user hits: writes that fail, interrupted runs (issue 22)."""

from __future__ import annotations

import os

import pytest

from tests.cli_util import run_cli

CUDA_SRC = 'import torch\nx = torch.zeros(3).cuda()\ny = x.to("cuda")\n'


def _deny(monkeypatch, module, name="atomic_write"):
    def denied(path, *a, **k):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(module, name, denied)


def test_fix_write_unwritable_file_is_not_counted_as_fixed(tmp_path, monkeypatch):
    import ascendify.fix.run as fixrun

    p = tmp_path / "a.py"
    p.write_text(CUDA_SRC)
    _deny(monkeypatch, fixrun)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", str(p))
    assert p.read_text() == CUDA_SRC
    assert r.code == 2, r.err
    assert "cannot write (Permission denied)" in r.err
    assert "fixed 0 finding(s) in 0 file(s); 2 remaining" in r.err, r.err


def test_fix_write_unwritable_json_counts(tmp_path, monkeypatch):
    import json

    import ascendify.fix.run as fixrun

    p = tmp_path / "a.py"
    p.write_text(CUDA_SRC)
    _deny(monkeypatch, fixrun)
    r = run_cli("fix", "--write", "--no-cache", "--jobs", "1", "--format", "json", str(p))
    assert r.code == 2
    doc = json.loads(r.out)
    assert doc["changes"] == []
    assert len(doc["remaining"]) == 2
    assert doc["errors"] and "cannot write" in doc["errors"][0]["error"]


def _all_help() -> dict:
    from ascendify.cli import LAZY_COMMANDS

    return {name: run_cli(name, "--help").out for name in LAZY_COMMANDS}


def test_help_texts_name_no_future_release():
    """0.1.0 help texts must not speak of what happened 'before 0.2'."""
    from ascendify import __version__

    for name, text in _all_help().items():
        flat = " ".join(text.split())
        assert "before 0.2" not in flat.lower(), (name, __version__)


def test_profile_help_shows_plot():
    text = run_cli("profile", "--help").out
    assert "--plot" in text


def test_out_dir_write_error_names_out_dir(tmp_path, monkeypatch):
    """The migrated copy cannot be written: the message names --out-dir, not the gone --output."""
    import ascendify.fix.run as fixrun

    p = tmp_path / "proj"
    p.mkdir()
    (p / "a.py").write_text(CUDA_SRC)
    _deny(monkeypatch, fixrun)
    r = run_cli("fix", "--no-cache", "--jobs", "1", str(p), "--out-dir", str(tmp_path / "copy"))
    assert r.code == 2
    line = [ln for ln in r.err.splitlines() if "error" in ln][0]
    assert "--out-dir" in line and "--output " not in line and "--output folder" not in line, line
