"""semantic.imports: which file an import names, as Python's import system finds it (issue 20, item 1)."""

from __future__ import annotations

import ast

import pytest

from ascendify.semantic.imports import Resolver, Tree, find, package_root, path_entry, resolve, search_path

MONOREPO = [
    "imagenet/main.py",
    "imagenet/utils.py",
    "word_language_model/main.py",
    "word_language_model/utils.py",
    "word_language_model/model.py",
    "fast_neural_style/neural_style/__init__.py",
    "fast_neural_style/neural_style/neural_style.py",
    "fast_neural_style/neural_style/utils.py",
    "distributed/FSDP/T5_training.py",
    "distributed/FSDP/utils/__init__.py",
    "distributed/FSDP/utils/train_utils.py",
    "distributed/FSDP2/example.py",
    "distributed/FSDP2/utils.py",
    "mnist/main.py",  # no utils.py of its own
    "utils.py",  # the scan root's
]


def _rel(tree, importer, module, level=0, entries=()):
    got = resolve(tree, importer, module, level, entries)
    return got.rel if got is not None else None


def test_monorepo_each_script_resolves_its_own_utils():
    tree = Tree(MONOREPO)
    assert _rel(tree, "imagenet/main.py", "utils") == "imagenet/utils.py"
    assert _rel(tree, "word_language_model/main.py", "utils") == "word_language_model/utils.py"
    assert _rel(tree, "fast_neural_style/neural_style/neural_style.py", "utils") == "fast_neural_style/neural_style/utils.py"
    assert _rel(tree, "distributed/FSDP/T5_training.py", "utils") == "distributed/FSDP/utils/__init__.py"
    assert _rel(tree, "distributed/FSDP/T5_training.py", "utils.train_utils") == "distributed/FSDP/utils/train_utils.py"
    assert _rel(tree, "distributed/FSDP2/example.py", "utils") == "distributed/FSDP2/utils.py"
    # a script without a utils.py of its own: the one above it (the scan root), never a sibling project's
    assert _rel(tree, "mnist/main.py", "utils") == "utils.py"
    # the whole tree minus the root's utils.py: nothing (a library), not imagenet's
    assert _rel(Tree([f for f in MONOREPO if f != "utils.py"]), "mnist/main.py", "utils") is None


def test_the_reason_is_said():
    tree = Tree(MONOREPO)
    got = resolve(tree, "imagenet/main.py", "utils")
    assert got.why == "the script's own folder (sys.path[0])"
    got = resolve(tree, "mnist/main.py", "utils")
    assert "above the script" in got.why


def test_library_and_missing_names_are_none():
    tree = Tree(MONOREPO)
    assert _rel(tree, "imagenet/main.py", "torch") is None
    assert _rel(tree, "imagenet/main.py", "utils.nothing") is None  # a module has no submodules
    assert _rel(tree, "imagenet/main.py", "model") is None  # word_language_model's model.py is not on its path


def test_package_root_walks_up_through_init():
    tree = Tree(["proj/pkg/__init__.py", "proj/pkg/sub/__init__.py", "proj/pkg/sub/m.py", "proj/tools/train.py"])
    assert package_root(tree, "proj/pkg/sub") == "proj"
    assert package_root(tree, "proj/tools") is None
    # a module inside a package imports absolute names from the folder above the package first
    assert _rel(tree, "proj/pkg/sub/m.py", "pkg.sub") == "proj/pkg/sub/__init__.py"
    # a script in tools/ reaches the project's package from the folder above it (run from the root / installed)
    assert _rel(tree, "proj/tools/train.py", "pkg.sub.m") == "proj/pkg/sub/m.py"
    assert search_path(tree, "proj/pkg/sub/m.py")[0][0] == "proj"


def test_src_layout():
    tree = Tree(["src/mylib/__init__.py", "src/mylib/dist.py", "scripts/train.py"])
    got = resolve(tree, "scripts/train.py", "mylib.dist")
    assert got.rel == "src/mylib/dist.py" and got.why == "a src/ layout"


def test_regular_package_wins_over_namespace_portion_in_an_earlier_entry():
    # the script's own folder holds a namespace portion `common/` (no __init__.py); the root a regular package
    tree = Tree(["app/train.py", "app/common/extra.py", "common/__init__.py", "common/dist.py"])
    assert _rel(tree, "app/train.py", "common") == "common/__init__.py"
    assert _rel(tree, "app/train.py", "common.dist") == "common/dist.py"
    assert _rel(tree, "app/train.py", "common.extra") is None  # the regular package's __path__ only


def test_namespace_package_spans_its_portions():
    tree = Tree(["app/train.py", "app/ns/a.py", "ns/b.py"])
    assert _rel(tree, "app/train.py", "ns.a") == "app/ns/a.py"
    assert _rel(tree, "app/train.py", "ns.b") == "ns/b.py"
    got = resolve(tree, "app/train.py", "ns")
    assert got.rel == "" and "namespace package" in got.why


