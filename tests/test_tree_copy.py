"""`fix --output` copies the whole tree, nothing lost: sibling folders named like the output,
folder and file symlinks, unreadable files, file names that are not UTF-8 (issue 11)."""

from __future__ import annotations

import builtins
import csv
import io
import json
import os

import jsonschema
import pytest

from .cli_util import run_cli

SRC = "import torch\n\nmodel = torch.nn.Linear(2, 2).cuda()  # keep me\n"


def fixed(text: str) -> bool:
    """``text`` is SRC with its DEV001 fix (with or without an added ``import torch_npu``)."""
    return "model = torch.nn.Linear(2, 2).npu()  # keep me\n" in text and ".cuda()" not in text and text.startswith("import torch\n")
HERE = os.path.dirname(os.path.abspath(__file__))
SARIF_SCHEMA = os.path.join(HERE, "data", "sarif", "sarif-2.1.0-rtm.5.json")


def cli(cwd, *args):
    r = run_cli(*args, "--select", "DEV001", "--no-cache", "-j", "1", cwd=str(cwd))
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err
    return r


def strict_json(path):
    """json.load the way a strict consumer does: bytes decoded as strict UTF-8 first."""
    with open(path, "rb") as fh:
        return json.loads(fh.read().decode("utf-8", "strict"))


# ------------------------------------------------------------------ containment
def test_output_inside_project_keeps_sibling_folder_with_same_prefix(tmp_path):
    proj = tmp_path / "proj"
    (proj / "outputs").mkdir(parents=True)
    (proj / "m.py").write_text(SRC)
    (proj / "outputs" / "clean.py").write_text("x = 1\n")
    (proj / "outputs" / "data.txt").write_text("rows\n")
    (proj / "out_notes.txt").write_text("notes\n")
    r = cli(proj, "fix", ".", "--out-dir", "out")
    assert r.code == 0, r.err
    out = proj / "out"
    assert fixed((out / "m.py").read_text())
    assert (out / "outputs" / "clean.py").read_text() == "x = 1\n"
    assert (out / "outputs" / "data.txt").read_text() == "rows\n"
    assert (out / "out_notes.txt").read_text() == "notes\n"
    assert not (out / "out").exists()
    # a second run does not copy the output into itself, nor report its files twice
    r2 = cli(proj, "fix", ".", "--out-dir", "out")
    assert r2.code == 0 and not (out / "out").exists(), r2.err
    assert "fixed 1 finding(s) in 1 file(s)" in r2.err


# ------------------------------------------------------------------ symlinks
@pytest.fixture
def linked(tmp_path):
    """proj/realdir/m.py; proj/linkdir -> realdir; proj/realdir/up -> .. (a loop);
    proj/alias.py -> realdir/m.py; proj/ext -> ../shared (outside, holding n.py to fix)."""
    proj = tmp_path / "proj"
    (proj / "realdir").mkdir(parents=True)
    (proj / "realdir" / "m.py").write_text(SRC)
    (proj / "realdir" / "notes.txt").write_text("n\n")
    os.symlink("realdir", proj / "linkdir")
    os.symlink("..", proj / "realdir" / "up")
    os.symlink(os.path.join("realdir", "m.py"), proj / "alias.py")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "n.py").write_text(SRC)
    os.symlink(os.path.join("..", "shared"), proj / "ext")
    return proj


def test_scan_follows_no_link_into_the_tree_and_reports_the_loop_once(linked, tmp_path):
    r = cli(tmp_path, "scan", "proj", "--format", "json", "-o", "scan.json")
    doc = strict_json(tmp_path / "scan.json")
    paths = sorted(f["path"] for f in doc["findings"])
    assert paths == [os.path.join("proj", "ext", "n.py"), os.path.join("proj", "realdir", "m.py")]
    assert "realdir: symlink loop" not in r.err
    loops = [ln for ln in r.err.splitlines() if "loop" in ln]
    assert loops == [f"ascendify: {os.path.join('proj', 'realdir', 'up')}: symlink loop (the link points to a folder that contains it); not followed"], r.err
    assert r.code == 1


def test_output_keeps_links_as_links_into_the_copy_and_fixes_once(linked, tmp_path):
    r = cli(tmp_path, "fix", "proj", "--out-dir", "out")
    out = tmp_path / "out"
    assert fixed((out / "realdir" / "m.py").read_text())
    assert not (out / "realdir" / "m.py").is_symlink()
    assert (out / "realdir" / "notes.txt").read_text() == "n\n"
    # the folder link stays a link, relative, resolving into the copy
    assert (out / "linkdir").is_symlink() and os.readlink(out / "linkdir") == "realdir"
    assert os.path.realpath(out / "linkdir") == os.path.realpath(out / "realdir")
    assert (out / "realdir" / "up").is_symlink() and os.path.realpath(out / "realdir" / "up") == os.path.realpath(out)
    # the file link too
    assert (out / "alias.py").is_symlink() and os.path.realpath(out / "alias.py") == os.path.realpath(out / "realdir" / "m.py")
    # the folder outside the tree: still a link to it, and it is never written through
    assert (out / "ext").is_symlink() and os.path.realpath(out / "ext") == os.path.realpath(tmp_path / "shared")
    assert (tmp_path / "shared" / "n.py").read_text() == SRC
    assert (linked / "realdir" / "m.py").read_text() == SRC
    rows = list(csv.DictReader(open(out / "ascendify-changes.csv", encoding="utf-8")))
    assert [r_["file"] for r_ in rows] == [os.path.join("proj", "realdir", "m.py")]
    assert f"{os.path.join('proj', 'ext', 'n.py')}: reached through the folder link" in r.err
    assert "fixed 1 finding(s) in 1 file(s)" in r.err


