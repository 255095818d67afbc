"""A kernel's reason printed on a plain line of its own after the code line (no indent, no code, no ``Reason:``):
it is read as the reason when it states a rule, and a message-phrase rule then explains it; the "call X failed,
error code is N" line itself is no reason.  Also: known issues must agree with the log on what a message is about
(the missing module, attribute, symbol or library), not only on the words around it."""

from __future__ import annotations

from ascendify.diagnose import known_issues as ki
from ascendify.diagnose import reason
from tests.diagnose.diag_util import ki_record, top_finding

PAGED = ("RuntimeError: npu_paged_attention_symint:\n"
         "NPU function error: call aclnnPagedAttentionV2 failed, error code is 561002\n"
         "\n"
         "For BF16 inputs, page_size must be aligned to 32, but got 8.\n")


def test_a_plain_rule_sentence_after_the_code_line_is_its_reason(tmp_path):
    f = top_finding(tmp_path, PAGED)
    assert "page_size must be aligned to 32, but got 8" in f.title
    # the phrase rule reads it: the block (page) size must be a multiple of the number the message gives
    assert "multiple of 32" in f.cause and "--block-size 128" in f.fix and "--page-size 128" in f.fix
    assert reason.UNREAD not in f.cause


def test_a_plain_line_that_states_no_rule_is_not_taken_as_the_reason(tmp_path):
    log = ("RuntimeError: npu_paged_attention_symint:\n"
           "NPU function error: call aclnnPagedAttentionV2 failed, error code is 561002\n"
           "Loading safetensors checkpoint shards took 12 seconds on this node\n")
    f = top_finding(tmp_path, log)
    assert "safetensors" not in f.title and "safetensors" not in (f.reason or "")


def test_call_failed_with_a_code_is_no_reason_of_its_own():
    assert reason.extract("NPU function error: call aclnnFusedInferAttentionScoreV4 failed, error code is 561002") == ""
    assert reason.extract("aclnnMatmul failed, ret = 161002") == ""
    assert reason.extract("npu_fused_infer_attention_score_v2_symint:") == ""
    # a reason after the code is still one
    assert reason.extract("EZ1001: [PID: 7] 2025-01-01-00:00:00.000.000 query dim must be 4, but got 3") == \
        "query dim must be 4, but got 3"


def test_continuation_needs_a_code_line_before_a_plain_sentence():
    line = "block_size should aligned to 16, but got 1."
    assert reason.continuation(line, following=True)
    assert not reason.continuation(line)
    assert not reason.continuation("iteration 10 loss should be falling", following=True)  # a metric row


def _rec(rid, quote, fix):
    return ki_record(rid, quote, "cause " + rid, fix, title="import failure")


def test_subjects_of_templates():
    s = ki.subjects_of("ModuleNotFoundError: No module named 'acme_npu.lora'; libfoo.so: cannot open shared object file")
    assert s == {"module": {"acme_npu.lora"}, "library": {"libfoo"}}
    assert ki.subjects_of("AttributeError: module 'x' has no attribute 'Fast_Op'") == {"attribute": {"fast_op"}}
    assert ki.subjects_of("undefined symbol: _ZN3c105ErrorC2E") == {"symbol": {"_zn3c105errorc2e"}}


def test_a_quote_about_another_module_is_no_match():
    idx = ki.from_records([_rec("demo#1", ["ModuleNotFoundError: No module named 'acme_npu.lora'"], "Upgrade acme-npu."),
                           _rec("demo#2", ["Traceback: unrelated kernel launch timeout happened"], "Other.")])
    # same words around it, another module: neither the quote nor the title ("import failure") matches
    ranked = idx.search(["Failed to import: No module named 'acme_npu.acme_npu_C'"], exclude=set())
    assert all(m.record["id"] != "demo#1" for m in ranked)
    same = idx.search(["Failed to import: No module named 'acme_npu.lora'"], exclude=set())
    assert same and same[0].record["id"] == "demo#1" and same[0].confidence > 0.7
