"""The fix engine (fix/apply.py): range edits spliced into the text with a source map.

The expected texts are what the two engines before it wrote (the text engine and its LibCST
fallback); the cases marked "fell back" are the ones the text engine sent to LibCST, found by
instrumenting that fallback over the fix suites, the bench corpus, examples/ and tests/ with both
targets (step 6 of issue 19).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from ascendify.diagnostics import Edit, Finding, Fix
from ascendify.fix import apply as apply_mod
from ascendify.fix.run import LineMap
from ascendify.scan.source import SourceFile

PRELUDE = "DEVICE_TYPE = torch.accelerator.current_accelerator().type"


def _finding(*edits, line=1):
    return Finding("DEV001", "m", "t.py", line, 0, line, 0, "error", "device", Fix(tuple(edits), True, "op"))


def _apply(text, findings):
    o = apply_mod.apply_fixes(SourceFile(path="t.py", text=text), findings)
    return o.text, len(o.applied), o.error


def _end(src):
    lines = src.split("\n")
    return (len(lines) - 1, len(lines[-2]))


# ---------------------------------------------------------------------- argument edits
CALLS = {  # source -> (add_arg "k=v", set_args "k=v")
    "f(a)\n": ("f(a, k=v)\n", "f(k=v)\n"),
    "f( a )\n": ("f( a,  k=v)\n", "f( k=v)\n"),
    "f()\n": ("f(k=v)\n", "f(k=v)\n"),
    "f(\n    a,\n    b\n)\n": ("f(\n    a,\n    b, \nk=v)\n", "f(\n    k=v)\n"),
    "f(\n    a,\n    b,\n)\n": ("f(\n    a,\n    b,\nk=v,\n)\n", "f(\n    k=v)\n"),
    "f(a ,)\n": ("f(a ,k=v ,)\n", "f(k=v)\n"),
    "f(a  # c\n)\n": ("f(a,   # c\nk=v)\n", "f(k=v)\n"),
    "f(a,  # c\n)\n": ("f(a,  # c\nk=v,  # c\n)\n", "f(k=v)\n"),
    "f(  # c\n  a)\n": ("f(  # c\n  a, k=v)\n", "f(  # c\n  k=v)\n"),
    "(f)(a)\n": ("(f)(a, k=v)\n", "(f)(k=v)\n"),
}


@pytest.mark.parametrize("src", sorted(CALLS))
@pytest.mark.parametrize("kind", ["add_arg", "set_args"])
def test_argument_edits_keep_the_layout(src, kind):
    want = CALLS[src][kind == "set_args"]
    assert _apply(src, [_finding(Edit(kind, "k=v", (1, 0), _end(src)))]) == (want, 1, None)


TWO_ARGS = {  # fell back: two argument edits of one call in one fix (AMP002 agnostic: GradScaler() gets device= and enabled=)
    "f(a)\n": "f(a, k=v, z=1)\n",
    "f()\n": "f(k=v, z=1)\n",
    "f(\n    a,\n    b,\n)\n": "f(\n    a,\n    b,\nk=v,\nz=1,\n)\n",
    "f(a  # c\n)\n": "f(a,   # c\nk=v, z=1)\n",
    "f(a,  # c\n)\n": "f(a,  # c\nk=v,  # c\nz=1,  # c\n)\n",
}


@pytest.mark.parametrize("src", sorted(TWO_ARGS))
def test_two_argument_edits_of_one_call_are_made_one_after_the_other(src):
    fx = _finding(Edit("add_arg", "k=v", (1, 0), _end(src)), Edit("add_arg", "z=1", (1, 0), _end(src)))
    assert _apply(src, [fx]) == (TWO_ARGS[src], 1, None)


def test_the_amp002_agnostic_fix_of_a_bare_grad_scaler():
    """The case found in the rule fixtures (tests/rules, AMP002, --target agnostic)."""
    src = "import torch\n\nscaler = torch.amp.GradScaler()\n"
    fx = _finding(Edit("add_arg", "device=DEVICE_TYPE", (3, 9), (3, 31)), Edit("add_arg", 'enabled=DEVICE_TYPE != "cpu"', (3, 9), (3, 31)),
                  Edit("add_prelude", PRELUDE))
    assert _apply(src, [fx]) == (f'import torch\n\n{PRELUDE}\n\nscaler = torch.amp.GradScaler(device=DEVICE_TYPE, enabled=DEVICE_TYPE != "cpu")\n', 1, None)


@pytest.mark.parametrize("kinds,want", [
    (("set_args", "add_arg"), "x = t.to('npu', a, k=1)\n"),
    (("add_arg", "set_args"), "x = t.to('npu', a)\n"),  # the arguments set last replace the one added
    (("set_args", "set_args"), "x = t.to('npu', a)\n"),
])
def test_argument_edits_in_order_with_a_rename(kinds, want):
    texts = {"set_args": "'npu', a", "add_arg": "k=1"}
    edits = [Edit("attr", "to", (1, 4), (1, 10))] + [Edit(k, texts[k], (1, 4), (1, 13)) for k in kinds]
    assert _apply("x = t.cuda(a)\n", [_finding(*edits)]) == (want, 1, None)


def test_arguments_set_over_an_edited_argument_win():
    """``f('cuda')``: the arguments are the string's range; setting them rewrites the string too."""
    src = "x = f('cuda')\n"
    fx = _finding(Edit("string", "npu", (1, 6), (1, 12)), Edit("set_args", "k=1", (1, 4), (1, 13)))
    assert _apply(src, [fx]) == ("x = f(k=1)\n", 1, None)
    fx = _finding(Edit("string", "npu", (1, 6), (1, 12)), Edit("add_arg", "k=1", (1, 4), (1, 13)))
    assert _apply(src, [fx]) == ("x = f('npu', k=1)\n", 1, None)


