"""fsutil.atomic_write / replace_file: file modes follow the umask like open() would."""

from __future__ import annotations

import os
import tempfile

import pytest

from ascendify.fsutil import atomic_write, file_mode, replace_file
from tests.conftest import mode_of


@pytest.mark.parametrize("mask,plain,script", [(0o022, 0o644, 0o755), (0o027, 0o640, 0o750), (0o077, 0o600, 0o700),
                                               (0o002, 0o664, 0o775)])
def test_new_file_modes_follow_umask(tmp_path, umask, mask, plain, script):
    umask(mask)
    atomic_write(str(tmp_path / "a.json"), b"{}")
    atomic_write(str(tmp_path / "a.sh"), b"#!/bin/sh\n", mode=0o777)
    assert mode_of(tmp_path / "a.json") == plain
    assert mode_of(tmp_path / "a.sh") == script
    assert (tmp_path / "a.json").read_bytes() == b"{}"


def test_existing_file_keeps_its_mode(tmp_path, umask):
    umask(0o022)
    p = tmp_path / "keep.txt"
    p.write_text("old")
    os.chmod(p, 0o604)
    atomic_write(str(p), b"new")
    assert mode_of(p) == 0o604 and p.read_text() == "new"
    # a script rewritten over an old non-executable copy gains the execute bits (0o777 less the umask)
    s = tmp_path / "run.sh"
    s.write_text("old")
    os.chmod(s, 0o640)
    atomic_write(str(s), b"#!/bin/sh\n", mode=0o777)
    assert mode_of(s) == 0o640 | 0o755


def test_like_gives_the_mode_of_another_file(tmp_path, umask):
    umask(0o022)
    src = tmp_path / "src.py"
    src.write_text("x")
    os.chmod(src, 0o700)
    atomic_write(str(tmp_path / "out.py"), b"y", like=str(src))
    assert mode_of(tmp_path / "out.py") == 0o700
    assert file_mode(str(tmp_path / "none"), like=str(src)) == 0o700


def test_replace_file_fixes_mkstemp_mode(tmp_path, umask):
    umask(0o022)
    fd, tmp = tempfile.mkstemp(dir=str(tmp_path))
    os.close(fd)
    assert mode_of(tmp) == 0o600
    replace_file(tmp, str(tmp_path / "model.onnx"))
    assert mode_of(tmp_path / "model.onnx") == 0o644 and not os.path.exists(tmp)


def test_failed_write_leaves_no_temp_file(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    with pytest.raises(OSError):
        atomic_write(str(d / "missing-folder" / "x"), b"1")
    assert os.listdir(d) == []
