"""The dependency audit: CUDA-only families, CUDA builds of torch, version pairs, negatives."""

from __future__ import annotations

import os
import textwrap

import pytest

from ascendify.config import Settings
from ascendify.deps.audit import audit_paths, packages

from .test_parse import write


def findings(tmp_path, files: dict, settings=None):
    for name, text in files.items():
        write(tmp_path / name, text)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        fs, _ = audit_paths(["."], settings)
    finally:
        os.chdir(cwd)
    return fs


def codes(fs):
    return [(f.path, f.line, f.code) for f in fs]


FAMILIES = [
    ("flash-attn==2.5.8", "flash-attn", "npu_fusion_attention"),
    ("flash_attn", "flash-attn", "npu_fusion_attention"),
    ("xformers>=0.0.23", "xformers", "scaled_dot_product_attention"),
    ("cupy-cuda12x", "cupy", "numpy"),
    ("cupy-cuda11x==12.0", "cupy", "numpy"),
    ("nvidia-ml-py>=12", "nvml", "npu-smi"),
    ("pynvml", "nvml", "npu-smi"),
    ("GPUtil", "gputil", "npu-smi"),
    ("tensorrt==8.6.1", "tensorrt", "ATC"),
    ("tensorrt-cu12", "tensorrt", "ATC"),
    ("onnxruntime-gpu==1.17.0", "onnxruntime-gpu", "CANN"),
    ("vllm==0.6.3", "vllm", "vllm-ascend"),
    ("triton==2.1.0", "triton", "triton-ascend"),
    ("git+https://github.com/NVIDIA/apex.git", "apex", "gitcode.com/Ascend/apex"),
    ("bitsandbytes>=0.41", "bitsandbytes", "NpuFusedAdamW"),
    ("mamba-ssm", "mamba", "pure-PyTorch"),
    ("transformer_engine[pytorch]>=2.0", "transformer-engine", "bf16"),
    ("cuml-cu11", "rapids", "scikit-learn"),
]


@pytest.mark.parametrize("line,family,hint", FAMILIES)
def test_each_cuda_only_family_is_reported_at_its_line(tmp_path, line, family, hint):
    fs = findings(tmp_path, {"requirements.txt": f"numpy\n{line}\n"})
    assert codes(fs) == [("requirements.txt", 2, "DEP001")]
    entry = next(p for p in packages() if p["id"] == family)
    assert hint in fs[0].message and entry["source"].split(" ")[0] in fs[0].message
    if not entry["verified"]:
        assert "unverified" in fs[0].message
    if family == "bitsandbytes":
        assert fs[0].severity == "warning"


def test_every_knowledge_entry_cites_a_url_or_is_unverified():
    for p in packages():
        assert p["verified"] is False or "http" in p["source"], p["id"]
        assert p["safe_replacement"] == "" or p["verified"], p["id"]


def test_deepspeed_and_mmcv_are_info_not_cuda_only(tmp_path):
    fs = findings(tmp_path, {"requirements.txt": "deepspeed==0.14.0\nmmcv-full==1.5.0\n"})
    assert [(f.code, f.severity) for f in fs] == [("DEP008", "info"), ("DEP008", "info")]
    assert "github.com/deepspeedai/DeepSpeed/pull/3831" in fs[0].message
    assert "FORCE_NPU=1" in fs[1].message and "hiascend.com" in fs[1].message


def test_vllm_with_vllm_ascend_and_triton_with_triton_ascend_say_nothing(tmp_path):
    assert findings(tmp_path, {"requirements.txt": "vllm==0.9.1\nvllm-ascend==0.9.1\ntriton-ascend\ntriton\n"}) == []


def test_nvidia_runtime_wheels_and_cuda_builds_of_torch(tmp_path):
    fs = findings(tmp_path, {"requirements.txt": """
        --extra-index-url https://download.pytorch.org/whl/cu121
        torch==2.1.0+cu121
        torchvision @ https://download.pytorch.org/whl/cu121/torchvision-0.16.0%2Bcu121-cp310-cp310-linux_x86_64.whl
        nvidia-cublas-cu12==12.1.3.1
        nvidia-nccl-cu12
        torch-npu==2.1.0.post17
    """})
    assert codes(fs) == [("requirements.txt", n, "DEP002") for n in (1, 2, 3, 4, 5)]
    assert "torch==2.1.0+cu121 is a CUDA build" in fs[1].message
    assert fs[0].col == len("--extra-index-url ")


