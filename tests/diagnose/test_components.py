"""Framework components: an exception raised inside a framework's own code (vllm-ascend's speculative decoding,
torch_npu's Inductor backend, vllm-ascend's sleep mode) is read by the feature it was raised in: the answer names the
feature, the flag that turns it off and the upgrade, instead of "no catalogue entry explains this message"; a
traceback through the user's own code only is not; an ACL code raised inside a feature names it after its own
reading; a paste cut above its Traceback header still has its frames read."""

from __future__ import annotations

import pytest

from ascendify.diagnose import components
from ascendify.diagnose.cli import render_text
from ascendify.diagnose.engine import diagnose
from tests.diagnose.diag_util import top_finding, write_log

SPEC = """Traceback (most recent call last):
  File "/usr/local/lib/python3.11/site-packages/vllm/v1/engine/core.py", line 702, in run_engine_core
    engine_core.run_busy_loop()
  File "/vllm-workspace/vllm-ascend/vllm_ascend/worker/model_runner_v1.py", line 2311, in propose_draft_token_ids
    draft = self.drafter.propose(hidden)
  File "/vllm-workspace/vllm-ascend/vllm_ascend/spec_decode/eagle_proposer.py", line 418, in propose
    q, k = torch.split(qkv, self.sizes, dim=-1)
  File "/usr/local/lib/python3.11/site-packages/torch/functional.py", line 222, in split
    return tensor.split(split_size_or_sections, dim)
ValueError: Split sizes add up to 9216 but got the tensor's size of 5120
"""

USER_ONLY = """Traceback (most recent call last):
  File "/home/me/proj/train.py", line 41, in <module>
    main()
  File "/home/me/proj/train.py", line 30, in main
    q, k = torch.split(qkv, sizes, dim=-1)
  File "/opt/py/lib/python3.10/site-packages/torch/functional.py", line 222, in split
    return tensor.split(split_size_or_sections, dim)
ValueError: Split sizes add up to 9216 but got the tensor's size of 5120
"""

# cut above its header: the paste starts at a frame line
INDUCTOR_CUT = """    output, ok = check_accuracy(
  File "/opt/conda/lib/python3.10/site-packages/torch_npu/_inductor/npu_compare.py", line 160, in check_accuracy
    launcher(*args)
  File "/opt/conda/lib/python3.10/site-packages/torch_npu/npu/utils.py", line 77, in launcher
    out2.set_(out1)
RuntimeError: Could not set tensor of type c10::Half to a tensor of type float
"""

SLEEP_ACL = """Traceback (most recent call last):
  File "/vllm-workspace/vllm-ascend/vllm_ascend/worker/worker.py", line 222, in sleep
    allocator.sleep(offload_tags=("weights",))
  File "/vllm-workspace/vllm-ascend/vllm_ascend/device_allocator/camem.py", line 208, in sleep
    torch.npu.empty_cache()
  File "/usr/local/python3.11/lib/python3.11/site-packages/torch_npu/npu/memory.py", line 180, in empty_cache
    torch_npu._C._npu_emptyCache()
RuntimeError: npuSynchronizeDevice:../torch_npu/csrc/core/npu/NPUStream.cpp:576 NPU function error: AclrtSynchronizeDeviceWithTimeout, error code is 507011
"""


def test_an_exception_raised_in_a_framework_feature_names_the_feature_its_flag_and_the_upgrade(tmp_path):
    f = top_finding(tmp_path, SPEC)
    assert f.id == "python-exception"
    assert f.details["component"]["id"] == "vllm-ascend-spec-decode"
    assert f.details["component"]["frame"]["function"] == "propose"  # the deepest specific frame, not torch's split
    assert "raised inside vllm-ascend's speculative decoding (vllm_ascend/spec_decode/eagle_proposer.py:418" in f.cause
    assert "does not match the installed vLLM" in f.cause
    assert "No catalogue entry" not in f.cause
    assert f.fix.startswith("Run without speculative decoding (drop --speculative-config)")
    assert "Upgrade vllm-ascend to its newest release with the vLLM version" in f.fix


def test_a_traceback_through_the_users_code_only_keeps_the_plain_reading(tmp_path):
    f = top_finding(tmp_path, USER_ONLY)
    assert "component" not in f.details
    assert "No catalogue entry explains this message" in f.cause
    assert "Upgrade" not in f.fix


