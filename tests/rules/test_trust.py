"""Findings people trust (issue 13, part 6): messages say only what the code and the KB show.

Each point has a positive case (the finding, with the wording the code supports) and a
negative one (the wording or finding that would mislead is absent).
"""

from __future__ import annotations

import textwrap

from .helpers import findings_for


def _write(tmp_path, text, name="mod.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text), encoding="utf-8")
    return str(p)


# ------------------------------------------------------------------ EXT: a handler that re-raises is no fallback
def test_import_guard_that_falls_back_is_optional(tmp_path):
    path = _write(tmp_path, """
        try:
            from apex import amp
        except ImportError:
            amp = None
    """)
    (f,) = findings_for(path, "EXT002")
    assert f.severity == "warning"
    assert "guarded by `except ImportError`: the code runs without it" in f.message


def test_import_guard_that_reraises_is_not_optional(tmp_path):
    path = _write(tmp_path, """
        try:
            from apex import amp
        except ImportError as e:
            raise ImportError("install apex from https://github.com/NVIDIA/apex") from e
        try:
            import apex
        except (ImportError, ModuleNotFoundError):
            print("apex is required")
            raise
    """)
    fs = findings_for(path, "EXT002")
    assert [f.line for f in fs] == [3, 7]
    assert all(f.severity == "error" for f in fs), [(f.line, f.severity) for f in fs]
    assert not any("guarded" in f.message or "runs without it" in f.message for f in fs)


def test_import_guard_names_the_handler_as_written(tmp_path):
    path = _write(tmp_path, """
        try:
            import apex
        except Exception:
            apex = None
    """)
    (f,) = findings_for(path, "EXT002")
    assert "guarded by `except Exception`" in f.message


def test_reraising_try_is_no_guard_in_the_model(tmp_path):
    import ast

    from ascendify.semantic.bindings import handler_reraises

    tree = ast.parse(textwrap.dedent("""
        try:
            import a
        except ImportError:
            raise
        try:
            import b
        except ImportError as e:
            raise RuntimeError("need b") from e
        try:
            import c
        except ImportError:
            c = None
    """))
    handlers = [n for n in ast.walk(tree) if isinstance(n, ast.ExceptHandler)]
    assert [handler_reraises(h) for h in handlers] == [True, True, False]


# ------------------------------------------------------------------ MEM004: the loop as the code shows it
def test_empty_cache_loop_wording_names_loop_and_function(tmp_path):
    path = _write(tmp_path, """
        import torch

        def bench_fn(fn, n):
            for _ in range(3):
                for step in range(n):
                    fn()
                    torch.cuda.empty_cache()

        def train(loader):
            for batch in loader:
                torch.cuda.empty_cache()
    """)
    fs = findings_for(path, "MEM004")
    assert [f.message.split(":")[0] for f in fs] == [
        "`torch.cuda.empty_cache()` inside a nested loop over `range(n)` in `bench_fn`",
        "`torch.cuda.empty_cache()` inside a loop over `loader` in `train`",
    ]
    assert not any("training" in f.message for f in fs)


def test_empty_cache_in_epoch_loop_not_reported(tmp_path):
    path = _write(tmp_path, """
        import torch

        def fit(epochs):
            for epoch in range(epochs):
                torch.cuda.empty_cache()
    """)
    assert findings_for(path, "MEM004") == []
