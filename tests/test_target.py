"""The target torch_npu release, decided once (ascendify.target): the option, the config, the
project's pinned torch, else the release `doctor` recommends; every report says which and why."""

from __future__ import annotations

import json

import pytest

from ascendify.kb.versions import recommended
from ascendify.target import Pin, find_pins, resolve, torch_npu_for_pin
from tests.cli_util import run_cli

SRC = "import torch\nx = torch.zeros(2).cuda()\n"
RECOMMENDED = recommended()["torch_npu"]


def _proj(tmp_path, files: dict):
    p = tmp_path / "proj"
    p.mkdir()
    (p / "train.py").write_text(SRC)
    for name, text in files.items():
        (p / name).parent.mkdir(parents=True, exist_ok=True)
        (p / name).write_text(text)
    return p


@pytest.mark.parametrize("name,text,want,why", [
    ("requirements.txt", "numpy>=1.20\ntorch==2.1.0\ntorchvision==0.16.0\n", "2.1.0", "requirements.txt: torch==2.1.0"),
    ("requirements.txt", "torch==2.1.0+cu118 ; python_version >= '3.8'  # CUDA build\n", "2.1.0", "torch==2.1.0"),
    ("requirements.txt", "-r requirements/base.txt\n", "2.3.1", "requirements/base.txt: torch~=2.3.0"),
    ("requirements-gpu.txt", "torch @ https://download.pytorch.org/whl/cu121/torch-2.4.0%2Bcu121-cp311-linux_x86_64.whl\n", "2.4.0", "torch==2.4.0"),
    ("constraints.txt", "torch>=2.5,<2.6\n", "2.5.1", "constraints.txt: torch>=2.5,<2.6"),
    ("pyproject.toml", "[project]\nname='x'\ndependencies=['torch==2.6.0', 'numpy']\n", "2.6.0", "pyproject.toml: torch==2.6.0"),
    ("pyproject.toml", "[tool.poetry.dependencies]\npython='^3.10'\ntorch='^2.1.0'\n", RECOMMENDED, "pyproject.toml: torch>=2.1.0,<3"),
    ("pyproject.toml", "[tool.poetry.dependencies]\ntorch='2.4.0'\n", "2.4.0", "torch==2.4.0"),
    ("setup.cfg", "[options]\ninstall_requires =\n    torch==2.1.0\n    numpy\n", "2.1.0", "setup.cfg: torch==2.1.0"),
    ("setup.py", "from setuptools import setup\nsetup(name='x', install_requires=['torch==2.3.1', 'tqdm'])\n", "2.3.1", "setup.py: torch==2.3.1"),
    ("environment.yml", "name: x\ndependencies:\n  - python=3.10\n  - pytorch=2.1\n  - pip\n", "2.1.0", "environment.yml: torch==2.1.*"),
    ("environment.yml", "dependencies:\n  - pip:\n    - torch==2.5.1\n", "2.5.1", "torch==2.5.1"),
    ("environment.yml", "dependencies:\n  - pytorch==2.1.0=py3.10_cuda11.8_cudnn8.7.0_0\n  - pytorch-cuda=11.8\n", "2.1.0", "torch==2.1.0"),
    ("environment.yml", "dependencies:\n  - python >= 3.8\n  - pytorch >= 1.13\n  - pytorch-cuda=11.7\n", RECOMMENDED, "torch>=1.13, a range"),
    ("Pipfile", "[packages]\ntorch = \"==2.4.0\"\n", "2.4.0", "Pipfile: torch==2.4.0"),
    ("poetry.lock", "[[package]]\nname = \"torch\"\nversion = \"2.6.0\"\n", "2.6.0", "poetry.lock: torch==2.6.0"),
    ("Pipfile.lock", json.dumps({"default": {"torch": {"version": "==2.1.0"}}}), "2.1.0", "Pipfile.lock: torch==2.1.0"),
])
def test_pins_in_every_kind_of_project_file(tmp_path, name, text, want, why):
    files = {name: text}
    if "requirements/base.txt" in text:
        files["requirements/base.txt"] = "torch~=2.3.0\n"
    p = _proj(tmp_path, files)
    t = resolve(project=str(p))
    assert (t.torch_npu, t.origin) == (want, "pin")
    assert why in t.reason


def test_torchvision_torch_npu_and_unversioned_torch_are_not_pins(tmp_path):
    p = _proj(tmp_path, {"requirements.txt": "torchvision==0.16.0\ntorch-npu==2.1.0\ntorch_geometric==2.4\ntorch\n"})
    t = resolve(project=str(p))
    assert t.origin == "default" and t.torch_npu == RECOMMENDED


def test_a_lower_bound_only_is_judged_against_the_recommended_release(tmp_path):
    p = _proj(tmp_path, {"requirements.txt": "torch>=2.0\n"})
    t = resolve(project=str(p))
    assert t.torch_npu == RECOMMENDED and "not a pin" in t.reason


def test_a_torch_no_torch_npu_pairs_with_says_so(tmp_path):
    p = _proj(tmp_path, {"requirements.txt": "torch==1.9.0\n"})
    t = resolve(project=str(p))
    assert t.origin == "default" and t.torch_npu == RECOMMENDED and "torch==1.9.0" in t.reason


def test_exact_pin_wins_over_a_range_in_another_file(tmp_path):
    p = _proj(tmp_path, {"requirements.txt": "torch>=2.0\n", "requirements-lock.txt": "torch==2.1.0\n"})
    assert resolve(project=str(p)).torch_npu == "2.1.0"


