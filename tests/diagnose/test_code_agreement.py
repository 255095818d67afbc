"""Known-issue matches and error codes: a thread about one code is never the answer for a log whose codes are all
different (words in common are not enough); wrapper codes (EZ9999, ERR00100) say nothing either way; and one AI Core
exception printed on several lines (the runtime line with the kernel name, the Python exception with only the code)
is one finding."""

from __future__ import annotations

from ascendify.diagnose import known_issues as ki
from tests.diagnose.diag_util import diagnose_text, ki_record


VECTOR = ki_record("demo#11", ["there is an exception of aivec error",
                               "RuntimeError: ACL stream synchronize failed, error code:507035",
                               "fault kernel_name=page_alloc_kernel_7"],
                   "The paged allocator's vector kernel overruns its buffer.", "Use the plain torch allocation path.",
                   title="vector core exception in the page allocator, stream synchronize failed 507035")

FILLER = [ki_record(f"demo#{20 + i}", [q], "Another cause.", f"Another fix {i}.") for i, q in enumerate([
    "HCCL ring setup timed out waiting for peer", "tokenizer config missing chat template field",
    "dataloader worker killed by signal bus error", "checkpoint shard digest mismatch on resume",
    "pip cannot resolve numpy pin against scipy wheel", "graph capture sizes exceed the configured maximum",
])]


def test_codes_of_reads_cann_torch_npu_and_numeric_codes():
    assert ki.codes_of("EZ9999: Inner Error! ret=507015") == {"EZ9999", "507015"}
    assert ki.codes_of("[ERROR] ERR01100 OPS call acl api failed, error code is 561002") == {"ERR01100", "561002"}
    assert ki.codes_of("ACL stream synchronize failed 507035") == {"507035"}
    assert ki.codes_of("loaded 507035 tokens in 3 s") == set()  # a number without an error word is not a code


def test_wrapper_and_generic_codes_name_no_cause():
    for code in ("EZ9999", "EE9999", "E89999", "ERR00100", "EE1001", "EZ1001", "561002", "507033"):
        assert ki.generic_code(code), code
    for code in ("507015", "507035", "EI0002", "207001"):
        assert not ki.generic_code(code), code


def test_a_record_about_another_code_is_not_a_match(use_known_issues):
    idx = use_known_issues([VECTOR] + FILLER)
    other = ["RuntimeError: ACL stream synchronize failed, error code is 507015",
             "Aicore kernel execute failed, ret=507015, aicore exception fault kernel_name=page_alloc_kernel_7"]
    assert idx.best(other) is None
    same = ["RuntimeError: ACL stream synchronize failed, error code is 507035",
            "fault kernel_name=page_alloc_kernel_3 there is an exception of aivec error"]
    m = idx.best(same)
    assert m is not None and m.record["id"] == "demo#11"


def test_codes_seen_elsewhere_in_the_log_count_too(use_known_issues):
    idx = use_known_issues([VECTOR] + FILLER)
    line = ["there is an exception of aivec error in fault kernel_name=page_alloc_kernel_2"]
    assert idx.best(line) is not None  # no code on the line: words decide
    assert idx.best(line, codes={"507015"}) is None  # but the log's code is another one
    assert idx.best(line, codes={"507035", "EZ9999"}) is not None
    # the log's only codes are wrappers, none of them the record's code: still another error than the thread's
    assert idx.best(line, codes={"EE1001", "ERR00100"}) is None


def test_wrapper_codes_alone_do_not_block_a_record_about_its_reason(use_known_issues):
    rec = ki_record("demo#12", ["EZ9999: Inner Error! The parameter 'actual_seq_lengths' must be configured in ascending order"],
                    "Sequence lengths passed unsorted.", "Sort the sequence lengths before the call.")
    idx = use_known_issues([rec] + FILLER)
    m = idx.best(["E89999: Inner Error! The parameter 'actual_seq_lengths' must be configured in ascending order"])
    assert m is not None and m.record["id"] == "demo#12"


AICORE_LOG = """\
step 10/200 loss 2.28
[ERROR] RUNTIME(4001,python3):2026-03-01-09:00:01.100.200 [task.cc:1482]4004 ReportExceptProc: Aicore kernel execute failed, ret=507015, aicore exception fault kernel_name=ScatterNd_77ab_mix_aiv
[ERROR] RUNTIME(4001,python3):2026-03-01-09:00:01.100.300 [stream.cc:1091]4004 SyncGetDevMsg: EE9999: Inner Error!
Traceback (most recent call last):
  File "/work/app/train.py", line 20, in <module>
    main()
  File "/work/app/loop.py", line 88, in main
    value = loss.item()
RuntimeError: ACL stream synchronize failed, error code is 507015
"""


def test_the_aicore_log_is_not_answered_by_a_record_about_507035(tmp_path, use_known_issues):
    use_known_issues([VECTOR] + FILLER)
    rep = diagnose_text(tmp_path, AICORE_LOG)
    assert all(f.known_issue is None for f in rep.findings)
    assert "Use the plain torch allocation path" not in rep.findings[0].fix


def test_one_aicore_exception_is_one_finding(tmp_path):
    rep = diagnose_text(tmp_path, AICORE_LOG)
    aicore = [f for f in rep.findings if f.id == "aicore-exception"]
    assert len(aicore) == 1
    f = aicore[0]
    assert f.key == "ScatterNd_77ab_mix_aiv"
    assert f.exception == {"type": "RuntimeError", "message": "ACL stream synchronize failed, error code is 507015"}
    assert {e.line for e in f.evidence} >= {2, 9}


def test_one_aicore_exception_is_one_finding_across_a_long_traceback(tmp_path):
    frames = "".join(f'  File "/work/app/m{i}.py", line {i}, in f{i}\n    f{i + 1}()\n' for i in range(12))
    log = AICORE_LOG.replace('  File "/work/app/loop.py"', frames + '  File "/work/app/loop.py"')
    rep = diagnose_text(tmp_path, log)
    aicore = [f for f in rep.findings if f.id == "aicore-exception"]
    assert len(aicore) == 1 and aicore[0].key == "ScatterNd_77ab_mix_aiv" and aicore[0].exception is not None


def test_two_kernels_stay_two_findings(tmp_path):
    two = AICORE_LOG + "\n" * 20 + AICORE_LOG.replace("ScatterNd_77ab", "GatherV2_12cd")
    rep = diagnose_text(tmp_path, two)
    keys = sorted(f.key for f in rep.findings if f.id == "aicore-exception" and f.key)
    assert keys == ["GatherV2_12cd_mix_aiv", "ScatterNd_77ab_mix_aiv"]
