"""Text reports fit the terminal (issue 22): at 80 columns compare, probe and ops print no line
wider than the terminal, no number or verdict cut or folded inside a narrow column, and ops
summarises long documentation text (--verbose prints all of it)."""

from __future__ import annotations

import re

import pytest

from tests.cli_util import run_cli
from tests.test_cli_faults import SDPA_MODEL  # the same one-op model

WIDTH = 80


@pytest.fixture
def narrow(monkeypatch):
    monkeypatch.setenv("COLUMNS", str(WIDTH))


def _fits(text: str) -> list[str]:
    lines = text.splitlines()
    wide = [ln for ln in lines if len(ln) > WIDTH]
    assert not wide, wide[:3]
    return lines


def test_compare_at_80_columns_keeps_numbers_and_verdict(narrow, tmp_path):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    arrs = {f"sample_{i}/logits_output_with_a_long_name": rng.standard_normal((2, 10)).astype(np.float32) for i in range(3)}
    np.savez(tmp_path / "base.npz", **arrs)
    cand = {k: v + np.float32(1e-7) * (i + 1) for i, (k, v) in enumerate(arrs.items())}
    np.savez(tmp_path / "cand.npz", **cand)
    r = run_cli("compare", str(tmp_path / "base.npz"), str(tmp_path / "cand.npz"), "--per-sample")
    assert r.code == 0, r.err
    lines = _fits(r.out)
    text = "\n".join(lines)
    assert "…" not in text and "PASS" in text
    assert "logits_output_with_a_long_name" in text  # the name whole, on one line
    assert re.search(r"\bcosine\s+1\b", text)  # the cosine value whole (any bare "1" matched before)


