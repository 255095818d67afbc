"""Issue 21, families 4 and 6 in logs written here (red-team helper R2): pip's post-install conflict ('X requires Y,
but you have Y ... which is incompatible'), a missing ninja / cmake / g++ for a build, vLLM V1's stats with requests
waiting on a full KV cache; each with a near miss that must not fire."""

from __future__ import annotations

import pytest

from ascendify.diagnose.engine import diagnose
from tests.diagnose.diag_util import top_finding


PACKAGING = [
    ("pip-installed-conflict",
     "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. "
     "This behaviour is the source of the following dependency conflicts.\n"
     "torchaudio 2.6.0 requires torch==2.6.0, but you have torch 2.5.1 which is incompatible.\n",
     ("torchaudio", "--no-deps", "pip check")),
    ("build-tool-missing",
     "  File \"/usr/lib/python3.10/site-packages/torch/utils/cpp_extension.py\", line 1946, in verify_ninja_availability\n"
     "    raise RuntimeError(\"Ninja is required to load C++ extensions\")\nRuntimeError: Ninja is required to load C++ extensions\n",
     ("ninja", "pip install ninja")),
    ("build-tool-missing", "-- building custom ops\n./build.sh: line 12: cmake: command not found\n", ("cmake", "pip install cmake")),
    ("c-compiler-missing", "building 'op_ext._C' extension\nerror: unable to execute 'g++': No such file or directory\n",
     ("compiler", "build-essential")),
    ("vllm-kv-cache-saturated",
     "INFO 07-21 03:10:15 [loggers.py:118] Engine 000: Avg prompt throughput: 811.9 tokens/s, Avg generation "
     "throughput: 2301.4 tokens/s, Running: 201 reqs, Waiting: 55 reqs, GPU KV cache usage: 99.7%, Prefix cache hit rate: 0.0%\n",
     ("kv cache", "--gpu-memory-utilization")),
    ("no-wheel-for-python",
     "  × No solution found when resolving dependencies:\n  ╰─▶ Because torch-npu==2.6.0 has no wheels with a matching "
     "Python ABI tag (e.g., `cp314`) and you require torch-npu==2.6.0, we can conclude that your requirements are "
     "unsatisfiable.\n", ("python version", "uv venv -p 3.11")),
    ("no-wheel-for-python",
     "ERROR: Ignored the following versions that require a different python version: 2.4.0 Requires-Python >=3.9,<3.12\n"
     "ERROR: Could not find a version that satisfies the requirement torch-npu==2.4.0 (from versions: none)\n"
     "ERROR: No matching distribution found for torch-npu==2.4.0\n", ("python version", "wheels")),
    ("onnx-export-opset-too-old",
     "torch.onnx.errors.UnsupportedOperatorError: Exporting the operator 'aten::unflatten' to ONNX opset version 9 is "
     "not supported. Please feel free to request support or submit a pull request on PyTorch GitHub.\n",
     ("too old", "higher opset_version")),
]


@pytest.mark.parametrize("sid,text,words", PACKAGING, ids=[c[0] + str(i) for i, c in enumerate(PACKAGING)])
def test_packaging_and_serving_entries(tmp_path, sid, text, words):
    f = top_finding(tmp_path, text)
    assert f.id == sid, (f.id, f.title)
    got = (f.title + " " + f.cause + " " + f.fix + " " + f.next_step).lower()
    for w in words:
        assert w in got, (w, got)


@pytest.mark.parametrize("sid,text", [
    ("pip-installed-conflict", "Requirement already satisfied: torch==2.5.1 in /usr/lib/python3.10/site-packages\n"
                               "the two files are incompatible\n"),
    ("build-tool-missing", "-- The CXX compiler identification is GNU 10.3.1\n-- Found ninja: /usr/bin/ninja\n"),
    ("no-wheel-for-python", "ERROR: No matching distribution found for torch-npu==2.9.9rc7\n"),
    ("onnx-export-opset-too-old", "[ERROR] ATC: opset version 19 is not supported, supported range is [9, 18]\n"),
    ("vllm-kv-cache-saturated", "INFO 07-21 03:10:15 [loggers.py:118] Engine 000: Running: 201 reqs, Waiting: 0 reqs, "
                                "GPU KV cache usage: 99.7%, Prefix cache hit rate: 0.0%\n"),
])
def test_packaging_near_misses(tmp_path, sid, text):
    p = tmp_path / "x.log"
    p.write_text(text, encoding="utf-8")
    assert sid not in {f.id for f in diagnose((str(p),)).findings}
