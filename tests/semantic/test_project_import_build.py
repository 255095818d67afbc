"""EXT019: importing a module whose import runs a CUDA build fails on Ascend (issue 20, K's family 5:
stylegan2's ``from op import ...``, where op/__init__ imports op/fused_act.py, which calls
``cpp_extension.load`` of .cu sources in its body).  The import line of each importer is reported;
a guarded build, a build inside a function, and the package __init__ passing the import on are not."""

from __future__ import annotations

import json

from tests.cli_util import run_cli

FILES = {
    "kern/__init__.py": "from .smooth import smooth\n",
    "kern/smooth.py": ('from torch.utils.cpp_extension import load\n'
                       'smooth_ext = load("smooth_ext", sources=["smooth.cpp", "smooth_kernel.cu"])\n\n\n'
                       'def smooth(x):\n    return smooth_ext.run(x)\n'),
    "kern/plain.py": "def ident(x):\n    return x\n",
    "lazy/__init__.py": "",
    "lazy/later.py": ('def build():\n    from torch.utils.cpp_extension import load\n'
                      '    return load("later", sources=["later_kernel.cu"])\n'),
    "lazy/guarded.py": ('import torch\nif torch.cuda.is_available():\n    from torch.utils.cpp_extension import load\n'
                        '    ext = load("g", sources=["g_kernel.cu"])\n'),
    "train.py": ("import os\nfrom kern import smooth\nfrom kern.plain import ident\nfrom lazy.later import build\n"
                 "from lazy import guarded\nimport model\n\n\ndef f(x):\n    from kern.smooth import smooth_ext\n    return smooth_ext\n"),
    "model.py": "import kern.plain\n",
}


def test_each_importer_of_an_import_time_cuda_build_is_reported(tmp_path):
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    r = run_cli("scan", ".", "--format", "json", "--fail-on", "never", "--no-cache", cwd=str(tmp_path))
    assert r.code == 0, r.err
    got = {(f["path"], f["line"]): f for f in json.loads(r.out)["findings"] if f["code"] == "EXT019"}
    # train.py:2 `from kern import smooth`, :3 kern.plain (kern/__init__ runs first), :6 `import model`
    # (model imports kern); not :4 (a build inside a function), :5 (a guarded build), :10 (not module level);
    # not kern/__init__.py (it passes the import on)
    assert sorted(got) == [("model.py", 1), ("train.py", 2), ("train.py", 3), ("train.py", 6)]
    f = got[("train.py", 2)]
    assert f["severity"] == "error" and f["message"].startswith(
        "importing `kern` builds CUDA code at import time (EXT001 at kern/smooth.py:2): on an Ascend host this import fails")
    assert [(x["path"], x["line"], x["code"]) for x in f["related"]] == [("kern/smooth.py", 2, "EXT001")]
    assert "through the modules it imports" in got[("train.py", 6)]["message"]