def test_write_through_a_file_link_edits_the_target_and_keeps_the_link(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "real.py").write_text(SRC)
    os.symlink(os.path.join("lib", "real.py"), tmp_path / "alias.py")
    r = cli(tmp_path, "fix", "alias.py", "--write")
    assert r.code == 0, r.err
    assert (tmp_path / "alias.py").is_symlink()
    assert fixed((tmp_path / "lib" / "real.py").read_text())


# ------------------------------------------------------------------ unreadable files
def _unreadable(monkeypatch, tmp_path, *names):
    """Make ``names`` unreadable: chmod 000 when that works (not root), else an ``open``
    that refuses them with EACCES, as the kernel would."""
    paths = [tmp_path / n for n in names]
    if os.geteuid() != 0:
        for p in paths:
            os.chmod(p, 0)
        return
    real_open = builtins.open
    blocked = {os.path.realpath(p) for p in paths}

    def guarded(file, *args, **kwargs):
        if isinstance(file, (str, bytes, os.PathLike)) and os.path.realpath(os.fsdecode(file)) in blocked:
            raise PermissionError(13, "Permission denied", os.fsdecode(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)
    monkeypatch.setattr(io, "open", guarded)


def test_unreadable_data_file_is_a_finding_and_a_failing_exit(tmp_path, monkeypatch):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "m.py").write_text(SRC)
    (proj / "data.txt").write_text("secret\n")
    _unreadable(monkeypatch, proj, "data.txt")
    r = cli(tmp_path, "fix", "proj", "--out-dir", "out", "--fail-on", "never")
    monkeypatch.undo()
    out = tmp_path / "out"
    assert fixed((out / "m.py").read_text())
    assert not (out / "data.txt").exists()
    assert r.code == 1
    assert f"ascendify: {os.path.join('proj', 'data.txt')}: cannot read file (Permission denied); not in the migrated copy" in r.err
    log = strict_json(out / "ascendify-changes.json")
    assert [(f["code"], f["path"]) for f in log["remaining"]] == [("SYN003", os.path.join("proj", "data.txt"))]


def test_unreadable_python_file_is_reported_not_silently_missing(tmp_path, monkeypatch):
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "secret.py").write_text(SRC)
    _unreadable(monkeypatch, proj, "secret.py")
    r = cli(tmp_path, "fix", "proj", "--out-dir", "out", "--fail-on", "never")
    monkeypatch.undo()
    assert r.code == 1
    assert f"ascendify: {os.path.join('proj', 'secret.py')}: cannot read file (Permission denied); not in the migrated copy" in r.err
    log = strict_json(tmp_path / "out" / "ascendify-changes.json")
    assert [f["code"] for f in log["remaining"]] == ["SYN003"]  # the scan's finding, not a second one


def test_files_the_scan_cannot_use_are_still_copied_as_is(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    bad = b"# -*- coding: ascii -*-\nx = '\xff'\n"
    (proj / "bad.py").write_bytes(bad)
    (proj / "bin.py").write_bytes(b"\x00\x01\x02")
    cli(tmp_path, "fix", "proj", "--out-dir", "out")
    assert (tmp_path / "out" / "bad.py").read_bytes() == bad
    assert (tmp_path / "out" / "bin.py").read_bytes() == b"\x00\x01\x02"


# ------------------------------------------------------------------ non-UTF-8 file names
NAME = b"name_\xff.py"


@pytest.fixture
def oddname(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    with open(os.path.join(os.fsencode(proj), NAME), "wb") as fh:
        fh.write(SRC.encode())
    return proj


def _is_odd(path: str) -> bool:
    return os.fsencode(path) == os.path.join(b"proj", NAME)


def test_json_and_sarif_escape_undecodable_names(oddname, tmp_path):
    cli(tmp_path, "scan", "proj", "--format", "json", "-o", "scan.json")
    doc = strict_json(tmp_path / "scan.json")
    assert [_is_odd(f["path"]) for f in doc["findings"]] == [True]
    assert _is_odd(doc["summary"]["files"][0]["path"])
    cli(tmp_path, "scan", "proj", "--format", "sarif", "-o", "scan.sarif")
    log = strict_json(tmp_path / "scan.sarif")
    jsonschema.Draft4Validator(json.load(open(SARIF_SCHEMA))).validate(log)
    uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "proj/name_%FF.py"


def test_csv_escapes_undecodable_names(oddname, tmp_path):
    cli(tmp_path, "scan", "proj", "--format", "csv", "-o", "scan.csv")
    text = (tmp_path / "scan.csv").read_bytes().decode("utf-8", "strict")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["file"] for r in rows] == [os.path.join("proj", "name_\\xff.py")]


def test_fix_output_with_undecodable_name_writes_a_strict_change_log(oddname, tmp_path):
    r = cli(tmp_path, "fix", "proj", "--out-dir", "out", "--changelog", "extra.csv")
    assert r.code == 0, r.err
    out = os.fsencode(tmp_path / "out")
    with open(os.path.join(out, NAME), "rb") as fh:
        assert fixed(fh.read().decode())
    log = strict_json(tmp_path / "out" / "ascendify-changes.json")
    assert [_is_odd(c["file"]) for c in log["changes"]] == [True]
    for name in (tmp_path / "out" / "ascendify-changes.csv", tmp_path / "extra.csv"):
        rows = list(csv.DictReader(io.StringIO(name.read_bytes().decode("utf-8", "strict"))))
        assert [r_["file"] for r_ in rows] == [os.path.join("proj", "name_\\xff.py")]
    assert strict_json(tmp_path / "extra.json")["changes"][0]["code"] == "DEV001"
