"""A message's own words carry the answer more often than a table does: an aclError printed by name
(``ACL_ERROR_REPEAT_INITIALIZE``) or after "CANN failure" is read as its code; the advice a message gives itself
("Please try to decrease X") leads the fix of a finding no entry explains; MindIE's warm-up OOM names its config
knobs; logging prefixes ("[date] [pid] [tid] [llm] [ERROR] [file-12] : ") are not part of the reason."""

from __future__ import annotations

from ascendify.diagnose import reason
from ascendify.diagnose.signatures import Matcher
from tests.diagnose.diag_util import top_finding


def test_an_acl_error_name_is_read_as_its_code():
    m = Matcher()
    lm = m.match_line("aclrtSetDevice returned ACL_ERROR_RT_MEMORY_ALLOCATION while binding the stream")
    assert lm.acl_codes == [207001]  # the code table's entry, as for "error code is 207001"
    lm = m.match_line("provider.cc:143 CANN failure 100002: ACL_ERROR_REPEAT_INITIALIZE ; NPU=0 ; expr=aclInit(nullptr);")
    assert [s.id for s, _g in lm.signatures] == ["acl-100002"]
    # a name that is no aclError is not turned into a code
    assert m.match_line("ACL_ERROR_NO_SUCH_THING happened") is None


def test_repeat_initialize_names_a_second_runtime_in_the_process(tmp_path):
    f = top_finding(tmp_path, "[E:onnxruntime:Default, cann_call.cc:137] CANN failure 100002: ACL_ERROR_REPEAT_INITIALIZE ; "
                              "NPU=0 ; expr=aclInit(nullptr);\nEP Error create CANN ExecutionProvider fail\n")
    assert f.id == "acl-100002"
    assert "initialised already" in f.cause and "torch_npu" in f.cause
    assert "separate process" in f.fix and "upgrade" in f.fix


def test_the_messages_own_advice_is_extracted():
    line = ("[2025-11-25 17:23:11,888] [249] [281471718846752] [llm] [ERROR] [logging.py-348] : Loading failed when "
            "`maxInputTokenLen` set to 8192. Please try to decrease `maxPrefillTokens` in config.json of the service.")
    assert reason.extract(line).startswith("Loading failed when `maxInputTokenLen`")
    assert reason.advice(line) == "decrease `maxPrefillTokens` in config.json of the service"
    assert reason.advice("You should set HCCL_CONNECT_TIMEOUT=1200 when ranks start slowly.") == \
        "set HCCL_CONNECT_TIMEOUT=1200 when ranks start slowly"
    assert reason.advice("Please check the log for details.") == ""  # no action on a setting
    assert reason.advice("the scheduler failed to decrease the batch") == ""  # a verb without advice words


def test_the_advice_leads_a_finding_no_entry_explains(tmp_path):
    log = ("Traceback (most recent call last):\n  File \"serve.py\", line 9, in <module>\n"
           "RuntimeError: adapter slots exhausted while loading 12 adapters. Please try to increase `max_slots` in serve.yaml.\n")
    f = top_finding(tmp_path, log)
    assert f.fix.startswith("Do what the message itself advises: increase `max_slots` in serve.yaml.")
    assert "serve.yaml.." not in f.cause


def test_mindie_warmup_oom(tmp_path):
    log = ("[2025-03-01 10:00:00,001] [12] [2814] [llm] [ERROR] [logging.py-348] : Warmup failed, because of model "
           "inference out of memory when `maxInputTokenLen` set to 16384. Please try to decrease `maxPrefillTokens`.\n")
    f = top_finding(tmp_path, log)
    assert f.id == "mindie-warmup-oom" and f.family == "memory"
    assert "maxPrefillTokens" in f.fix and "maxBatchSize" in f.fix and "more cards" in f.fix


def test_a_warmup_failure_without_memory_words_is_not_an_oom(tmp_path):
    f = top_finding(tmp_path, "[2025-03-01 10:00:00,001] [llm] [ERROR] : Warmup failed, because the tokenizer file "
                              "tokenizer.json could not be parsed.\n")
    assert f.id != "mindie-warmup-oom"


def test_a_cpp_source_frame_before_the_message_is_not_part_of_the_reason():
    line = ("/src/ort/core/providers/cann/cann_call.cc:137 bool onnxruntime::CannCall(ERRTYPE, const char*, const char*, "
            "ERRTYPE, const char*) [with ERRTYPE = int; bool THRW = true] CANN failure 507011: ACL_ERROR_RT_MODEL_EXECUTE ; NPU=0")
    assert reason.extract(line).startswith("CANN failure 507011: ACL_ERROR_RT_MODEL_EXECUTE")
    assert reason.extract("tiling.cc:88 tiling of MatMul failed: k must be a multiple of 16") == \
        "tiling of MatMul failed: k must be a multiple of 16"
