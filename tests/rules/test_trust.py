"""Findings people trust (issue 13, part 6): messages say only what the code and the KB show.

Each point has a positive case (the finding, with the wording the code supports) and a
negative one (the wording or finding that would mislead is absent).
"""

from __future__ import annotations

import re
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


# ------------------------------------------------------------------ OPS003: device-independent compiler housekeeping
def test_compiler_housekeeping_is_not_unsupported(tmp_path):
    path = _write(tmp_path, """
        import torch

        torch.compiler.reset()
        torch.compiler.disable(lambda x: x)
        print(torch.compiler.list_backends(), torch.compiler.is_compiling())

        @torch.compiler.allow_in_graph
        def f(x):
            return x
    """)
    for release in ("2.7.1", "2.13.0"):
        assert findings_for(path, "OPS003", torch_npu=release) == [], release


def test_unsupported_api_still_reported(tmp_path):
    from ascendify.kb import apis

    # the same list marks these unsupported; they do device work, so they stay reported
    notes = apis._notes()["apis"]
    assert notes["torch.compiler.reset"]["2.7.1"][0] == 0  # the list's "unsupported" that is not reported
    path = _write(tmp_path, """
        import torch

        x = torch.sparse_csr_tensor(torch.tensor([0, 1]), torch.tensor([0]), torch.tensor([1.0]))
    """)
    fs = findings_for(path, "OPS003", torch_npu="2.7.1")
    assert [f.line for f in fs] == [4]
    assert "torch.sparse_csr_tensor" in fs[0].message


def test_device_independent_table_cites_pytorch_docs():
    from ascendify.rules.checks.operators import device_independent_apis

    table = device_independent_apis()
    assert {"torch.compiler.reset", "torch.compiler.disable", "torch.compiler.is_compiling"} <= set(table)
    assert "torch.compiler.cudagraph_mark_step_begin" not in table  # CUDA graph trees: device work
    assert all(e["source"].startswith("https://") and "pytorch.org" in e["source"] for e in table.values())


# ------------------------------------------------------------------ OPS: messages agree with the op KB
OPS_FIXTURE = """
import torch

a = torch.randn(2, 3, 4)
b = torch.bmm(a, a.transpose(1, 2))
c = a.bmm(a.transpose(1, 2))
d = torch.acosh(a)
e = torch.std(a)
f = torch.polygamma(1, a)
g = torch.cholesky(a[0] @ a[0].T)
h = torch.sparse_csr_tensor(torch.tensor([0, 1]), torch.tensor([0]), torch.tensor([1.0]))
"""


def _ops_findings(paths, release):
    from ascendify.config import Settings
    from ascendify.scan.engine import discover, scan_files

    s = Settings(select=["OPS"], torch_npu=release).validate()
    return [f for f in scan_files(discover(paths, s, lambda *a: None), s, jobs=1).findings if f.code.startswith("OPS")]


def _kb_class(release, api):
    from ascendify.kb import apis, ops

    return ops.load_release(release).ops.get(apis.name_based_aten(api), ("unknown",))[0]


def _api(message):
    return message.split("`")[1].split("(")[0].replace("F.", "torch.nn.functional.")


def test_ops_fallback_claims_agree_with_the_kb(tmp_path):
    import os
    import re

    from ascendify.rules.checks.operators import _release

    path = _write(tmp_path, OPS_FIXTURE)
    example = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "cuda_project")
    checked = 0
    for version in ("2.7.1", "2.12.0"):
        release = _release(version)
        fs = _ops_findings((path, example), version)
        assert {"OPS001", "OPS002", "OPS003", "OPS004"} <= {f.code for f in fs}, version
        for f in fs:
            api = _api(f.message)
            cls = _kb_class(release, api)
            m = f.message
            if f.code == "OPS001":  # names the aten ops the KB lists as CPU fallbacks, for this release
                for op in re.findall(r"aten::(\w+)", m):
                    assert ops_class(release, op) == "cpu_fallback", (m, op)
            if "registers an NPU" in m:
                named = re.search(r"registers an NPU (?:kernel for aten::(\w+)|(\w+) kernel)", m)
                assert ops_class(release, named.group(1) or named.group(2)) == "npu_kernel", m
            if re.search(r"fall(?:s|ing)? back|runs (?:it )?on the CPU", m):
                # a fallback claim is the KB's (OPS001 / no kernel), or attributed to the docs list,
                # and then says when the KB registers a kernel after all
                if f.code == "OPS002":
                    assert "native-API list" in m
                    assert (cls == "npu_kernel") == ("sources disagree" in m), m
                else:
                    assert f.code == "OPS001" or cls == "cpu_fallback", m
            checked += 1
    assert checked >= 10