def test_an_argument_edit_that_names_two_arguments_adds_both():
    """LibCST added the first one only (and kept its comma: ``f(a, k=v, )``); no rule writes one."""
    assert _apply("f(a)\n", [_finding(Edit("add_arg", "k=v, w=2", (1, 0), (1, 4)))]) == ("f(a, k=v, w=2)\n", 1, None)


# ---------------------------------------------------------------------- other edits, overlaps
def test_attr_string_and_nested_edits():
    src = "import torch\nx = torch.cuda.is_available()\ny = t.to('cuda').cuda(r'cuda', b'cuda')\n"
    fs = [_finding(Edit("attr", "npu", (2, 4), (2, 14)), line=2),
          _finding(Edit("string", "npu", (3, 9), (3, 15)), Edit("attr", "npu", (3, 4), (3, 21)), line=3),
          _finding(Edit("string", "npu", (3, 33), (3, 40)), line=3)]  # bytes: not placed, dropped whole
    assert _apply(src, fs) == ("import torch\nx = torch.npu.is_available()\ny = t.to('npu').npu(r'cuda', b'cuda')\n", 2, None)


@pytest.mark.parametrize("order", [0, 1])
def test_a_replace_around_an_edit_rewrites_it(order):
    fs = [_finding(Edit("replace", "0", (1, 4), (1, 31))), _finding(Edit("attr", "npu", (1, 4), (1, 14)))]
    o = apply_mod.apply_fixes(SourceFile(path="t.py", text="x = torch.cuda.current_device()\n"), fs[order:] + fs[:order])
    assert o.text == "x = 0\n"


def test_a_fix_whose_edits_clash_is_dropped_whole():
    """Two replacements of one range in one fix: no text to choose (LibCST wrote the last one)."""
    o = apply_mod.apply_fixes(SourceFile(path="t.py", text="x = f(a)\ny = 1\n"),
                              [_finding(Edit("replace", "b", (1, 6), (1, 7)), Edit("replace", "c", (1, 6), (1, 7))),
                               _finding(Edit("replace", "2", (2, 4), (2, 5)), line=2)])
    assert o.text == "x = f(a)\ny = 2\n" and len(o.applied) == 1
    assert [why for _f, why in o.skipped] == ["overlaps another fix; run fix again"]


