"""Readings of messages whose cause is in how the process was set up, not in the op that failed: a folder
shadowing an installed package, FSDP's compute device under renumbered NPUs, a compiler error while building from
source, an integer device read as CUDA, DCMI -8005 decided by the user's own words; and known issues that a
consequence line (printed by many failures) cannot carry on its own."""

from __future__ import annotations

from ascendify.diagnose import known_issues as ki
from tests.diagnose.diag_util import diagnose_text, ki_record, top_finding


def test_a_package_without_version_is_a_shadowing_folder(tmp_path):
    log = ("Traceback (most recent call last):\n  File \"/opt/app/plugin/utils.py\", line 12, in check\n"
           "    v = transformers.__version__\nAttributeError: module 'transformers' has no attribute '__version__'\n")
    f = top_finding(tmp_path, log)
    assert f.id == "python-namespace-package-shadow"
    assert "namespace package" in f.cause and "cd ~" in f.fix and "transformers" in f.fix


def test_another_missing_name_is_still_a_version_pairing(tmp_path):
    log = "AttributeError: module 'transformers' has no attribute 'LlamaFlashAttention3'\n"
    assert top_finding(tmp_path, log).id == "python-module-attribute-missing"


def test_fsdp_compute_device_names_the_device_numbering(tmp_path):
    f = top_finding(tmp_path, "AssertionError: Expects tensor to be on the compute device npu:9, was on npu:0\n")
    assert f.id == "fsdp-compute-device-mismatch"
    assert "npu:9" in f.cause and "torch.npu.set_device(local_rank)" in f.fix
    assert "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES" in f.fix


def test_a_compiler_error_in_the_build(tmp_path):
    log = ("[ 51%] Building CXX object CMakeFiles/acme_ops.dir/src/ops/fused_rope.cpp.o\n"
           "/build/acme/src/ops/fused_rope.cpp:88:5: error: 'aclnnFoo' was not declared in this scope\n"
           "gmake[2]: *** [CMakeFiles/acme_ops.dir/build.make:76: fused_rope.cpp.o] Error 1\n")
    f = top_finding(tmp_path, log)
    assert f.id == "cxx-compile-error" and "fused_rope.cpp" in f.title
    assert "release tag" in f.fix and "latest commit" in f.fix and "{msg}" not in f.cause


def test_an_error_line_without_a_source_file_is_no_compiler_error(tmp_path):
    rep = diagnose_text(tmp_path, "usage: train.py [-h]\ntrain.py: error: unrecognized arguments: --fp8\n")
    assert "cxx-compile-error" not in [f.id for f in rep.findings]


def test_an_integer_device_is_read_as_cuda(tmp_path):
    log = (">>> x = torch.ones(2).to(1)\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n"
           "  File \"/usr/lib/python3.9/site-packages/torch/cuda/__init__.py\", line 289, in _lazy_init\n"
           "AssertionError: Torch not compiled with CUDA enabled\n")
    f = top_finding(tmp_path, log)
    assert f.id == "cuda-not-compiled" and f.variant == ".to(1)"
    assert "integer device" in f.title and "npu:" in f.fix


def test_a_cuda_call_without_an_integer_device_keeps_the_cuda_reading(tmp_path):
    f = top_finding(tmp_path, ">>> x = torch.ones(2).cuda()\nAssertionError: Torch not compiled with CUDA enabled\n")
    assert f.id == "cuda-not-compiled" and not f.variant


def test_dcmi_8005_with_another_container_on_the_host_is_an_occupied_device(tmp_path):
    log = ("docker run --rm --device /dev/davinci3 --device /dev/davinci_manager -it img bash\n"
           "npu-smi info\ndcmi module initialize failed. ret is -8005\n"
           "npu-smi works fine in another container on the same host.\n")
    f = top_finding(tmp_path, log)
    assert "held by another process or container" in f.title and "stop the process or container" in f.fix


def test_dcmi_8005_in_a_container_alone_is_the_capabilities_reading(tmp_path):
    log = ("docker run --rm --device /dev/davinci3 -it img bash\nnpu-smi info\ndcmi module initialize failed. ret is -8005\n")
    assert "capabilities" in top_finding(tmp_path, log).title


def _rec(rid, quote, fix):
    return ki_record(rid, quote, "cause " + rid, fix, title="model fails to start")


def test_a_consequence_line_alone_does_not_carry_a_known_issue():
    tbe = "[ERROR] TBE Subprocess[task_distribute] raise error[], main process disappeared!"
    idx = ki.from_records([_rec("demo#1", ["You are using a model of type qwen9_vl to instantiate a model of type.", tbe],
                                "Install the model's requirements."),
                           _rec("demo#2", ["unrelated tokenizer template missing"], "Other.")])
    assert idx.best([tbe] * 4) is None  # only the consequence line: no match
    m = idx.best(["You are using a model of type qwen9_vl to instantiate a model of type.", tbe])
    assert m is not None and m.record["id"] == "demo#1"


def test_atc_operator_report_names_the_opset(tmp_path):
    log = ('    {\n      "cause": [\n        {\n          "code": 1,\n          "message": "The type is not supported."\n'
           '        }\n      ],\n      "name": "GridSample_42",\n      "result": "failed",\n'
           '      "type": "ai.onnx::16::GridSample"\n    },\n')
    f = top_finding(tmp_path, log)
    assert f.id == "atc-unsupported-op"
    assert "GridSample" in f.title and "opset_version" in f.fix


def test_a_prebuilt_binary_missing_a_cann_library_names_the_toolkit_version(tmp_path):
    f = top_finding(tmp_path, "/opt/engine/bin/server: error while loading shared libraries: libnnopbase.so: cannot open "
                              "shared object file: No such file or directory\n")
    assert f.id == "missing-library" and "built against" in f.cause and "toolkit version it was built against" in f.fix


def test_host_memory_registration_failure(tmp_path):
    f = top_finding(tmp_path, "Unable to halHostRegister: 65534\nRuntimeError: register ptr failed\n")
    assert f.id == "host-register-failed"
    assert "driver" in f.fix and "aclrtMallocHost" in f.fix and "memlock" in f.fix


def test_a_host_register_word_without_a_failure_is_no_finding(tmp_path):
    rep = diagnose_text(tmp_path, "INFO using aclrtHostRegister for the KV offload buffers (64 blocks)\n")
    assert "host-register-failed" not in [f.id for f in rep.findings]
