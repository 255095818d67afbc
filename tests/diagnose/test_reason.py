"""Reason first: the text a CANN / ACL message gives for itself becomes evidence, and the finding when no
catalogue entry explains it (logs composed from the documented CANN message shapes, made-up names)."""

from __future__ import annotations

from ascendify.diagnose import reason
from ascendify.diagnose.engine import diagnose
from tests.diagnose.diag_util import write_log

ASCENDING = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "/srv/app/infer.py", line 42, in <module>
[rank0]:     out = model(x)
[rank0]: RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current working operator name is aclnnFusedInferAttentionScore.
[ERROR] 2025-03-01-10:00:00 (PID:4242, Device:0, RankID:0) ERR01100 OPS call acl api failed
EZ9999: Inner Error!
EZ9999: [PID: 4242] 2025-03-01-10:00:00.123.456 The parameter 'actual_seq_lengths' must be configured in ascending order.[FUNC:CheckInput][FILE:fia_tiling.cc][LINE:123]
        TraceBack (most recent call last):
        Tiling failed[FUNC:Tiling][FILE:op.cc][LINE:9]
"""




def test_extract_reads_the_reason_and_drops_the_wrapping():
    assert reason.extract("EZ9999: Inner Error!") == ""
    assert reason.extract("EZ9999: [PID: 1] 2025-03-01-10:00:00.123.456 The parameter 'x' must be configured in "
                          "ascending order.[FUNC:CheckInput][FILE:a.cc][LINE:1]") == "The parameter 'x' must be configured in ascending order"
    assert reason.extract("[ACL ERROR] EE1001: [PID: 7] 2026-05-01-10:00:00.123.456 The argument is invalid.Reason: "
                          "rtGetDevMsg failed, devId 3 out of range") == "rtGetDevMsg failed, devId 3 out of range"
    assert reason.extract("E89999: [PID: 11] 2025-01-01-00:00:00.000.000 op[MatMul], ub overflow, the required ub size "
                          "300000 exceeds 196608[FUNC:Tiling][FILE:a.cc][LINE:2]").startswith("op[MatMul], ub overflow")
    assert reason.extract("[ERROR] 2025-03-01-10:00:00 (PID:4242, Device:0, RankID:0) ERR01100 OPS call acl api failed") == ""
    assert reason.extract("The Inner error is reported as above. The process exits for this inner error.") == ""


def test_continuation_lines_only():
    assert reason.continuation("        Tiling failed[FUNC:Tiling][FILE:op.cc][LINE:9]")
    assert reason.continuation("EZ9999: [PID: 1] something")
    assert not reason.continuation('{"step": 3, "loss": 2.0}')
    assert not reason.continuation("2026-05-01 10:00:00,000 INFO step 4 tokens/s 812")


def test_reason_text_alone_is_the_answer(tmp_path):
    rep = diagnose((write_log(tmp_path, ASCENDING),))
    top = rep.findings[0]
    assert top.role == "cause" and top.severity == "error"
    assert top.title == "EZ9999: The parameter 'actual_seq_lengths' must be configured in ascending order"
    assert top.reason == "The parameter 'actual_seq_lengths' must be configured in ascending order"
    assert top.id == "cann-EZ9999"  # the wrapper finding turned into the cause, its id kept
    assert top.ranks == {0}  # the unprefixed CANN lines continue rank 0's block
    assert set(top.details["wrapped_codes"]) >= {"ERR01100"}
    assert len(rep.findings) == 1  # the RuntimeError and ERR01100 are folded into it
    d = rep.to_dict()["findings"][0]
    assert d["reason"] == top.reason


def test_reason_of_a_catalogued_cause_is_evidence_only(tmp_path):
    # E10069's catalogue entry explains its own message: the entry stays the finding
    line = "E10069: [PID: 4242] 2026-05-01-10:00:00.123.456 Value [x] for parameter --unknown_flag is invalid.\n"
    rep = diagnose((write_log(tmp_path, line),))
    assert rep.findings[0].id != "message-reason" and not rep.findings[0].id.startswith("reason")


def test_explicit_reason_field_of_ee1001(tmp_path):
    text = ("[ACL ERROR] EE1001: [PID: 7] 2026-05-01-10:00:00.123.456 The argument is invalid.Reason: rtGetDevMsg failed, "
            "devId 3 out of range[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n")
    rep = diagnose((write_log(tmp_path, text),))
    top = rep.findings[0]
    assert top.reason == "rtGetDevMsg failed, devId 3 out of range"
    assert "rtGetDevMsg failed" in top.title or "rtGetDevMsg failed" in top.cause


def test_metric_line_after_a_wrapper_is_not_a_reason(tmp_path):
    text = ("[ERROR] 2026-05-01-10:00:00 (PID:9, Device:0, RankID:0) ERR01100 OPS call acl api failed\n"
            "EZ9999: Inner Error!\n"
            '{"step": 5, "loss": 2.1, "grad_norm": 1.0, "loss_scale": 65536.0}\n')
    rep = diagnose((write_log(tmp_path, text),))
    assert all(not f.reason for f in rep.findings)
    assert rep.findings[0].role == "wrapper"


def test_reason_rules_put_the_reason_in_plain_words(tmp_path):
    text = ("(VllmWorker rank=3 pid=7) ERROR 07-17 08:06:53 [multiproc_executor.py:487] RuntimeError: init:x.ts:292 NPU "
            "function error: aclrtGetDeviceCount(&device_count), error code is 207004\n"
            "(VllmWorker rank=3 pid=7) ERROR 07-17 08:06:53 [multiproc_executor.py:487] EE1001: [PID: 7] 2025-07-17-08:06:53.296.370 "
            "The argument is invalid.Reason: set ASCEND_RT_VISIBLE_DEVICES:3,1,2 error, it must be configured in ascending order\n")
    top = diagnose((write_log(tmp_path, text),)).findings[0]
    assert top.reason.startswith("set ASCEND_RT_VISIBLE_DEVICES:3,1,2 error")
    assert "reason-ascending-order" in top.settings
    assert top.fix.startswith("Pass that list sorted in ascending (increasing) order")


def test_complex_dtype_and_fp16_scale_rules(tmp_path):
    rep = diagnose((write_log(tmp_path, "Tensor self not implemented for DT_COMPLEX128\nNPU function error: call aclnnGather failed\n"
                                   "error code is 161002\n"),))
    assert "cos/sin" in rep.findings[0].fix and "complex" in rep.findings[0].cause.lower()
    rep = diagnose((write_log(tmp_path, "aclnnQuantMatmulWeightNz failed, error code is 161002\nAclNN_Parameter_Error(EZ1001):\n"
                                   "Tensor scale not implemented for DT_FLOAT16,\nshould be in dtype support list\n"
                                   "[DT_UINT64, DT_BFLOAT16, DT_INT64, DT_FLOAT].\n", "b.log"),))
    top = rep.findings[0]
    assert "The scale input of the kernel is float16" in top.cause and "bfloat16" in top.fix


def test_a_log_with_only_an_error_line_leads_with_its_words(tmp_path):
    # (TBE's "main process disappeared" was the example here; the catalogue now reads it as an exit-time consequence)
    rep = diagnose((write_log(tmp_path, "INFO starting\n[ERROR] Pool worker[loader_3] raise error[], its job queue "
                                   "vanished!\n"),))
    top = rep.findings[0]
    assert top.severity == "error" and "job queue vanished" in top.title
    rep = diagnose((write_log(tmp_path, "INFO starting\nValue error, Ascend scheduler is enabled without chunked prefill feature.\n",
                         "b.log"),))
    assert rep.findings[0].id == "log-error-line" and "chunked prefill" in rep.findings[0].title
    # prose with the word Error: stays quiet
    assert diagnose((write_log(tmp_path, "INFO all good\nsome Error: words in prose\n", "c.log"),)).findings == []


def test_metric_rows_after_a_cann_block_are_not_its_reason(tmp_path):
    text = ("[ERROR] 2026-05-01-10:00:00 (PID:4242, Device:0, RankID:1) ERR01100 OPS call acl api failed\n"
            "[rank1]:  iteration     140/ 1000000 | consumed samples: 140 | lm loss: 2.32E+00 | loss scale: 65536.0 |\n"
            "[default1]:  0%|          | 140/1000000 [00:01<99:00:00,  1.2it/s]\n")
    rep = diagnose((write_log(tmp_path, text),))
    assert all(f.id != "message-reason" and not f.reason for f in rep.findings)


def test_engine_config_advice_is_restated_with_its_flags(tmp_path):
    text = ("Value error, Chunked prefill is off. Argument max_num_batched_tokens (2048) is smaller than max_model_len "
            "(8192). Please increase max_num_batched_tokens or decrease max_model_len. [type=value_error]\n")
    top = diagnose((write_log(tmp_path, text),)).findings[0]
    assert "reason-vllm-config-advice" in top.settings
    assert "--max-num-batched-tokens" in top.fix and "--max-model-len" in top.fix
    one = "Value error, Too many sequences for the cache. Please lower max_num_seqs. [type=value_error]\n"
    fix = diagnose((write_log(tmp_path, one, "b.log"),)).findings[0].fix
    assert "--max-num-seqs" in fix and " or " not in fix.split(";")[0]