def test_the_overlap_rule():
    merge = apply_mod._merge
    # inside a larger replacement: dropped, its fix placed; an insertion at an end: kept beside it
    assert merge([[(4, 31, "0", 0)], [(4, 14, "n", 0)], [(31, 31, "!", 0)]]) == ([(4, 31, "0"), (31, 31, "!")], set())
    # a partial overlap, one range with two texts, two insertions at one offset: the later fix out whole
    assert merge([[(0, 5, "a", 0)], [(3, 8, "b", 0), (10, 11, "c", 0)]]) == ([(0, 5, "a")], {1})
    assert merge([[(0, 5, "a", 0)], [(0, 5, "b", 0)]]) == ([(0, 5, "a")], {1})
    assert merge([[(5, 5, "a", 0)], [(5, 5, "b", 0)]]) == ([(5, 5, "a")], {1})
    # the arguments of a call over an edit of its only argument (the same range)
    assert merge([[(6, 12, "'npu'", 0), (6, 12, "k=1", 1)]]) == ([(6, 12, "k=1")], set())


def test_a_parenthesised_tuple_is_not_located():
    src = "T = ('cuda', 'xpu')\n"
    assert _apply(src, [_finding(Edit("replace", "('cuda', 'npu', 'xpu')", (1, 4), (1, 19)))]) == (src, 0, None)


@pytest.mark.parametrize("edit", [
    Edit("replace", "b", (9, 6), (9, 7)),  # no such line
    Edit("replace", "b", (1, 6), (1, 70)),  # past the end
    Edit("attr", "b", (1, 4), (1, 8)),  # not an attribute
    Edit("add_arg", "b", (1, 6), (1, 7)),  # not a call
    Edit("string", "b", (1, 4), (1, 8)),  # not a string
])
def test_an_edit_that_finds_no_code_for_it_drops_its_fix(edit):
    o = apply_mod.apply_fixes(SourceFile(path="t.py", text="x = f(a)\n"), [_finding(edit)])
    assert (o.text, o.applied, o.error) == ("x = f(a)\n", [], None)
    assert [why for _f, why in o.skipped] == ["could not locate the code to rewrite"]


# ---------------------------------------------------------------------- statements
@pytest.mark.parametrize("src", [
    '"""doc."""\nimport os\nimport torch  # t\nimport numpy\n\n\nx = 1\n',
    "import os\r\nimport torch\r\nx = 1\r\n",
    "import os\ntry:\n    import torch\n    import numpy\nexcept ImportError:\n    torch = None\n",
    "if ok():\n    import torch\nelse:\n    pass\n",
    "import torch; import os\nx = 1\n",
    "from torch import nn\nimport torch_npu\nx = 1\n",
])
def test_import_and_prelude_placement(src):
    fs = [_finding(Edit("add_import", "import torch_npu"), Edit("add_prelude", PRELUDE))]
    text, applied, error = _apply(src, fs)
    assert applied == 1 and error is None
    assert text.count("import torch_npu") == 1 and text.count(PRELUDE) == 1


PLACED = [  # fell back: a file without imports (LibCST's module header), a last line without a line break
    ("x = 1\n", "import torch_npu", "import torch_npu\nx = 1\n"),
    ("x = 1\n", PRELUDE, f"\n{PRELUDE}\nx = 1\n"),
    ("#!/usr/bin/env python\n# c\n\nx = 1\n", "import torch_npu", "#!/usr/bin/env python\n# c\n\nimport torch_npu\nx = 1\n"),
    ("# c\n\n# d\nx = 1\n", PRELUDE, f"# c\n\n# d\n\n{PRELUDE}\nx = 1\n"),
    ("# c\n@d\ndef f(): pass\n", "import torch_npu", "# c\nimport torch_npu\n@d\ndef f(): pass\n"),
    ("x = 1", "import torch_npu", "import torch_npu\nx = 1"),
    ("import torch", "import torch_npu", "import torch\nimport torch_npu"),
    ("import torch", PRELUDE, f"import torch\n\n{PRELUDE}"),
    ("import torch  # c", "import torch_npu", "import torch  # c\nimport torch_npu"),
    ("if 1:\n    import torch", "import torch_npu", "if 1:\n    import torch\n    import torch_npu"),
    ("if 1:\n    import torch", PRELUDE, f"if 1:\n    import torch\n    {PRELUDE}"),
    ("import torch\r", PRELUDE, f"import torch\r\r{PRELUDE}\r"),
    ("# only comment\n", "import torch_npu", "# only comment\nimport torch_npu\n"),
]


