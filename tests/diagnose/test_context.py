"""Chip and version awareness: what the log shows (socVersion, npu-smi, pip list, banners) or --chip /
--torch-npu, reported in JSON `context` and used in the fix text (bf16 per chip from the chips KB, the
torch_npu for a CANN release from the version KB)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ascendify.cli import cli
from ascendify.diagnose.context import Context
from ascendify.diagnose.engine import diagnose
from ascendify.errors import AscendifyError
from ascendify.kb import versions

NPU_SMI = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 24.1.rc2                 Version: 24.1.rc2                                             |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B3               | OK            | 93.4        41                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3161 / 65536         |
+===========================+===============+====================================================+
"""
NAN = "\n".join(f'{{"step": {s}, "loss": {"NaN" if s > 5 else 2.0}, "grad_norm": 1.0}}' for s in range(1, 9)) + "\n"


def _json(args, text):
    r = CliRunner().invoke(cli, ["diagnose", "--format", "json", *args, "-"], input=text, standalone_mode=False)
    assert r.exception is None, r.output
    return json.loads(r.output)


def test_chip_from_npu_smi_and_bf16_advice():
    doc = _json([], NPU_SMI + NAN)
    chip = doc["context"]["chip"]
    assert chip["value"] == "Ascend910B3" and chip["from"] == "log" and chip["line"] == 7 and chip["bf16"] is True
    f = doc["findings"][0]
    assert f["id"] == "metric-loss-nonfinite"
    assert "Ascend910B3" in f["fix"] and "supports bf16" in f["fix"]


def test_chip_option_910a_says_no_bf16():
    doc = _json(["--chip", "Ascend910A"], NAN)
    assert doc["context"]["chip"] == {"value": "Ascend910A", "from": "option", "family": "910", "bf16": False}
    assert "has no bf16 support" in doc["findings"][0]["fix"] and "float16" in doc["findings"][0]["fix"]


def test_chip_option_overrides_the_log():
    doc = _json(["--chip", "910A"], "socVersion=Ascend910B2\n" + NAN)
    assert doc["context"]["chip"]["from"] == "option" and doc["context"]["chip"]["bf16"] is False


def test_unknown_chip_is_a_usage_error():
    with pytest.raises(AscendifyError, match="--chip Ascend123: unknown chip"):
        diagnose(("-",), chip="Ascend123")


@pytest.mark.parametrize("line,key,value", [
    ("[INFO] ASCENDCL(1,python3):2026-05-01-10:00:00.000.000 [a.cc:1] soc_version: Ascend910B4", "chip", "Ascend910B4"),
    ("socVersion=Ascend310P3", "chip", "Ascend310P3"),
    ("torch-npu            2.1.0.post3", "torch_npu", "2.1.0.post3"),
    ("Torch-npu version: 2.4.0", "torch_npu", "2.4.0"),
    ("pip install torch_npu==2.6.0rc1", "torch_npu", "2.6.0rc1"),
    ("PyTorch version: 2.4.0+cpu", "torch", "2.4.0+cpu"),
    ("torch==2.1.0", "torch", "2.1.0"),
    ("CANN version: 8.0.RC2", "cann", "8.0.RC2"),
    ("export LD_LIBRARY_PATH=/usr/local/Ascend/ascend-toolkit/8.0.RC1/lib64:$LD_LIBRARY_PATH", "cann", "8.0.RC1"),
    ("./Ascend-cann-toolkit_8.1.RC1_linux-aarch64.run --install", "cann", "8.1.RC1"),
])
def test_detection(line, key, value):
    c = Context()
    c.feed(line, "x.log", 3)
    assert c.values[key]["value"] == value and c.values[key]["line"] == 3


def test_no_false_versions():
    c = Context()
    for line in ("import torch", "torchvision 0.16.0", "torch_npu.npu.set_device(0)", "Ascend is great", "step 3 torch time 2.5 s"):
        c.feed(line, "x", 1)
    assert "torch_npu" not in c.values and "chip" not in c.values
    assert c.values.get("torch", {}).get("value") in (None,)


def test_cann_version_names_its_torch_npu_and_mismatch_is_reported():
    rows = versions.releases_matching(cann="8.0.RC3")
    assert rows  # the version KB has the release
    text = ("Torch-npu version: 2.5.1\nPyTorch version: 2.5.1\nCANN version: 8.0.RC3\n"
            "ImportError: /opt/venv/lib/python3.10/site-packages/torch_npu/lib/libtorch_npu.so: undefined symbol: aclnnFooBar\n")
    doc = _json([], text)
    assert {k: v["value"] for k, v in doc["context"].items()} == {"torch_npu": "2.5.1", "torch": "2.5.1", "cann": "8.0.RC3"}
    root = doc["findings"][0]
    assert f"For CANN 8.0.RC3 the compatibility table lists torch_npu {rows[0].torch_npu}" in root["fix"]
    mismatch = next(f for f in doc["findings"] if f["id"] == "stack-version-mismatch")
    needed = versions.lookup_torch_npu("2.5.1").release.cann
    assert f"torch_npu 2.5.1 is made for CANN {needed}, the log shows CANN 8.0.RC3" in mismatch["cause"]
    assert [e["line"] for e in mismatch["evidence"]] == [1, 3, 2]


def test_torch_npu_option():
    doc = _json(["--torch-npu", "2.5.1"], "CANN version: 8.0.RC3\nImportError: libtorch_npu.so: undefined symbol: aclnnX\n")
    assert doc["context"]["torch_npu"] == {"value": "2.5.1", "from": "option"}
    assert any(f["id"] == "stack-version-mismatch" for f in doc["findings"])


def test_text_report_shows_context():
    r = CliRunner().invoke(cli, ["diagnose", "--chip", "Ascend910B3", "-"], input=NAN, standalone_mode=False)
    assert "Context: chip Ascend910B3 (--chip)." in r.output


def test_op_finding_names_the_ops_lookup_for_the_chip_and_release():
    line = ("CAUTION: The operator 'aten::unique_consecutive' is not currently supported on the NPU backend and will fall "
            "back to run on the CPU. This may have performance implications.\n")
    doc = _json(["--chip", "Ascend310P3", "--torch-npu", "2.1.0.post3"], line)
    f = next(x for x in doc["findings"] if x["key"] == "aten::unique_consecutive")
    assert "`ascendify ops aten::unique_consecutive --chip Ascend310P3 --torch-npu 2.1.0.post3`" in f["fix"]
    doc = _json([], line)  # nothing known: no context sentence
    f = next(x for x in doc["findings"] if x["key"] == "aten::unique_consecutive")
    assert "context_advice" not in f["details"]


@pytest.mark.parametrize("chip,family,bf16", [("910B", "910B", True), ("a2", "910B", True), ("910A", "910", False),
                                              ("Ascend910B3", "910B", True), ("Ascend910B", "910", False)])
def test_chip_option_family_spellings(chip, family, bf16):
    # `--chip 910B` means the Atlas A2 family; the digit-less soc_version Ascend910B is the first generation
    doc = _json(["--chip", chip], NAN)
    assert (doc["context"]["chip"]["family"], doc["context"]["chip"]["bf16"]) == (family, bf16)