def test_a_paste_cut_above_its_traceback_header_still_reads_its_frames(tmp_path):
    f = top_finding(tmp_path, INDUCTOR_CUT)
    assert f.details["component"]["id"] == "torch-npu-inductor"  # utils.py below it is torch_npu's catch-all only
    assert f.frame["path"].endswith("torch_npu/npu/utils.py")
    assert "torch_npu's NPU Inductor backend of torch.compile" in f.cause
    assert "without torch.compile" in f.fix and "Upgrade torch_npu" in f.fix


def test_an_acl_code_raised_inside_a_feature_names_it_after_the_codes_own_reading(tmp_path):
    rep = diagnose((write_log(tmp_path, SLEEP_ACL),))
    f = rep.findings[0]
    assert f.id == "acl-507011"
    assert f.cause.startswith("Internal runtime error 507011")  # the code's own reading stays first
    assert "raised inside vllm-ascend's sleep mode (vllm_ascend/device_allocator/camem.py:208, in sleep)" in f.cause
    assert "unmaps the device memory" in f.cause
    assert "drop --enable-sleep-mode" in f.fix
    assert "gpu-memory-utilization" not in f.fix  # the feature's own words trigger no framework setting
    text = render_text(rep)
    assert "   in       vllm-ascend: sleep mode (camem.py:208 in sleep)" in text
    assert "{'id'" not in text  # no dict dumped in the text report


@pytest.mark.parametrize("path,want", [
    ("/x/site-packages/vllm_ascend/ops/fused_moe/fused_moe.py", "vllm-ascend-moe"),
    ("/x/site-packages/vllm_ascend/patch/worker/patch_qwen3.py", "vllm-ascend-patch"),
    ("/x/site-packages/vllm_ascend/utils.py", "vllm-ascend"),
    ("/x/site-packages/vllm/v1/spec_decode/eagle.py", "vllm-spec-decode"),
    ("C:\\py\\Lib\\site-packages\\torch_npu\\_inductor\\codegen.py", "torch-npu-inductor"),
    ("/x/site-packages/mindspeed/core/context_parallel/ring.py", "mindspeed-context-parallel"),
    ("/home/me/proj/vllm_helpers.py", None),
    ("/x/site-packages/torch/nn/modules/module.py", None),
    ("train.py", None),
])
def test_frame_paths_map_to_the_first_matching_component(path, want):
    c = components.of_path(path)
    assert (c.id if c else None) == want


def test_the_data_rejects_an_entry_without_a_source_url():
    with pytest.raises(ValueError, match="source has no URL"):
        components.parse({"component": [{"id": "x", "project": "p", "path": "p/", "source": "the code"}]})
    with pytest.raises(ValueError, match="unknown field"):
        components.parse({"component": [{"id": "x", "project": "p", "path": "p/", "source": "https://a.b/c", "flag": 1}]})
    assert len(components.load()) >= 30


# ---------------------------------------------------------------- a short paste with no error-looking line

def test_a_pasted_message_fragment_finds_its_known_issue(tmp_path, monkeypatch):
    from ascendify.diagnose import known_issues as ki

    rec = {"id": "demo#1", "project": "demo", "url": "https://example.org/demo/1", "date": "2026-01-01",
           "title": "rope table", "quote": ["rotary cache length 8192 exceeds the positions buffer of the graph"],
           "cause": "The rotary cache was built for a shorter context than the positions.",
           "fix": "Raise max_position_embeddings to the context you serve.", "resolution": "maintainer"}
    idx = ki.from_records([rec, dict(rec, id="demo#2", url="https://example.org/demo/2", quote=["an unrelated line about tokenizers"],
                                     fix="Another fix.")])
    monkeypatch.setattr(ki, "load", lambda: idx)
    # the same words with other numbers, no "error" anywhere: found as the closest known issue, a warning
    f = top_finding(tmp_path, "rotary cache length 4096 exceeds the positions buffer of the graph\n")
    assert f.id == "known-issue" and f.known_issue["id"] == "demo#1"
    assert f.severity == "warning" and f.cause.startswith("Perhaps (match 0.6")
    assert "max_position_embeddings" in f.fix
    # a benign short log with nothing of it: no finding
    from tests.diagnose.diag_util import diagnose_text

    assert diagnose_text(tmp_path, "step 10 loss 2.31\nstep 20 loss 2.10\n", "ok.log").findings == []
    # the same fragment inside a log over the paste size is not read line by line
    big = ("step 10 loss 2.31 lr 3e-4 tokens/s 81234.5\n" * 500) + "rotary cache length 4096 exceeds the positions buffer of the graph\n"
    assert not [g for g in diagnose_text(tmp_path, big, "big.log").findings if g.known_issue]