@pytest.mark.parametrize("src,stmt,want", PLACED)
def test_statements_where_the_text_engine_fell_back(src, stmt, want):
    kind = "add_prelude" if stmt == PRELUDE else "add_import"
    assert _apply(src, [_finding(Edit(kind, stmt))]) == (want, 1, None)


@pytest.mark.parametrize("src,want", [
    ("x.cuda()\n", "import torch\nimport torch_npu\n\nDEVICE_TYPE = torch.x\nx.npu()\n"),  # fell back: no imports
    ("x.cuda()", "import torch\nimport torch_npu\n\nDEVICE_TYPE = torch.x\nx.npu()"),
    ("import os\nx=1\n", "import os\nimport torch\nimport torch_npu\n\nDEVICE_TYPE = torch.x\nx=1\n"),
    ('"""d"""\nx=1\n', '"""d"""\nimport torch\nimport torch_npu\n\nDEVICE_TYPE = torch.x\nx=1\n'),
    ("import os\nimport torch\nimport numpy\nx=1\n", "import os\nimport torch\nimport torch_npu\nimport numpy\n\nDEVICE_TYPE = torch.x\nx=1\n"),
])
def test_statements_placed_after_statements_the_same_fix_adds(src, want):
    """Computed once from the ``ast`` of the text: an ``import torch`` the fix adds is the import the
    next statements go after, as when each was placed in the text the one before left."""
    edits = [Edit("attr", "npu", (1, 0), (1, 6))] if src.startswith("x.cuda") else []
    fx = _finding(*edits, Edit("add_import", "import torch"), Edit("add_import", "import torch_npu"), Edit("add_prelude", "DEVICE_TYPE = torch.x"))
    assert _apply(src, [fx]) == (want, 1, None)


def test_a_prelude_the_fixes_write_is_not_added_twice():
    """The statement's text after the fixes is what counts: an edit that makes the prelude."""
    src = "import torch\nDEVICE_TYPE = 'cuda'\n"
    fx = _finding(Edit("replace", "torch.x", (2, 14), (2, 20)), Edit("add_prelude", "DEVICE_TYPE = torch.x"))
    assert _apply(src, [fx]) == ("import torch\nDEVICE_TYPE = torch.x\n", 1, None)


def test_the_prelude_goes_in_the_first_cell_that_imports_torch():
    src = ("# %% [ascendify cell 0]\ntry:\n    import x\nexcept ImportError:\n    pass\nimport torch\n"
           "# %% [ascendify cell 1]\nimport os\nx = DEVICE_TYPE\n")
    text, applied, _ = _apply(src, [_finding(Edit("add_prelude", PRELUDE))])
    assert applied == 1 and text.index(PRELUDE) < text.index("# %% [ascendify cell 1]")


# ---------------------------------------------------------------------- source map, no LibCST
def test_the_source_map_gives_the_line_of_each_line():
    src = "import torch\nx = torch.cuda.f(\n    a,\n    b)\ny = torch.cuda.g()\n"
    fs = [_finding(Edit("replace", "g()", (2, 4), (4, 6)), Edit("add_import", "import torch_npu")),
          _finding(Edit("attr", "npu", (5, 4), (5, 14)), line=5)]
    o = apply_mod.apply_fixes(SourceFile(path="t.py", text=src), fs)
    assert o.text == "import torch\nimport torch_npu\nx = g()\ny = torch.npu.g()\n"
    lines = o.source_map.lines()
    assert lines == {1: 1, 2: 3, 3: None, 4: None, 5: 4}
    m = LineMap([lines])
    assert [m.forward(n) for n in (1, 2, 3, 5)] == [1, 3, None, 4]
    assert [m.back(n) for n in (1, 2, 3, 4)] == [1, None, 2, 5]  # line 2 was added


def test_line_maps_compose_over_passes():
    m = LineMap([{1: 1, 2: 3, 3: 4}, {1: 1, 2: 2, 3: 3, 4: 6}])
    assert [m.forward(n) for n in (1, 2, 3)] == [1, 3, 6]
    assert m.forward(4, 1) == 6 and m.back(6) == 3 and m.back(3, 1) == 2 and m.back(2) is None


def test_the_fix_path_does_not_import_libcst():
    code = ("import sys; import ascendify.fix.apply, ascendify.fix.run; "
            "print('libcst' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