def test_relative_imports_by_level():
    tree = Tree(["pkg/__init__.py", "pkg/a/__init__.py", "pkg/a/m.py", "pkg/a/n.py", "pkg/b.py", "pkg/c/x.py"])
    assert _rel(tree, "pkg/a/m.py", "n", 1) == "pkg/a/n.py"
    assert _rel(tree, "pkg/a/m.py", "b", 2) == "pkg/b.py"
    assert _rel(tree, "pkg/a/m.py", "", 2) == "pkg/__init__.py"  # from .. import b: the package, then its member
    assert _rel(tree, "pkg/a/__init__.py", "m", 1) == "pkg/a/m.py"  # an __init__'s level 1 is its own package
    assert _rel(tree, "pkg/a/m.py", "c.x", 2) == "pkg/c/x.py"
    assert _rel(tree, "pkg/a/m.py", "x", 5) is None  # beyond the top


def _call(src: str) -> ast.Call:
    return ast.parse(src).body[-1].value


@pytest.mark.parametrize("src, want", [
    ("sys.path.insert(0, '..')", ("front", "proj")),
    ("sys.path.append('../lib')", ("back", "proj/lib")),
    ("sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))", ("front", "proj")),
    ("sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'third_party'))", ("front", "proj/third_party")),
    ("sys.path.append(os.path.dirname(__file__) + '/..')", ("back", "proj")),
    ("sys.path.insert(0, str(Path(__file__).resolve().parents[1]))", ("front", "proj")),
    ("sys.path.insert(0, str(Path(__file__).parent.parent / 'lib'))", ("front", "proj/lib")),
    ("sys.path.insert(1, 'vendored')", ("back", "proj/tools/vendored")),
])
def test_sys_path_literals(src, want):
    assert path_entry(_call(src), "proj/tools/train.py") == want


@pytest.mark.parametrize("src", [
    "sys.path.insert(0, os.environ['ROOT'])",  # not evaluable
    "sys.path.append('/opt/lib')",  # outside the tree
    "sys.path.append('../../..')",  # above the scan root
    "paths.append('..')",  # not sys.path
    "sys.path.insert(0, root)",
])
def test_sys_path_not_evaluable(src):
    assert path_entry(_call(src), "proj/tools/train.py") is None


def test_sys_path_insert_changes_resolution():
    tree = Tree(["proj/tools/train.py", "proj/tools/utils.py", "proj/utils.py", "proj/lib/helpers.py"])
    assert _rel(tree, "proj/tools/train.py", "utils") == "proj/tools/utils.py"
    front = [("front", "proj", 3)]
    got = resolve(tree, "proj/tools/train.py", "utils", 0, front)
    assert got.rel == "proj/utils.py" and got.why == "`sys.path.insert` at line 3 of proj/tools/train.py"
    assert _rel(tree, "proj/tools/train.py", "helpers") is None
    assert _rel(tree, "proj/tools/train.py", "helpers", 0, [("back", "proj/lib", 4)]) == "proj/lib/helpers.py"


def test_resolver_memoises_per_folder_and_keeps_entries_apart():
    r = Resolver(MONOREPO + ["imagenet/other.py"], {"imagenet/other.py": [("front", "", 2)]})
    assert r.resolve("imagenet/main.py", "utils").rel == "imagenet/utils.py"
    assert r.resolve("imagenet/other.py", "utils").rel == "utils.py"  # its own insert puts the root first
    assert r.resolve("imagenet/main.py", "utils").rel == "imagenet/utils.py"
    assert r.resolve("distributed/FSDP/utils/train_utils.py", "", 1).rel == "distributed/FSDP/utils/__init__.py"


def test_windows_separators_and_non_python_files():
    tree = Tree(["a\\b.py", "a\\README.md"])
    assert tree.files == frozenset({"a/b.py"})
    assert find(tree, "b", [("a", "x")]).rel == "a/b.py"


def test_absolute_paths_as_given_on_the_command_line():
    """``ascendify scan /abs/examples`` gives absolute paths: the same rules, no endless walk up."""
    files = ["/x/examples/" + f for f in MONOREPO]
    tree = Tree(files)
    assert _rel(tree, "/x/examples/imagenet/main.py", "utils") == "/x/examples/imagenet/utils.py"
    assert _rel(tree, "/x/examples/mnist/main.py", "utils") == "/x/examples/utils.py"
    assert path_entry(_call("sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))"), "/x/examples/mnist/main.py") == ("front", "/x/examples")


def test_sys_path_through_module_level_names():
    """yolov5: FILE = Path(__file__).resolve(); ROOT = FILE.parents[3]; sys.path.append(str(ROOT))."""
    from ascendify.scan.context import FileContext
    from ascendify.semantic.imports import name_lookup

    src = (
        "import sys\nfrom pathlib import Path\n"
        "FILE = Path(__file__).resolve()\nROOT = FILE.parents[3]\n"
        "if str(ROOT) not in sys.path:\n    sys.path.append(str(ROOT))\n"
        "ROOT = Path('elsewhere')\n"
    )
    ctx = FileContext(ast.parse(src), src)
    call = [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "append"][0]
    assert path_entry(call, "yolo/utils/loggers/comet/hpo.py", name_lookup(ctx.bindings, call.lineno)) == ("back", "yolo")
    assert path_entry(call, "yolo/utils/loggers/comet/hpo.py") is None  # without the lookup: not evaluable