def test_cpu_build_and_cpu_index_are_fine(tmp_path):
    assert findings(tmp_path, {"requirements.txt": """
        --index-url https://download.pytorch.org/whl/cpu
        torch==2.1.0+cpu
        torch-npu==2.1.0.post17
        torchvision==0.16.0
    """}) == []


def test_conda_cuda_packages_channel_and_build_string(tmp_path):
    fs = findings(tmp_path, {"environment.yml": """
        channels:
          - nvidia
        dependencies:
          - pytorch=2.1.0=py3.10_cuda12.1_cudnn8.9.2_0
          - pytorch-cuda=12.1
          - cudatoolkit=11.8
          - numpy
    """})
    assert codes(fs) == [("environment.yml", 2, "DEP002"), ("environment.yml", 4, "DEP002"), ("environment.yml", 4, "DEP004"),
                         ("environment.yml", 5, "DEP002"), ("environment.yml", 6, "DEP002")]
    assert fs[2].fix is None  # environment.yml is reported, not edited


def test_version_pairs(tmp_path):
    fs = findings(tmp_path, {"requirements.txt": "torch==2.1.0\ntorchvision==0.20.0\ntorchaudio==2.1.0\n"})
    assert codes(fs) == [("requirements.txt", 1, "DEP004"), ("requirements.txt", 2, "DEP003")]
    assert fs[1].message.startswith("torchvision 0.20.0 does not pair with torch 2.1.0: torch 2.1 pairs with torchvision 0.16")
    assert "github.com/pytorch/vision" in fs[1].message
    assert "torch-npu==2.1.0.post17" in fs[0].message and "CANN 8.3.RC1" in fs[0].message


def test_torchaudio_mismatch_and_stable_abi(tmp_path):
    fs = findings(tmp_path / "a", {"requirements.txt": "torch==2.4.0\ntorchaudio==2.1.0\ntorch-npu==2.4.0.post4\n"})
    assert codes(fs) == [("requirements.txt", 2, "DEP003")]
    # torchaudio 2.11 supports its torch and every later one (stable ABI)
    assert findings(tmp_path / "b", {"requirements.txt": "torch==2.12.0\ntorchaudio==2.11.0\ntorch-npu==2.12.0\n"}) == []


def test_torch_without_a_torch_npu_release(tmp_path):
    fs = findings(tmp_path, {"requirements.txt": "torch==2.0.0\n"})
    assert codes(fs) == [("requirements.txt", 1, "DEP005")]
    assert "2.0.1" in fs[0].message  # the torch_npu line of the same torch minor
    fs = findings(tmp_path / "b", {"environment.yml": "dependencies:\n  - pytorch=1.12.1\n"})
    assert codes(fs) == [("environment.yml", 2, "DEP005")]
    assert "torch_npu exists for torch 1.8.1, 1.11.0, 2.0.1, 2.1.0 —" in fs[0].message  # two lines either side of 1.12


def test_torch_npu_pinned_for_another_torch(tmp_path):
    fs = findings(tmp_path, {"requirements.txt": "torch==2.4.0\ntorch-npu==2.1.0.post17\n"})
    assert codes(fs) == [("requirements.txt", 2, "DEP006")]
    assert "pin torch-npu==2.4.0.post4" in fs[0].message


def test_pairs_across_files_and_includes(tmp_path):
    fs = findings(tmp_path, {"requirements.txt": "-r requirements/base.txt\ntorchvision==0.17.0\n", "requirements/base.txt": "torch==2.1.0\n"})
    assert codes(fs) == [("requirements.txt", 2, "DEP003"), ("requirements/base.txt", 1, "DEP004")]


def test_range_or_unpinned_torch_gives_no_pin_finding(tmp_path):
    assert findings(tmp_path, {"pyproject.toml": '[project]\nname = "x"\ndependencies = ["torch>=2.1", "numpy"]\n'}) == []


def test_clean_file_and_commented_out_package_give_nothing(tmp_path):
    assert findings(tmp_path, {"requirements.txt": """
        numpy>=1.24
        # nvidia-ml-py
        tqdm  # not pynvml
        torch>=2.1
    """}) == []


