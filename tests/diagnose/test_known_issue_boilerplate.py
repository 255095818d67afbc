"""A known issue matched only by the words of a standard Python / PyTorch message ('NoneType' object is not
subscriptable, the broadcasting rule) is not offered for a log that shows nothing else: those words say which kind of
error happened, not which thread's issue; a match that shares the issue's own words still is."""

from __future__ import annotations

from tests.diagnose.diag_util import ki_record, top_finding


RECS = [
    ki_record("demo#31", ["TypeError: 'NoneType' object is not subscriptable in build_router_table of the expert planner"],
              "The expert planner returns None for an empty plan.", "Upgrade the planner."),
    ki_record("demo#32", ["RuntimeError: The size of tensor a (7) must match the size of tensor b (9) at non-singleton dimension 1 "
                          "in rotary_partial_apply"], "Partial rotary ignores rotary_dim.", "Upgrade the rotary plug-in."),
] + [ki_record(f"demo#{40 + i}", [q], "Other.", f"Other fix {i}.") for i, q in enumerate([
    "HCCL ring setup timed out waiting for peer", "tokenizer config missing chat template field",
    "dataloader worker killed by signal bus error", "checkpoint shard digest mismatch on resume"])]


def test_a_standard_message_alone_gets_no_thread(tmp_path, use_known_issues):
    use_known_issues(RECS)
    f = top_finding(tmp_path, "TypeError: 'NoneType' object is not subscriptable\n")
    assert f.known_issue is None and "Upgrade the planner" not in f.fix
    g = top_finding(tmp_path, "RuntimeError: The size of tensor a (...) must match the size of tensor b (...) at "
                              "non-singleton dimension 0\n", "b.log")
    assert g.known_issue is None


def test_the_issue_own_words_still_match(tmp_path, use_known_issues):
    use_known_issues(RECS)
    f = top_finding(tmp_path, "TypeError: 'NoneType' object is not subscriptable (in build_router_table, expert planner)\n")
    assert f.known_issue is not None and f.known_issue["id"] == "demo#31"
