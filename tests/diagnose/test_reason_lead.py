"""The first finding is the root cause, not a wrapper: an exception line printed before a torch_npu ``ERR…`` suffix
leads even when the traceback was cut above its header; a finding that is its message's own reason takes a known
issue only when the issue shares the reason's words; a framework setting that reads the finding keeps a loose
thread match from leading; a port bound in other words still names HCCL_IF_BASE_PORT."""

from __future__ import annotations

from tests.diagnose.diag_util import diagnose_text, ki_record, top_finding


FILLER = [ki_record(f"demo#{60 + i}", [q], "Other.", f"Other fix {i}.") for i, q in enumerate([
    "HCCL ring setup timed out waiting for peer", "tokenizer config missing chat template field",
    "dataloader worker killed by signal bus error", "checkpoint shard digest mismatch on resume",
    "pip cannot resolve numpy pin against scipy wheel", "graph capture sizes exceed the configured maximum"])]


def test_an_exception_before_the_err_suffix_leads_without_a_traceback_header(tmp_path):
    log = ("    out.copy_(res)\n"
           "RuntimeError: cannot store a value of kind Half into an output buffer of kind Float\n"
           "[ERROR] 2026-03-03-10:00:00 (PID:5, Device:0, RankID:-1) ERR99999 UNKNOWN application exception\n")
    rep = diagnose_text(tmp_path, log)
    first = rep.findings[0]
    assert first.id == "python-exception" and first.role == "cause"
    assert "kind Half into an output buffer" in first.title
    wrapper = next(f for f in rep.findings if f.id == "torch-npu-ERR99999")
    assert wrapper.role == "wrapper" and wrapper.consequence_of == first.label()


def test_a_reason_finding_ignores_a_thread_matched_by_the_wrapper_lines(tmp_path, use_known_issues):
    kernel = ki_record("demo#70", ["RuntimeError: call aclnnRange failed, detail:EZ9999: Inner Error!",
                                   "ERR01100 OPS call acl api failed", "Cannot find bin of op Range"],
                       "The kernels package is missing.", "Install the kernels package.")
    use_known_issues([kernel] + FILLER)
    log = ("RuntimeError: call aclnnFusedThing failed, detail:EZ9999: Inner Error!\n"
           "[ERROR] 2026-01-02-10:00:00 (PID:123, Device:0, RankID:-1) ERR01100 OPS call acl api failed\n"
           "EZ9999: [PID: 123] 2026-01-02-10:00:00.000.000 The head count 7 of query is not a multiple of the kv "
           "head count 2[FUNC:Check][FILE:f.cc][LINE:1]\n")
    f = top_finding(tmp_path, log)
    assert "The head count 7 of query is not a multiple of the kv head count 2" in f.title
    assert f.known_issue is None and "kernels package" not in f.fix
    assert "exact multiple" in f.cause  # the divisibility reading in plain words


def test_port_bound_in_other_words_names_hccl_if_base_port_before_a_loose_thread(tmp_path, use_known_issues):
    loose = ki_record("demo#71", ["Communication_Error_Bind_IP_Port(EJ0003): Failed to bind the IP port on the device "
                                  "network when the logical device ids of two data-parallel groups were remapped"],
                      "A device-id mapping bug.", "Upgrade the runtime.")
    use_known_issues([loose] + FILLER)
    log = ("RuntimeError: HcclGetRootInfo failed, error code is 7\n"
           "Communication_Error_Bind_IP_Port(EJ0003): Failed to bind the IP port.\n"
           "Reason: The IP address and port have been bound already.\n")
    f = top_finding(tmp_path, log)
    assert f.fix.startswith("A port is already bound") and "HCCL_IF_BASE_PORT" in f.fix
    if f.known_issue is not None:  # offered after the setting, never ahead of it
        assert not f.fix.startswith("If it is that issue")
