"""The diagnose catalogue (src/ascendify/diagnose/data/**): counts, sources,
examples and the loader's validation.  Every entry carries `example` log lines
written in the shape of real logs (names, pids, paths made up); each must make
its entry the first hit of the line and the top finding of `diagnose`."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from collections import Counter

import pytest

from ascendify.diagnose.signatures import Matcher, data_files, load, merge, parse

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KB = load()
M = Matcher(KB)
URL = re.compile(r"https?://\S+")


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "tools", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _docs() -> list:
    return [(name, tomllib.loads(text)) for name, text in data_files()]


def test_counts_per_family():
    fam = Counter(s.family for s in KB.signatures)
    assert len(KB.signatures) >= 150
    assert fam["cann-code"] >= 500  # hicann/runtime error_code.json + GE error_registry + xx9999
    assert fam["acl-code"] >= 240  # runtime / GE headers + aclnn codes
    assert fam["torch-npu-code"] == 75  # 5 submodules x 15 ErrCode values (SUC excluded)
    assert fam["python"] >= 6 and fam["environment"] >= 8 and fam["hccl"] >= 8 and fam["frameworks"] >= 3
    files = Counter(s.origin for s in KB.signatures)
    assert files["signatures.toml"] == 25
    assert {"catalogue/acl_codes.toml", "catalogue/cann_module_codes.toml", "catalogue/torch_npu_codes.toml",
            "catalogue/python_messages.toml", "catalogue/environment.toml"} <= set(files)


def test_every_entry_has_a_public_source_or_a_reason():
    for s in KB.signatures:
        assert URL.search(s.source) or (not s.verified and s.reason), s.id
        if not s.verified:
            assert s.reason, s.id


def test_headline_migration_error_is_catalogued():
    line = ("RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
            "lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: npu:0")
    lm = M.match_line(line)
    assert lm.signatures[0][0].id == "device-string-npu"
    assert "import torch_npu" in lm.signatures[0][0].fix


EXAMPLES = [(s.id, ex) for s in KB.signatures for ex in s.examples]


def test_every_entry_has_an_example_and_no_two_entries_share_one():
    missing = [s.id for s in KB.signatures if not s.examples]
    assert missing == []
    seen = Counter(ex for _, ex in EXAMPLES)
    assert [ex for ex, n in seen.items() if n > 1] == []


def test_each_example_triggers_its_entry_first():
    bad = []
    for sid, ex in EXAMPLES:
        if not KB.trigger.search(ex.encode("utf-8")):
            bad.append((sid, "trigger misses the line"))
            continue
        lm = M.match_line(ex)
        got = [s.id for s, _ in lm.signatures] if lm else []
        if not got or got[0] != sid:
            bad.append((sid, got[:3]))
    assert bad == []


def test_each_example_is_the_top_finding_of_diagnose(tmp_path):
    from ascendify.diagnose.engine import diagnose

    bad = []
    for i, (sid, ex) in enumerate(EXAMPLES):
        p = tmp_path / f"ex{i}.log"
        p.write_text(ex + "\n", encoding="utf-8")
        rep = diagnose((str(p),), kb=KB)
        top = rep.findings[0].id if rep.findings else None
        if top != sid:
            bad.append((sid, top))
    assert bad == []


def test_specific_entries_supersede_generic_ones():
    lm = M.match_line("ImportError: libascend_hal.so: cannot open shared object file: No such file or directory")
    assert [s.id for s, _ in lm.signatures] == ["driver-not-mounted"]
    lm = M.match_line("ImportError: /opt/py/site-packages/torch_npu/lib/libtorch_npu.so: undefined symbol: _ZN3c1010TensorImpl4sizeEv")
    assert [s.id for s, _ in lm.signatures] == ["torch-torch-npu-mismatch"]
    # an undefined symbol no specific entry knows stays with the generic signature
    lm = M.match_line("ImportError: /opt/x/libfoo.so: undefined symbol: foo_bar_baz")
    assert [s.id for s, _ in lm.signatures] == ["undefined-symbol"]
    # DT_DOUBLE inside a support list is not a float64 problem; bf16 on a chip without it is
    lm = M.match_line("EZ1001: [PID: 9] 2026-01-01-00:00:00.000.000 Tensor self not implemented for DT_BFLOAT16, should be in dtype support list [DT_FLOAT16,DT_DOUBLE].")
    assert [s.id for s, _ in lm.signatures] == ["dtype-bf16-not-implemented"]
    lm = M.match_line("RuntimeError: DT_DOUBLE is not supported by op Mul on this device")
    assert [s.id for s, _ in lm.signatures] == ["float64-unsupported"]


def test_code_entries_claim_their_code():
    lm = M.match_line("RuntimeError: SetDevice:torch_npu/csrc/core/npu/NPUFunctions.cpp:90 NPU function error: aclrtSetDevice, error code is 107002")
    assert [s.id for s, _ in lm.signatures] == ["acl-107002"] and lm.acl_codes == []
    lm = M.match_line("[ERROR] 2026-05-01-10:00:00 (PID:1, Device:0, RankID:0) ERR02200 DIST call hccl api failed")
    assert [s.id for s, _ in lm.signatures] == ["torch-npu-ERR02200"] and lm.err_codes == []
    lm = M.match_line("wait for compute device to finish failed, runtime result = 507013.")
    assert [s.id for s, _ in lm.signatures] == ["acl-507013"]
    # codes nobody catalogues still reach the generic finders
    lm = M.match_line("EZ4321: [PID: 1] 2026-01-01-00:00:00.000.000 something odd")
    assert lm.signatures == [] and lm.cann_codes == ["EZ4321"]


def test_generated_files_are_up_to_date():
    gen = _tool("diagnose_catalogue").generate()
    for name, text in gen.items():
        with open(os.path.join(ROOT, "src", "ascendify", "diagnose", "data", "catalogue", name), encoding="utf-8") as fh:
            assert fh.read() == text, f"{name} is stale: run python tools/diagnose_catalogue.py"


def test_docs_page_is_up_to_date():
    text = _tool("diagnose_docs").render(KB)
    with open(os.path.join(ROOT, "docs", "diagnose-catalogue.md"), encoding="utf-8") as fh:
        assert fh.read() == text, "docs/diagnose-catalogue.md is stale: run python tools/diagnose_docs.py"


def test_vendored_inputs_record_provenance():
    for name in ("cann_error_codes.json", "acl_error_codes.json", "torch_npu_error_codes.json", "aclnn_codes.json"):
        with open(os.path.join(ROOT, "tools", "diagnose_inputs", name), encoding="utf-8") as fh:
            doc = json.load(fh)
        assert doc["provenance"] and doc["codes"], name
        for p in doc["provenance"]:
            assert p["url"].startswith("https://") and p["licence"], name
            if "sha256" in p:
                assert re.fullmatch(r"[0-9a-f]{64}", p["sha256"]) and re.search(r"/blob/[0-9a-f]{40}/", p["url"]), name


# ------------------------------------------------------------------ loader validation

def _entry(**kw) -> dict:
    e = {"id": "x-test", "family": "python", "title": "t", "severity": "error", "role": "cause", "any": ["No module named 'zz'"],
         "cause": "c", "fix": "f", "next_step": "n", "source": "https://example.org/a"}
    e.update(kw)
    return e


def _with(extra: list) -> dict:
    return merge(_docs() + [("catalogue/zz_test.toml", {"signature": extra})])


def test_loader_reads_every_file_and_keeps_its_origin():
    names = [n for n, _ in data_files()]
    assert names[0] == "signatures.toml" and all(n.startswith("catalogue/") for n in names[1:])
    kb = parse(_with([_entry()]), strict=True)
    assert next(s for s in kb.signatures if s.id == "x-test").origin == "catalogue/zz_test.toml"


@pytest.mark.parametrize("extra,msg", [
    ([_entry(id="device-string-npu")], "duplicate signature id device-string-npu"),
    ([_entry(source="a forum post")], "no public URL"),
    ([_entry(source="notes", verified=False)], "no public URL"),
    ([_entry(any=[], on_code=["107002"])], "already claimed by acl-107002"),
    ([_entry(on_code=["E12"])], "not an E-code"),
    ([_entry(supersedes=["no-such-entry"])], "supersedes unknown"),
    ([_entry(any=["zebra crossing"])], "zebra crossing"),
    ([_entry(regex=r"(a+)+")], "nested quantifier"),
    ([_entry(any=[])], "missing any"),
])
def test_loader_rejects_bad_entries(extra, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        parse(_with(extra), strict=True)


def test_unverified_entry_with_reason_needs_no_url():
    kb = parse(_with([_entry(source="maintainer's word in a chat", verified=False, reason="no public page")]), strict=True)
    assert any(s.id == "x-test" and not s.verified for s in kb.signatures)


def test_benign_lines_match_nothing():
    for line in ("step 100 loss=0.2341 lr=1e-4 grad_norm 1.02", "INFO: device npu:0 ready, 8 visible devices",
                 "epoch 3 step 507015 done", "[rank0]: iteration 12 | consumed samples 96 | elapsed time per iteration (ms): 512.3",
                 "Setting ds_accelerator to npu (auto detect)"):
        assert M.match_line(line) is None, line


def test_list_text_fits_80_columns_with_sources_uncut(monkeypatch):
    """Issue 22's trial: ``diagnose --list`` printed 965 of 966 lines wider than an 80-column terminal.  Now only a
    source URL (on its own indented line, never cut) may be wider, and every entry still names its source."""
    from click.testing import CliRunner

    from ascendify.cli import cli

    monkeypatch.setenv("COLUMNS", "80")
    r = CliRunner().invoke(cli, ["diagnose", "--list"], standalone_mode=False)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert [l for l in lines if len(l) > 80 and not l.startswith("    <")] == []
    from ascendify.diagnose.signatures import catalogue_rows

    assert all(f"<{row['source'][0]}>" in r.output for row in catalogue_rows())
    assert "cpu-fallback cpu-fallback Operator falls back to the host CPU" in lines
    monkeypatch.setenv("COLUMNS", "400")  # wide enough: one line per entry, as before
    wide = CliRunner().invoke(cli, ["diagnose", "--list"], standalone_mode=False).output.splitlines()
    assert len([l for l in wide if l.startswith("    <")]) < len(KB.signatures) // 10


def test_list_option_text_and_json():
    from click.testing import CliRunner

    from ascendify.cli import cli

    r = CliRunner().invoke(cli, ["diagnose", "--list"], standalone_mode=False)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert any(l.startswith("device-string-npu ") for l in lines)
    assert "<https://github.com/opendatalab/MinerU/issues/2665>" in r.output
    assert any(l.startswith(f"{len(KB.signatures)} entries: cann-code ") for l in lines[-4:])
    r = CliRunner().invoke(cli, ["diagnose", "--list", "--format", "json"], standalone_mode=False)
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["command"] == "diagnose" and len(doc["catalogue"]) == len(KB.signatures)
    row = next(x for x in doc["catalogue"] if x["id"] == "acl-107002")
    assert row["family"] == "acl-code" and row["codes"] == ["107002"] and row["source"][0].startswith("https://github.com/hicann/runtime/")
    r = CliRunner().invoke(cli, ["diagnose"], standalone_mode=False)
    assert r.exit_code != 0  # no LOGS and no --list: usage error
