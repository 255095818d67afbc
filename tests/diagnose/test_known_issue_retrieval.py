"""Retrieval robustness of the known-issue layer, with seed records written here: error lines outweigh the noise
around them, a long quote is found by its distinctive words, a weak match is offered as the closest known issue
(not asserted), the framework the log shows breaks ties; then the packaged records added for the families of
issue 21, each found by a log worded differently from its thread."""

from __future__ import annotations

import pytest

from ascendify.diagnose import known_issues as ki
from ascendify.diagnose.engine import diagnose
from tests.diagnose.diag_util import ki_record, write_log


GATHER = ki_record("demo#1", ["RuntimeError: kernel GatherV9 failed: index tensor holds values past the table size"],
                   "Token ids beyond the embedding table.", "Resize the embedding to the tokenizer's vocabulary.")
WARMUP = ki_record("demo#2", ["INFO warmup scheduler loaded checkpoint shard progress tokenizer"],
                   "A warm-up step that logs shard loading.", "Wait for the warm-up to finish.")


def test_query_weights_favour_error_lines():
    w = ki.query_weights(["INFO 01-01 loaded shard 3 of 8", "RuntimeError: kernel GatherV9 failed"])
    assert w["gatherv"] == 1.0 and w["failed"] == 1.0
    assert w["loaded"] == ki.NOISE_WEIGHT and w["shard"] == ki.NOISE_WEIGHT
    # a word on both kinds of line counts as an error word
    assert ki.query_weights(["INFO kernel ready", "kernel failed"])["kernel"] == 1.0


def test_noise_lines_do_not_carry_a_match_against_the_error_line(tmp_path, use_known_issues):
    use_known_issues([GATHER, WARMUP])
    log = ("INFO warmup scheduler loaded checkpoint shard progress tokenizer 1/8\n"
           "INFO warmup scheduler loaded checkpoint shard progress tokenizer 2/8\n"
           "Traceback (most recent call last):\n  File \"/srv/app/run.py\", line 3, in <module>\n"
           "RuntimeError: kernel GatherV9 failed: an index tensor holds values past the table size\n")
    top = diagnose((write_log(tmp_path, log),)).findings[0]
    assert top.known_issue is not None and top.known_issue["id"] == "demo#1"
    assert "Resize the embedding" in top.fix


LONG = ki_record("demo#3", ["AttributeError: 'FancyRopeCache' object has no attribute 'sin_table_cached' when serving the "
                            "Orion-27B-Chat-Instruct checkpoint with tensor parallel 8 on node alpha"],
                 "The rotary cache of this model class is built lazily and was never created.",
                 "Upgrade the serving plugin to the release that builds the rotary cache eagerly.")


def test_a_long_quote_is_found_by_its_distinctive_words(tmp_path, use_known_issues):
    idx = use_known_issues([LONG, GATHER])
    short = "AttributeError: 'FancyRopeCache' object has no attribute 'sin_table_cached'"
    m = idx.best([short])
    assert m is not None and m.record["id"] == "demo#3"
    assert 0.5 <= m.confidence < 1.0  # the log lacks the model name and the rest of the sentence: close, not whole
    whole = idx.best([LONG["quote"][0]])
    assert whole is not None and whole.confidence == 1.0


def test_a_weak_match_is_the_closest_known_issue_not_an_assertion(tmp_path, use_known_issues):
    use_known_issues([LONG, GATHER])
    weak = "AttributeError: object has no attribute 'sin_table_cached'\n"  # the class name missing too
    top = diagnose((write_log(tmp_path, weak),)).findings[0]
    assert top.known_issue["id"] == "demo#3" and top.known_issue["confidence"] < ki.CLOSE_CONFIDENCE
    assert "closest known issue demo#3" in top.cause and "not certain" in top.cause
    assert top.cause.startswith("Perhaps: ") and top.fix.startswith("If it is that issue: ")
    from ascendify.diagnose.cli import render_text
    text = render_text(diagnose((write_log(tmp_path, weak, "w.log"),)))
    assert "   closest  demo#3 (match" in text and "not certain" in text and "   known " not in text
    strong = diagnose((write_log(tmp_path, LONG["quote"][0] + "\n", "b.log"),)).findings[0]
    assert strong.known_issue["confidence"] >= ki.CLOSE_CONFIDENCE
    assert "closest" not in strong.cause and "not certain" not in strong.cause
    assert strong.fix.startswith("Upgrade the serving plugin")