def ops_class(release, op):
    from ascendify.kb import ops

    return ops.load_release(release).ops.get(op, ("unknown",))[0]


def test_bmm_message_never_says_cpu_fallback_with_a_kernel():
    from ascendify.rules.checks.operators import _release, bmm_claim

    for version in ("2.1.0", "2.7.1", "2.12.0", "2.13.0"):
        release = _release(version)
        claim = bmm_claim(release)
        if ops_class(release, "bmm") == "npu_kernel":
            assert "registers an NPU bmm kernel" in claim and "CPU" not in claim, claim
        else:
            assert "registers" not in claim, claim


def test_doc_fallback_with_a_registered_kernel_says_sources_disagree(tmp_path):
    path = _write(tmp_path, "import torch\nx = torch.acosh(torch.randn(3))\n")
    from ascendify.rules.checks.operators import _release

    (f,) = findings_for(path, "OPS002", torch_npu="2.7.1")
    assert ops_class(_release("2.7.1"), "acosh") == "npu_kernel"
    assert f"sources disagree: torch_npu {_release('2.7.1')} registers an NPU kernel for aten::acosh" in f.message


# ------------------------------------------------------------------ DTY005: no chip, one note per project
BF16_A = """
import torch

model = torch.nn.Linear(8, 8).bfloat16()
x = torch.zeros(2, dtype=torch.bfloat16)
"""
BF16_B = """
import torch

with torch.autocast("npu", dtype=torch.bfloat16):
    pass
"""


def _scan_tree(tmp_path, **kw):
    from ascendify.config import Settings
    from ascendify.scan.engine import discover, scan_files

    (tmp_path / "a.py").write_text(BF16_A, encoding="utf-8")
    (tmp_path / "b.py").write_text(BF16_B, encoding="utf-8")
    s = Settings(select=["DTY005"], **kw).validate()
    return [f for f in scan_files(discover((str(tmp_path),), s, lambda *a: None), s, jobs=1).findings if f.code == "DTY005"]


def test_bf16_without_chip_is_one_note_per_project(tmp_path):
    fs = _scan_tree(tmp_path)
    assert len(fs) == 1
    (f,) = fs
    assert (f.path.endswith("a.py"), f.line, f.severity) == (True, 4, "info")
    assert "2 more bf16 uses in 2 files of this project, not listed" in f.message
    assert "set `--chip SOC`" in f.message
    # a chip with bf16, or one whose support is unconfirmed: still no finding per use
    assert _scan_tree(tmp_path, chip="Ascend910B3") == []
    assert len(_scan_tree(tmp_path, chip="Ascend310B1")) == 1


def test_bf16_with_a_chip_without_bf16_reports_every_use(tmp_path):
    fs = _scan_tree(tmp_path, chip="Ascend910A")
    assert [(f.path[-4:], f.line) for f in fs] == [("a.py", 4), ("a.py", 5), ("b.py", 4)]
    assert all(f.severity == "warning" and "has no bf16 support" in f.message and "more bf16 uses" not in f.message for f in fs)


# ------------------------------------------------------------------ --target agnostic messages name the agnostic API
AGNOSTIC_FIXTURE = """
import torch

model = torch.nn.Linear(2, 2).cuda()
torch.cuda.manual_seed_all(0)
torch.cuda.synchronize()
torch.cuda.empty_cache()
x = torch.zeros(2, device="cuda")
"""


def test_agnostic_target_messages_name_the_agnostic_api(tmp_path):
    path = _write(tmp_path, AGNOSTIC_FIXTURE)
    got = {}
    for code in ("DEV001", "DEV011", "DEV008", "DEV010", "DEV004"):
        (f,) = findings_for(path, code, target="agnostic")
        got[code] = f.message
    assert "`.to(DEVICE_TYPE)`" in got["DEV001"]
    assert "device-agnostic: `torch.manual_seed`" in got["DEV011"]
    assert "device-agnostic: `torch.accelerator.synchronize`" in got["DEV008"]
    assert "`torch.get_device_module(DEVICE_TYPE).empty_cache` when an accelerator is present" in got["DEV010"]
    assert "`device=DEVICE_TYPE`" in got["DEV004"]
    for m in got.values():
        assert "on Ascend use" not in m and "torch.npu." not in m and '"npu"' not in m, m