def test_pins_are_found_from_a_subfolder_up_to_the_project_root(tmp_path):
    p = _proj(tmp_path, {"setup.py": "setup(install_requires=['torch==2.1.0'])\n", "src/pkg/m.py": SRC})
    assert resolve(project=str(p / "src" / "pkg")).torch_npu == "2.1.0"
    (tmp_path / "requirements.txt").write_text("torch==2.4.0\n")  # above the project root: not read
    assert [x.spec for x in find_pins(str(p / "src" / "pkg"))] == ["==2.1.0"]


def test_option_and_config_come_first(tmp_path):
    p = _proj(tmp_path, {"requirements.txt": "torch==2.1.0\n"})
    assert resolve(cli_value="2.6.0", project=str(p)).reason == "from --torch-npu"
    t = resolve(config_value="2.4.0", config_file=str(p / "pyproject.toml"), project=str(p))
    assert t.torch_npu == "2.4.0" and "pyproject.toml: [tool.ascendify] torch-npu" in t.reason


def test_torch_npu_for_pin_picks_the_newest_line_satisfying_the_range():
    assert torch_npu_for_pin(Pin("r.txt", ">=2.1,<2.5", "")) == "2.4.0"
    assert torch_npu_for_pin(Pin("r.txt", "==2.2.*", "")) == "2.2.0"  # the version KB has torch_npu 2.2.0
    assert torch_npu_for_pin(Pin("r.txt", "", "")) is None


# ----------------------------------------------------------------------------- what reports say
def test_scan_of_a_project_pinning_torch_2_1_is_judged_against_torch_npu_2_1(tmp_path):
    p = _proj(tmp_path, {"requirements.txt": "torch==2.1.0\n"})
    r = run_cli("scan", str(p), "--no-cache", "--no-config", "--fail-on", "never")
    assert "Judged against torch_npu 2.1.0 (from requirements.txt: torch==2.1.0)." in r.out
    doc = json.loads(run_cli("scan", str(p), "--no-cache", "--no-config", "--format", "json").out)
    assert doc["settings"]["torch_npu"] == "2.1.0" and doc["settings"]["torch_npu_reason"] == "from requirements.txt: torch==2.1.0"
    sarif = json.loads(run_cli("scan", str(p), "--no-cache", "--no-config", "--format", "sarif").out)
    assert sarif["runs"][0]["properties"]["torch_npu"] == "2.1.0"


def test_the_pinned_release_changes_findings(tmp_path):
    # DEV006 (an int device) is an error before torch_npu 2.3.1 and a warning from there on
    src = "import torch\nm = torch.nn.Linear(2, 2).to(0)\n"
    old = _proj(tmp_path, {"requirements.txt": "torch==2.1.0\n"})
    (old / "train.py").write_text(src)
    new = tmp_path / "new"
    new.mkdir()
    (new / "train.py").write_text(src)
    sev = lambda d: {f["code"]: f["severity"] for f in json.loads(run_cli("scan", str(d), "--no-cache", "--no-config", "--format", "json").out)["findings"]}
    assert sev(old).get("DEV006") == "error" and sev(new).get("DEV006") == "warning"


def test_with_nothing_pinned_scan_and_doctor_name_the_same_release(tmp_path):
    p = _proj(tmp_path, {})
    doc = json.loads(run_cli("scan", str(p), "--no-cache", "--no-config", "--format", "json").out)
    assert doc["settings"]["torch_npu"] == RECOMMENDED and "recommends" in doc["settings"]["torch_npu_reason"]
    d = json.loads(run_cli("doctor", "--root", str(tmp_path), "--format", "json").out)
    assert RECOMMENDED in json.dumps(d)
    assert recommended()["torch_npu"] in run_cli("doctor", "--root", str(tmp_path)).out


def test_migrate_report_says_which_release_and_why(tmp_path):
    p = _proj(tmp_path, {"requirements.txt": "torch==2.1.0\n"})
    r = run_cli("migrate", str(p), "--out-dir", str(tmp_path / "out"), "--no-doctor", "--no-cache", "--no-config", "--fail-on", "never")
    assert r.code == 0, r.err
    assert "Judged against torch_npu 2.1.0 (from requirements.txt: torch==2.1.0)." in r.out
    html = (tmp_path / "out" / "report" / "index.html").read_text(encoding="utf-8")
    assert "torch_npu 2.1.0" in html and "requirements.txt" in html


def test_ops_uses_the_project_release(tmp_path):
    _proj(tmp_path, {"requirements.txt": "torch==2.1.0\n"})
    doc = json.loads(run_cli("ops", "aten::add.Tensor", "--format", "json", cwd=str(tmp_path / "proj")).out)
    assert doc["requested"] == "2.1.0" and doc["torch_npu"].startswith("2.1.0.post")


def test_a_release_the_kb_does_not_know_is_warned_about_once(tmp_path):
    p = _proj(tmp_path, {})
    r = run_cli("scan", str(p), "--no-cache", "--no-config", "--torch-npu", "9.9.9", "--fail-on", "never")
    assert r.err.count("torch_npu 9.9.9 is not in the KB; using the nearest known release") == 1 and "(from --torch-npu)" in r.err
    r = run_cli("scan", str(p), "--no-cache", "--no-config", "--torch-npu", "2.7.1", "--fail-on", "never")
    assert "not in the KB" not in r.err