def test_ties_go_to_the_issue_of_the_framework_the_log_shows(use_known_issues):
    # two threads whose quotes the log holds whole: the one of the log's framework wins the tie
    a = ki_record("demo#4", ["radix scheduler queue drained unexpectedly"], "A scheduler bug seen without a framework.",
                  "Upgrade the scheduler.", framework=None, title="radix scheduler queue drained")
    b = ki_record("demo#5", ["queue drained unexpectedly while batching prompts"], "An SGLang scheduler bug.", "Upgrade SGLang.",
                  framework="sglang", title="batching prompts queue drained")
    idx = use_known_issues([a, b, GATHER, WARMUP, LONG])
    log = ["RuntimeError: radix scheduler queue drained unexpectedly while batching prompts"]
    ranked = idx.search(log, framework="sglang")
    assert round(ranked[0].confidence, 2) == round(ranked[1].confidence, 2)
    assert idx.best(log, framework="sglang").record["id"] == "demo#5"
    assert idx.best(log, framework="vllm").record["id"] == "demo#4"  # a vLLM log: the SGLang thread weighs less


def test_a_log_whose_reason_text_alone_is_the_answer(tmp_path, use_known_issues):
    use_known_issues([GATHER])  # no record knows this message: the wrapper's own reason is the finding
    log = ("[ERROR] 2026-02-03-04:05:06 (PID:77, Device:0, RankID:-1) ERR01100 OPS call acl api failed\n"
           "E89999: Inner Error!\n"
           "E89999: [PID: 77] 2026-02-03-04:05:06.789.012 op[ScatterNdUpdate], the indices of input must be sorted in "
           "ascending order[FUNC:CheckIndices][FILE:scatter_nd_update.cc][LINE:41]\n")
    top = diagnose((write_log(tmp_path, log),)).findings[0]
    assert "indices of input must be sorted in ascending order" in top.title
    assert top.known_issue is None
    assert "ascending" in (top.reason or "")


# ---------------------------------------------------------------- packaged records of the issue-21 families

@pytest.mark.packaged_known_issues
@pytest.mark.parametrize("log, rid, words", [
    # graph mode with MLA: our wording of the tiling check, another head count
    ("[rank2]: RuntimeError: EZ9999: Inner Error!\n"
     "[rank2]: EZ9999: [PID: 5150] 2026-03-04-05:06:07.890.123 numHeads / numKvHeads = 4, MLA only support "
     "{32, 64, 128}.[FUNC:CheckMlaAttrs][FILE:incre_flash_attention_tiling_check.cc][LINE:1218]\n",
     "vllm-ascend#933", ("tensor-parallel", "eager")),
    # a complex rotary table gathered on the NPU
    ("RuntimeError: call aclnnGather failed, error code is 161002\n"
     "Tensor self not implemented for DT_COMPLEX128\n", "vllm-omni#6571", ("cos", "sin")),
    # torch.compile without a C++ compiler
    ("torch._inductor.exc.InductorError: InvalidCxxCompiler: No working C++ compiler found in "
     "torch._inductor.config.cpp.cxx: (None, 'g++')\n", "nixpkgs#446105", ("compiler",)),
])
def test_packaged_family_records_match_logs_worded_differently(tmp_path, monkeypatch, log, rid, words):
    faq = "https://github.com/vllm-project/vllm-ascend/blob/main/docs/source/faqs.md"
    # leave out the FAQ page's own answers (and any thread with a URL of its own spelling): the record under test answers
    monkeypatch.setenv(ki.EXCLUDE_ENV, ",".join(r["url"] for r in ki.load().records if r["url"].startswith(faq)))
    rep = diagnose((write_log(tmp_path, log),))
    top = rep.findings[0]
    assert top.known_issue is not None and top.known_issue["id"] == rid, top.known_issue
    for w in words:
        assert w in top.fix.lower()


@pytest.mark.packaged_known_issues
def test_packaged_records_of_this_helper_are_valid_and_cited():
    recs, problems = ki.read_records([(n, d) for n, d in ki.data_files() if n == "field.jsonl"])
    assert not problems and len(recs) == 13
    assert all(r["url"].startswith("https://github.com/") and r["quote"] for r in recs)