def test_a_loose_thread_match_follows_the_feature_reading_and_a_warning_log_stays_a_warning(tmp_path, monkeypatch):
    from ascendify.diagnose import known_issues as ki

    rec = {"id": "blog#1", "project": "cann", "url": "https://example.org/blog/1", "date": "2026-01-01",
           "title": "HcclCommInitRootInfoConfig fails", "resolution": "forum",
           "quote": ["HcclCommInitRootInfoConfig failed with the installed CANN toolkit version mismatch detected",
                     "please check the driver firmware and CANN package versions on every node"],
           "cause": "The installed CANN version does not match the driver.", "fix": "Check the installed CANN version."}
    filler = [dict(rec, id=f"other#{i}", url=f"https://example.org/other/{i}", title=f"unrelated {w}",
                   quote=[f"{w} tokenizer vocabulary shard {w}s missing"], fix=f"Fix {w}.")
              for i, w in enumerate("alpha bravo charlie delta echo foxtrot golf hotel india juliet".split())]
    monkeypatch.setattr(ki, "load", lambda: ki.from_records([rec] + filler))
    log = "INFO HcclCommInitRootInfoConfig CANN toolkit\n" + SPEC  # shares a few of the thread's words: a loose match
    rep = diagnose((write_log(tmp_path, log),))
    f = rep.findings[0]
    assert f.details["component"]["id"] == "vllm-ascend-spec-decode"
    assert f.known_issue is not None and 0.5 <= f.known_issue["confidence"] < 0.7  # offered, after the feature's reading
    assert f.cause.startswith("ValueError was raised inside vllm-ascend's speculative decoding")
    assert f.fix.startswith("Run without speculative decoding")

    warn = ("[W compiler_depend.ts:51] Warning: CAUTION: The operator 'torchvision::nms' is not currently supported on the "
            "NPU backend and will fall back to run on the CPU. This may have performance implications.\n")
    rec2 = dict(rec, id="mineru#1", url="https://example.org/mineru/1", title="nms falls back to the CPU",
                quote=["The operator 'torchvision::nms' is not currently supported on the NPU backend and will fall back to run on the CPU"],
                cause="A few operators have no NPU kernel.", fix="None needed: it is a performance warning.")
    monkeypatch.setattr(ki, "load", lambda: ki.from_records([rec2] + filler))
    rep = diagnose((write_log(tmp_path, warn, "w.log"),))
    assert [g.known_issue["id"] for g in rep.findings if g.known_issue] == ["mineru#1"]
    assert all(g.severity == "warning" for g in rep.findings)


SIG = """Traceback (most recent call last):
  File "/usr/local/lib/python3.11/site-packages/sglang/srt/multimodal/processors/qwen_vl.py", line 233, in process_mm_data_async
    out = self.process_and_combine_mm_data(base_output)
  File "/usr/local/lib/python3.11/site-packages/transformers/models/qwen2_vl/image_processing_qwen2_vl_fast.py", line 180, in _preprocess
    return super()._preprocess(images, **kwargs)
TypeError: Qwen2VLImageProcessorFast._preprocess() missing 1 required positional argument: 'interpolation'
"""


def test_a_signature_mismatch_inside_a_framework_names_that_framework_and_the_package_it_called(tmp_path):
    f = top_finding(tmp_path, SIG)
    assert f.id == "python-call-signature-mismatch"
    assert f.fix.startswith("The call that failed is in SGLang's code (sglang/srt/multimodal/processors/qwen_vl.py:233")
    assert "install the SGLang release that matches the installed transformers" in f.fix
    # the same mismatch from the user's own code: the catalogue's fix alone
    own = SIG.replace("/usr/local/lib/python3.11/site-packages/sglang/srt/multimodal/processors/qwen_vl.py", "/home/me/app.py")
    g = top_finding(tmp_path, own, "own.log")
    assert g.id == "python-call-signature-mismatch" and "The call that failed is in" not in g.fix