def test_probe_at_80_columns_one_line_per_op(narrow, tmp_path, monkeypatch):
    import sys

    pytest.importorskip("torch")
    (tmp_path / "sdpa_w.py").write_text(SDPA_MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("sdpa_w", None)
    r = run_cli("probe", "sdpa_w:factory", "--input", "q:1,2,8,16:float32", "--all-ops", cwd=str(tmp_path))
    lines = _fits(r.out)
    assert any(ln.strip().startswith("_scaled_dot_product_flash_attention_for_cpu") for ln in lines), r.out
    assert not any("│" in ln and ln.count("│") > 1 and ln.split("│")[1].strip() == "" for ln in lines), "a row wrapped"


def test_ops_at_80_columns_is_short_and_verbose_shows_all(narrow):
    r = run_cli("ops", "F.scaled_dot_product_attention")
    lines = _fits(r.out)
    assert len(lines) < 80, len(lines)
    assert "--verbose" in r.out
    full = run_cli("ops", "F.scaled_dot_product_attention", "--verbose")
    _fits(full.out)
    assert len(full.out) > len(r.out) + 500
    assert "use_compatible_impl" in full.out and "use_compatible_impl" not in r.out


def test_profile_at_80_columns_fits(narrow):
    # the top-ops table was 94 columns wide (fixed 34/16-character name columns) and prose lines ran to 100+
    r = run_cli("profile", "examples/profile_sample")
    assert r.code == 0, r.err
    wide = [ln for ln in r.out.splitlines() if len(ln) > WIDTH and " " in ln.strip()]  # an unbreakable path may stay
    assert not wide, wide[:3]
    assert re.search(r"^  MatMulV2 +AI_CORE +50 +14\.115 +0\.282 +56\.5%$", r.out, re.M)


def _cells(line: str) -> int:
    import unicodedata
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_list_layout_counts_terminal_cells_and_indents_every_continuation(narrow):
    # ops' API note is Chinese documentation text: two cells a character and no spaces; wrapped by
    # characters it overflowed the line and the terminal continued it at column 0
    r = run_cli("ops", "F.scaled_dot_product_attention")
    lines = r.out.splitlines()
    assert not [ln for ln in lines if _cells(ln) > WIDTH], [ln for ln in lines if _cells(ln) > WIDTH][:2]
    at = next(i for i, ln in enumerate(lines) if ln.startswith("torch.nn.functional.scaled_dot_product_attention — "))
    block = []
    for ln in lines[at + 1:]:
        if not ln.startswith(" "):
            break
        block.append(ln)
    assert any("仅支持" in ln for ln in block), (lines[at], block)  # the note stays in its row, indented


def test_wrap_by_cells():
    from ascendify.termtable import wrap
    out = wrap("note " + "约束" * 30 + " end", 20, subsequent="    ")
    assert all(_cells(ln) <= 20 for ln in out) and all(ln.startswith("    ") for ln in out[1:]), out
    assert "".join(out).replace(" ", "").replace("note", "").replace("end", "") == "约束" * 30
    assert wrap("a  b\nc", 80) == ["a b c"] and wrap("", 10, "  ") == ["  "]
    assert wrap("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]


HEADINGS = ("Risks", "Replacement", "Sources", "NPU dispatch per release", "Native API support list", "API → aten:",
            "torch_npu custom op registrations", "note:", "warning:", "unknown:")


@pytest.mark.parametrize("query", ["F.scaled_dot_product_attention", "torch.bmm", "no_such_op_xyz"])
def test_ops_continuation_lines_are_indented(narrow, query):
    # a wrapped bullet, source or heading line goes on indented, not at column 0 (the terminal's own
    # wrap put "2.12.0): verified dtypes ..." and "falling back to CPU ..." at the left edge)
    r = run_cli("ops", query)
    lines = r.out.splitlines()
    assert not [ln for ln in lines if _cells(ln) > WIDTH]
    col0 = [ln for ln in lines[1:] if ln and not ln.startswith(" ")]
    odd = [ln for ln in col0 if " — " not in ln and not ln.startswith(HEADINGS)]
    assert not odd, odd


def test_compare_verdict_line_wraps_indented(narrow, tmp_path):
    np = pytest.importorskip("numpy")
    x = np.arange(12, dtype=np.float32)
    for side in ("b", "c"):
        (tmp_path / side).mkdir()
        np.save(tmp_path / side / "out.npy", x)
    r = run_cli("compare", str(tmp_path / "b"), str(tmp_path / "c"))
    lines = _fits(r.out)
    at = next(i for i, ln in enumerate(lines) if ln.startswith("PASS: 1 tensor pairs"))
    rest = lines[at + 1:]
    assert rest and all(ln.startswith("    ") for ln in rest), lines[at:]  # the thresholds go on indented
    assert "rel_euclid <= 0.05" in " ".join(" ".join(lines[at:]).split())


def test_probe_heading_source_and_verdict_wrap_indented(narrow, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    (tmp_path / "sdpa.py").write_text(SDPA_MODEL)
    monkeypatch.chdir(tmp_path)
    r = run_cli("probe", "sdpa.py:factory", "--input", "q:2,4,16,8:float32")
    lines = _fits(r.out)
    col0 = [ln for ln in lines if ln and not ln.startswith(" ")]
    # every line at column 0 starts something: the head, inputs, counts, a heading, a row, source, verdict
    starts = ("ascendify probe", "inputs:", "1 distinct aten", "Findings", "source:", "VERDICT:", "warning:")
    assert all(ln.startswith(starts) or " — " in ln for ln in col0), col0


EXAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "examples" / "cuda_project"


def _prose_fits(text: str, keep_whole: tuple = ()) -> list[str]:
    """No line wider than the terminal except a lone URL or a command kept whole to copy."""
    lines = text.splitlines()
    wide = [ln for ln in lines if len(ln) > WIDTH and not ln.startswith(keep_whole)
            and len(ln) - max(len(t) for t in ln.split()) > 20]  # else only a whole path or URL makes it wide
    assert not wide, wide[:3]
    return lines


def test_fit_at_80_columns_wraps_notes_and_keeps_sizes_and_sources_whole(narrow):
    """The trial: fit's notes, the at-the-peak split, the chip line and the chart legend ran past 80 columns."""
    pytest.importorskip("torch")
    r = run_cli("fit", "trainer.models.vit:vit_tiny", "--input", "x:64,3,32,32:float32", "--chip", "Ascend910B3",
                cwd=str(EXAMPLE))
    assert r.code == 0, r.err
    lines = _prose_fits(r.out)
    text = "\n".join(lines)
    assert re.search(r"optimizer states \d+(\.\d+)? KiB", text)  # a size is never split from its unit
    assert "https://github.com/vllm-project/vllm-ascend/issues/1903" in lines[lines.index(next(
        ln for ln in lines if ln.startswith("  source: "))) + 1]  # one source a line, whole
    ruler = next(i for i, ln in enumerate(lines) if ln.startswith("  " * 7) and set(ln.strip()) <= set("FBOz?"))
    assert lines[ruler + 1] == "              F forward, B backward, O optimizer, z zero_grad"  # under the ruler
    note = next(i for i, ln in enumerate(lines) if ln.startswith("note: sizes are tensor storage bytes"))
    assert lines[note + 1].startswith("  ") and not lines[note + 1].startswith("   ")  # wrapped, hanging by two


def test_export_at_80_columns_wraps_notes_and_keeps_the_atc_command_one_line(narrow, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    onnx_path = tmp_path / "rt.onnx"
    r = run_cli("export", "trainer.models:resnet_tiny", "--input", "x:1,3,32,32:float32", "--onnx", str(onnx_path),
                cwd=str(EXAMPLE))
    assert r.code == 0, r.err
    lines = _prose_fits(r.out, keep_whole=("atc ",))
    atc = [ln for ln in lines if ln.startswith("atc ")]
    assert len(atc) == 1 and atc[0].rstrip().endswith("--output_type=FP32")  # one line, to copy
    assert sum(ln.startswith("note: ") for ln in lines) >= 3
    assert any("PASS (>= 0.9999)" in ln for ln in lines)