def test_noqa_select_and_excludes(tmp_path):
    fs = findings(tmp_path, {"requirements.txt": "pynvml  # noqa: DEP001\nxformers  # noqa\ngputil\n",
                             "build/requirements.txt": "flash-attn\n", ".venv/lib/requirements.txt": "flash-attn\n"})
    assert codes(fs) == [("requirements.txt", 3, "DEP001")]
    assert findings(tmp_path, {}, Settings(select=["DEV"]).validate()) == []
    assert findings(tmp_path, {}, Settings(ignore=["DEP001"]).validate()) == []


def test_setup_py_not_literal_is_said(tmp_path):
    fs = findings(tmp_path, {"setup.py": "from setuptools import setup\nsetup(install_requires=open('r.txt').read().split())\n"})
    assert codes(fs) == [("setup.py", 2, "DEP007")]
    assert fs[0].severity == "info"


def test_every_shape_reports_on_its_line(tmp_path):
    fs = findings(tmp_path, {
        "pyproject.toml": '[project]\nname = "x"\ndependencies = [\n  "xformers",\n]\n[tool.poetry.group.gpu.dependencies]\npynvml = "*"\n',
        "setup.cfg": "[options]\ninstall_requires =\n    cupy-cuda12x\n",
        "Pipfile": '[packages]\ngputil = "*"\n',
        "setup.py": "from setuptools import setup\nsetup(name='x', install_requires=[\n    'tensorrt',\n])\n",
        "environment.yml": "dependencies:\n  - pip:\n    - onnxruntime-gpu\n",
    })
    assert codes(fs) == [("Pipfile", 2, "DEP001"), ("environment.yml", 3, "DEP001"), ("pyproject.toml", 4, "DEP001"), ("pyproject.toml", 7, "DEP001"),
                         ("setup.cfg", 3, "DEP001"), ("setup.py", 3, "DEP001")]


def test_conda_yaml_with_channels_in_names_and_pip_options(tmp_path):
    fs = findings(tmp_path, {"conda.yaml": """
        channels:
          - defaults
        dependencies:
          - pytorch::pytorch=2.1.0
          - pytorch::pytorch-cuda=11.7.0
          - pip:
            - --extra-index-url https://pypi.nvidia.com
            - cuml-cu11
            - -e git+https://github.com/NVIDIA/apex.git#egg=apex
    """})
    assert codes(fs) == [("conda.yaml", 4, "DEP004"), ("conda.yaml", 5, "DEP002"), ("conda.yaml", 7, "DEP002"), ("conda.yaml", 8, "DEP001"),
                         ("conda.yaml", 9, "DEP001")]
    assert fs[2].col == len("    - --extra-index-url ")
    assert "NVIDIA/apex" in fs[4].message


def test_a_torch_pin_in_a_constraints_file_is_reported_not_fixed(tmp_path):
    fs = findings(tmp_path, {"requirements.txt": "-c pins.txt\ntorch\n", "pins.txt": "torch==2.1.0\n"})
    assert codes(fs) == [("pins.txt", 1, "DEP004")] and fs[0].fix is None
    fs = findings(tmp_path / "b", {"constraints.txt": "torch==2.1.0\n"})
    assert codes(fs) == [("constraints.txt", 1, "DEP004")] and fs[0].fix is None
    fs = findings(tmp_path / "c", {"requirements.txt": "-r base.txt\n", "base.txt": "torch==2.1.0\n"})
    assert codes(fs) == [("base.txt", 1, "DEP004")] and fs[0].fix is not None


def test_hash_checked_file_is_reported_not_fixed(tmp_path):
    fs = findings(tmp_path, {"requirements.txt": "torch==2.1.0 --hash=sha256:0123\n"})
    assert codes(fs) == [("requirements.txt", 1, "DEP004")] and fs[0].fix is None


def test_local_version_of_the_torch_pin_is_not_copied(tmp_path):
    from ascendify.deps.fix import apply_edits

    fs = findings(tmp_path, {"requirements.txt": "torch==2.1.0+cpu\n"})
    assert apply_edits("torch==2.1.0+cpu\n", list(fs[0].fix.edits)) == "torch==2.1.0+cpu\ntorch-npu==2.1.0.post17\n"


def test_setup_py_reading_an_audited_requirements_file_is_not_noted(tmp_path):
    fs = findings(tmp_path, {"requirements.txt": "flash-attn\n",
                             "setup.py": "from setuptools import setup\ndef req(p):\n    return open(p).read().split()\nsetup(install_requires=req('requirements.txt'))\n"})
    assert codes(fs) == [("requirements.txt", 1, "DEP001")]
