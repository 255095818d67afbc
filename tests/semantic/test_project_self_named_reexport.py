"""A package function that imports, inside its body, a same-named function from a same-named submodule
(torch/_inductor/__init__.py's `standalone_compile`) made the project pass resolve an ever longer
reference (`standalone_compile.standalone_compile....`) until Python's recursion limit: a scan of torch's
own tree (2,285 files) ended in "internal error: RecursionError" (new-user trial).  The scan must finish
and still report the submodule's own finding."""

from tests.cli_util import run_cli


def test_self_named_lazy_reexport_does_not_recurse_without_end(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "def standalone_compile(x):\n    from .standalone_compile import standalone_compile\n    return standalone_compile(x)\n")
    (pkg / "standalone_compile.py").write_text("import torch\n\ndef standalone_compile(x):\n    return x.cuda()\n")
    (tmp_path / "main.py").write_text("from pkg import standalone_compile\n\nstandalone_compile(1)\n")
    r = run_cli("scan", str(tmp_path), "--no-cache", "--fail-on", "never")
    assert r.code == 0, r.err
    assert "internal error" not in r.err
    assert "standalone_compile.py:4:14: DEV001" in r.out
