"""Property test over whole trees (issue 11, item 5).

For generated projects — odd file and folder names (spaces, unicode, leading dashes), nested
folders, a symlinked file and folder, sources in UTF-8, UTF-8 with BOM and Latin-1 with a
coding cookie, LF/CRLF/CR line endings with or without one at EOF, some with CUDA code and
some without, and a data file — ``fix --output``:

* copies every input file: byte-identical where no fix applied, links kept as links;
* the copy re-scans to the same remaining findings as the fix run reported;
* a second fix of the copy changes nothing.
"""

from __future__ import annotations

import json
import os
import tempfile

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from .cli_util import run_cli

NAMES = ["plain", "with space", "ünïcödé", "-leading-dash", "日本語", "a.b", "--x y"]
DIRS = ["sub dir", "ünï", "-d", "deep"]
CUDA = [
    "x = torch.ones(2).cuda()",
    "torch.cuda.synchronize()",
    'dist.init_process_group(backend="nccl")',
    'state = torch.load("ckpt.pt")',  # an unsafe fix: left for a person
    'torch.cuda.nvtx.range_push("step")',  # no fix
]
PLAIN = ["y = 1", "def f(a):\n    return a + 1", 'msg = "café"', "class C:\n    pass"]
HEAD = "import torch\nimport torch.distributed as dist\n"
ENCODINGS = ["utf-8", "utf-8-sig", "latin-1"]
EOLS = ["\n", "\r\n", "\r"]
SKIP = {".git", "__pycache__", ".ascendify_cache"}
LOG = {"ascendify-changes.csv", "ascendify-changes.json"}
NEW_FROM_FIX: set = set()  # issue 19: nothing the fix writes is flagged by a scan of the copy


@st.composite
def py_file(draw):
    cuda = draw(st.booleans())
    body = draw(st.lists(st.sampled_from(CUDA if cuda else PLAIN), min_size=1, max_size=3))
    text = (HEAD if cuda else "") + "\n".join(body) + '\nnote = "é"\n'
    enc = draw(st.sampled_from(ENCODINGS))
    if enc == "latin-1":
        text = "# -*- coding: latin-1 -*-\n" + text
    eol = draw(st.sampled_from(EOLS))
    text = text.replace("\n", eol)
    if not draw(st.booleans()):
        text = text[: -len(eol)]  # no line ending at EOF
    data = text.encode(enc)
    return data


CELLS = ["%matplotlib inline\nimport os", "if os.name:\n    %load_ext tensorboard\nx = torch.ones(1).cuda()",
         "%%bash\necho hi", "def f(:\n", "!pip install -q \\\n    torch", 'state = torch.load("c.pt")',
         "%%capture\ntorch.cuda.synchronize()", "%time y = torch.zeros(1).cuda()"]


@st.composite
def notebook(draw) -> bytes:
    cells = ["import torch\n"] + draw(st.lists(st.sampled_from(CELLS), min_size=1, max_size=4))
    nb = {"nbformat": 4, "nbformat_minor": 5, "metadata": {},
          "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                     "source": c.splitlines(keepends=True)} for c in cells]}
    return (json.dumps(nb, indent=1, ensure_ascii=False) + "\n").encode("utf-8")


@st.composite
def project(draw):
    """{relative path: bytes} of regular files, and the links to make: [(link, target)]."""
    files: dict = {}
    n = draw(st.integers(1, 5))
    for _ in range(n):
        depth = draw(st.integers(0, 2))
        folder = [draw(st.sampled_from(DIRS)) for _ in range(depth)]
        name = draw(st.sampled_from(NAMES)) + ".py"
        files[os.path.join(*folder, name)] = draw(py_file())
    files[os.path.join(draw(st.sampled_from(["", "data"])), "table data.csv")] = draw(st.binary(max_size=40)) + b"\r\na,b\n"
    if draw(st.booleans()):
        files[os.path.join(draw(st.sampled_from(["", "nb"])), "explore ü.ipynb")] = draw(notebook())
    links = []
    py = sorted(p for p in files if p.endswith(".py"))
    if draw(st.booleans()):  # a file link, relative, beside the top folder
        target = draw(st.sampled_from(py))
        links.append(("alias.py", target))
    dirs = sorted({os.path.dirname(p) for p in files if os.path.dirname(p)})
    if dirs and draw(st.booleans()):  # a folder link to a folder of the tree
        links.append(("linked dir", draw(st.sampled_from(dirs))))
    return files, links


def _entries(root: str) -> dict:
    """{relative path: ("link", target) | ("file", bytes)} of a tree, links not followed."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in list(dirnames):
            p = os.path.join(dirpath, d)
            if d in SKIP:
                dirnames.remove(d)
            elif os.path.islink(p):
                out[os.path.relpath(p, root)] = ("link", os.readlink(p))
        for f in filenames:
            p = os.path.join(dirpath, f)
            rel = os.path.relpath(p, root)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            else:
                with open(p, "rb") as fh:
                    out[rel] = ("file", fh.read())
    return out


def _run(cwd: str, *args: str):
    r = run_cli(*args, "--no-cache", "-j", "1", cwd=cwd)
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err
    return r


def _scan(cwd: str) -> list:
    r = _run(cwd, "scan", ".", "--format", "json", "--fail-on", "never")
    # notebooks: the line in the cell (the change log's lines are lines of the cell)
    return sorted((os.path.normpath(f["path"]), f["code"], f["cell"] or 0, f["cell_line"] or f["line"])
                  for f in json.loads(r.out)["findings"])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(project())
def test_fix_output_copies_every_file_rescans_the_same_and_is_a_fix_point(tree):
    files, links = tree
    with tempfile.TemporaryDirectory() as tmp:
        proj, out = os.path.join(tmp, "proj"), os.path.join(tmp, "out")
        for rel, data in files.items():
            os.makedirs(os.path.join(proj, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(proj, rel), "wb") as fh:
                fh.write(data)
        for link, target in links:
            os.symlink(target, os.path.join(proj, link))
        before = _entries(proj)

        _run(proj, "fix", ".", "--out-dir", out)
        with open(os.path.join(out, "ascendify-changes.json"), encoding="utf-8") as fh:
            log = json.load(fh)
        changed = {os.path.normpath(c["file"]) for c in log["changes"]}
        event(f"files fixed: {len(changed)}; links: {len(links)}; remaining: {min(len(log['remaining']), 3)}+")
        assert _entries(proj) == before  # the project itself is never touched
        copy = _entries(out)
        assert set(copy) - LOG == set(before)
        for rel, (kind, value) in before.items():
            assert copy[rel][0] == kind, rel
            if kind == "link" or rel not in changed:
                assert copy[rel] == (kind, value), rel
            else:
                assert copy[rel][1] != value, rel
        assert changed <= {rel for rel, (kind, _) in before.items() if kind == "file" and rel.endswith((".py", ".ipynb"))}

        remaining = sorted((os.path.normpath(f["path"]), f["code"], f["cell"] or 0, f["migrated_line"]) for f in log["remaining"])
        rescan = _scan(out)
        # known gap (reported to the fix engine's owner): an info finding that the fix's own
        # output raises (IMP002 for the `.npu()` it wrote, torch_npu auto-loaded) is not listed
        # as remaining; everything else must match exactly
        assert [f for f in rescan if f[1] not in NEW_FROM_FIX] == [f for f in remaining if f[1] not in NEW_FROM_FIX]
        assert all(f in rescan for f in remaining)

        _run(out, "fix", ".", "--write")
        assert _entries(out) == copy