def test_npu_target_messages_keep_the_npu_api(tmp_path):
    path = _write(tmp_path, AGNOSTIC_FIXTURE)
    (f,) = findings_for(path, "DEV011")
    assert f.message.endswith("on Ascend use `torch.npu.manual_seed_all`")
    (f,) = findings_for(path, "DEV001")
    assert "device-agnostic" not in f.message and "`.npu()`" in f.message


def test_every_agnostic_message_template_formats_like_the_npu_one():
    import string

    from ascendify.rules.registry import load_rules

    for r in load_rules().values():
        if not r.message_agnostic:
            continue
        fields = {n for _, n, _, _ in string.Formatter().parse(r.message_agnostic) if n}
        npu_fields = {n for _, n, _, _ in string.Formatter().parse(r.message) if n}
        assert fields <= npu_fields | {"agnostic"}, r.code
        assert "on Ascend use" not in r.message_agnostic, r.code


# ------------------------------------------------------------------ rule pages cite public pages
NOTES = re.compile(r"(?:migration-tools|op-support-and-versions|accuracy-profiling-atc)\.md|seeds/|native_api_docs|third_party_rules")


def _sources():
    """Every `source` in the rule data: the rules' and the per-entry tables' (env vars, allocator options, libraries)."""
    import glob
    import os
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    from ascendify.rules.registry import load_rules

    out = [(r.code, r.source, r.verified, r.source) for r in load_rules().values()]
    data = os.path.join(os.path.dirname(__import__("ascendify.rules", fromlist=["x"]).__file__), "data")
    for path in glob.glob(os.path.join(data, "*.toml")):
        doc = tomllib.loads(open(path, encoding="utf-8").read())
        for key, val in doc.items():
            for i, ent in enumerate(val if isinstance(val, list) else [val] if isinstance(val, dict) else []):
                if isinstance(ent, dict) and "source" in ent and key != "rule":
                    out.append((f"{os.path.basename(path)}:{key}[{i}]", ent["source"], ent.get("verified", True), ent["source"]))
    return out


def _cites_public_page(src: str, verified: bool) -> bool:
    return not verified or bool(re.search(r"https?://\S+", src)) or "not an NPU fact" in src or "none found" in src


def test_every_verified_rule_source_has_a_public_url():
    assert [code for code, src, verified, _ in _sources() if not _cites_public_page(src, verified)] == []
    # the check itself: a note-only source of a verified rule fails, an unverified one may lack a URL
    assert not _cites_public_page("migration-tools.md §3.3 (transfer_to_npu ...)", True)
    assert _cites_public_page("field guide only", False)
    assert not NOTES.search(re.sub(r"\[see also [^\]]*\]", "", "https://x.org/a [see also migration-tools.md §3.3]"))
    assert NOTES.search("accuracy-profiling-atc.md §5.5 (HCCL_SOCKET_IFNAME)")


def test_research_notes_are_only_a_see_also():
    for code, src, _v, _ in _sources():
        rest = re.sub(r"\[see also [^\]]*\]", "", src)
        assert not NOTES.search(rest), (code, NOTES.search(rest).group(0), rest[:200])



def test_model_context_import_guard_ignores_reraising_handlers():
    import ast

    from ascendify.config import Settings
    from ascendify.scan.engine import RuleContext, _walk
    from ascendify.scan.source import SourceFile

    src = textwrap.dedent("""
        try:
            import apex
        except ImportError:
            apex = None
        try:
            import xformers
        except ImportError as e:
            raise RuntimeError("xformers is required") from e
    """)
    tree = ast.parse(src)
    ctx = RuleContext(tree, SourceFile(path="c.py", text=src, raw=src.encode()), "c.py", Settings().validate(), {})
    _walk(tree, {}, ctx, {})
    imports = {n.names[0].name: n for n in ast.walk(tree) if isinstance(n, ast.Import)}
    assert ctx.model.context(imports["apex"]).import_guarded
    assert not ctx.model.context(imports["xformers"]).import_guarded


def test_rule_pages_show_no_research_notes():
    from ascendify.rules.registry import load_rules

    for code, r in load_rules().items():
        assert "[see also" not in r.source and not NOTES.search(r.source), (code, r.source[:200])
    r = load_rules()["AMP001"]
    assert r.provenance  # the notes stay in the data for maintainers
