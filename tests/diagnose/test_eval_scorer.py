"""tools/diagnose_eval.py: only the tool's own words of the first finding count; echoed log text earns nothing."""

from __future__ import annotations

import importlib.util
import json
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("diagnose_eval", os.path.join(REPO, "tools", "diagnose_eval.py"))
ev = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ev)

# A made-up log in the shape of a CANN message whose Reason text names the cause.
LOG = (
    "Traceback (most recent call last):\n"
    '  File "train.py", line 12, in <module>\n'
    "RuntimeError: widget init failed, error code is 4242\n"
    "EQ0001: The spindle daemon could not start. Reason: An older spindle job still holds the card.\n"
    "        Solution: Stop the older spindle job, wait a moment and start again.\n"
)
LABEL = {
    "url": "https://example.org/thread/1",
    "family": "synthetic",
    "cause": "a stale job holds the device",
    "fix": "terminate the stale job",
    "cause_any": [["older", "job"], ["stale", "job"]],
    "fix_any": [["terminate"], ["kill"], ["stop", "job"]],
}


def _finding(**kw):
    base = {"id": "f1", "title": "", "cause": "", "fix": "", "next_step": "", "details": {}, "evidence": []}
    base.update(kw)
    return base


def _runner(findings, seen=None):
    def run(log_path, exclude_urls):
        if seen is not None:
            seen.append(list(exclude_urls))
        return {"findings": findings}
    return run


@pytest.fixture
def log_file(tmp_path):
    p = tmp_path / "001.log"
    p.write_text(LOG, encoding="utf-8")
    return str(p)


def test_echoed_log_lines_do_not_pass(log_file):
    # The tool repeats the message's own Reason and Solution lines (and quotes them): nothing of its own.
    echo = _finding(
        title="EQ0001: The spindle daemon could not start.",
        cause="Reason: An older spindle job still holds the card.",
        fix="The log says: 'Stop the older spindle job, wait a moment and start again.'",
        next_step="Solution: Stop the older spindle job, wait a moment and start again.",
    )
    r = ev.score_one("001", log_file, LABEL, run=_runner([echo]))
    assert r["pass"] is False
    assert r["cause_hit"] is None and r["fix_hit"] is None


def test_evidence_is_never_counted(log_file):
    f = _finding(title="Unknown failure", cause="No known error.", fix="Check the log.",
                 evidence=[{"text": "a stale job holds the card; terminate it"}],
                 python_frame={"text": "stale job terminate"})
    r = ev.score_one("001", log_file, LABEL, run=_runner([f]))
    assert r["pass"] is False


def test_correct_answer_in_own_words_passes(log_file):
    f = _finding(title="Device held by a stale job",
                 cause="A stale job from an earlier run still owns the NPU, so the daemon cannot attach.",
                 fix="Terminate the stale job (find it with npu-smi info), wait about 10 s, then restart.")
    r = ev.score_one("001", log_file, LABEL, run=_runner([f]))
    assert r["pass"] is True
    assert r["cause_hit"] == ["stale", "job"]
    assert r["fix_hit"] == ["terminate"]


def test_own_sentence_survives_next_to_an_echoed_one(log_file):
    # Same line: an echoed clause is dropped, the tool's own clause is kept.
    f = _finding(cause="Reason: An older spindle job still holds the card. In other words a stale job owns the device.",
                 fix="Kill it: the stale job must terminate first.")
    r = ev.score_one("001", log_file, LABEL, run=_runner([f]))
    assert r["pass"] is True


def test_generic_answer_does_not_pass(log_file):
    f = _finding(title="RuntimeError", cause="The program raised a Python exception.",
                 fix="Read the traceback and check the log above it.")
    r = ev.score_one("001", log_file, LABEL, run=_runner([f]))
    assert r["pass"] is False


def test_only_the_first_finding_counts(log_file):
    wrong = _finding(id="first", cause="Memory ran out.", fix="Lower the batch size.")
    right = _finding(id="second", cause="A stale job owns the device.", fix="Terminate it.")
    r = ev.score_one("001", log_file, LABEL, run=_runner([wrong, right]))
    assert r["finding"] == "first" and r["pass"] is False


def test_cause_alone_is_not_enough(log_file):
    f = _finding(cause="A stale job owns the device.", fix="Look at npu-smi.")
    r = ev.score_one("001", log_file, LABEL, run=_runner([f]))
    assert r["cause_hit"] == ["stale", "job"] and r["fix_hit"] is None and r["pass"] is False


def test_details_prose_counts_but_details_quotes_do_not(log_file):
    f = _finding(title="Device busy", details={"explanation": "A stale job owns the device; terminate it.",
                                               "quote": "terminate the stale job"})
    assert ev.score_one("001", log_file, LABEL, run=_runner([f]))["pass"] is True
    g = _finding(title="Device busy", details={"quote": "a stale job, terminate", "lines": ["stale job terminate"]})
    assert ev.score_one("001", log_file, LABEL, run=_runner([g]))["pass"] is False


def test_the_log_url_and_aliases_are_excluded(log_file):
    seen = []
    lab = dict(LABEL, exclude_urls=["https://example.org/mirror/1"])
    ev.score_one("001", log_file, lab, run=_runner([], seen))
    assert seen == [["https://example.org/thread/1", "https://example.org/mirror/1"]]


def test_other_spellings_of_the_same_source_are_excluded_too(log_file):
    # The index holds the same FAQ page pinned to a commit, in Chinese, with a line anchor,
    # and the same issue under the repository's old name; an unrelated page and a neighbouring
    # issue number must stay in.
    ki = [
        "https://github.com/Ascend/MindSpeed/blob/028de58/docs/zh/FAQ.md?plain=1#L95",
        "https://gitee.com/ascend/MindSpeed/blob/master/docs/zh/FAQ.md",
        "https://github.com/Ascend/MindSpeed/blob/master/docs/en/features/mc2.md",
        "https://github.com/hiyouga/LLaMA-Factory/issues/3839#issuecomment-2",
        "https://github.com/hiyouga/LlamaFactory/issues/383",
        "https://github.com/hiyouga/LlamaFactory/pull/3839",
    ]
    seen = []
    lab = dict(LABEL, url="https://github.com/Ascend/MindSpeed/blob/master/docs/en/FAQ.md#torch-extensions-stuck",
               exclude_urls=["https://github.com/hiyouga/LlamaFactory/issues/3839"])
    r = ev.score_one("001", log_file, lab, run=_runner([], seen), ki_urls=ki)
    assert seen == [[lab["url"], "https://github.com/hiyouga/LlamaFactory/issues/3839",
                     "https://gitee.com/ascend/MindSpeed/blob/master/docs/zh/FAQ.md",
                     "https://github.com/Ascend/MindSpeed/blob/028de58/docs/zh/FAQ.md?plain=1#L95",
                     "https://github.com/hiyouga/LLaMA-Factory/issues/3839#issuecomment-2"]]
    assert r["excluded"] == 5


def test_canonical_url_keeps_different_sources_apart():
    c = ev.canonical_url
    assert c("https://www.github.com/a/b/issues/5") == c("http://github.com/A/B/issues/5#issuecomment-9")
    assert c("https://github.com/a/b/issues/5") != c("https://github.com/a/b/issues/50")
    assert c("https://github.com/a/b/issues/5") != c("https://github.com/a/b/pull/5")
    assert c("https://github.com/a/b/pull/5") == c("https://gitee.com/a/b/pulls/5")
    assert c("https://github.com/a/b/blob/main/docs/source_zh_cn/faq.md") == c(
        "https://github.com/a/b/blob/v1.0/docs/source_en/faq.md#q1")
    assert c("https://github.com/a/b/blob/main/x.md") != c("https://github.com/a/c/blob/main/x.md")
    assert c("https://example.org/Doc/page/") == c("https://example.org/doc/page?x=1")


def test_ki_record_urls_reads_the_packaged_records(tmp_path):
    d = tmp_path / "src" / "ascendify" / "diagnose" / "data" / "known_issues"
    d.mkdir(parents=True)
    (d / "a.jsonl").write_text('{"url": "https://x.org/1"}\n\nnot json\n{"url": "https://x.org/2"}\n', encoding="utf-8")
    (d / "notes.txt").write_text('{"url": "https://x.org/3"}\n', encoding="utf-8")
    assert ev.ki_record_urls(str(tmp_path / "src")) == ("https://x.org/1", "https://x.org/2")
    assert ev.ki_record_urls(str(tmp_path / "missing")) == ()


def test_the_copy_named_on_pythonpath_is_the_one_scored(tmp_path, monkeypatch):
    # PYTHONPATH=<clean copy>/src must score that copy, not the checkout holding this script.
    copy = tmp_path / "copy" / "src"
    (copy / "ascendify").mkdir(parents=True)
    (copy / "ascendify" / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path / "nothing"), str(copy)]))
    assert ev.tool_src() == str(copy)
    monkeypatch.delenv("PYTHONPATH")
    assert ev.tool_src() == os.path.join(ev.ROOT, "src")


def test_underscore_and_hyphen_match_each_other():
    assert ev.groups_hit("set VLLM-WORKER-MULTIPROC-METHOD=spawn", [["VLLM_WORKER_MULTIPROC_METHOD"]]) == [
        "VLLM_WORKER_MULTIPROC_METHOD"]
    assert ev.groups_hit("lower the batch", [["gpu-memory-utilization"]]) is None


def test_evaluate_totals_and_cli_errors(tmp_path, capsys):
    d = tmp_path / "set"
    d.mkdir()
    (d / "001.log").write_text(LOG, encoding="utf-8")
    (d / "002.log").write_text("RuntimeError: gear slipped\n", encoding="utf-8")
    labels = {"001": LABEL, "002": dict(LABEL, family="other", cause_any=[["gear"]], fix_any=[["oil"]])}
    good = _finding(cause="A stale job owns the device.", fix="Terminate it.")
    out = ev.evaluate(str(d), labels, run=_runner([good]))
    assert out["total"] == 2 and out["passed"] == 1 and out["rate"] == 0.5
    assert out["families"] == {"other": {"passed": 0, "total": 1}, "synthetic": {"passed": 1, "total": 1}}
    lab_path = tmp_path / "labels.json"
    lab_path.write_text(json.dumps({"003": LABEL}), encoding="utf-8")
    assert ev.main(["--set", str(d), "--labels", str(lab_path)]) == 2
    assert "no log for label(s) 003" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"001": dict(LABEL, fix_any=[[]])}), encoding="utf-8")
    assert ev.main(["--set", str(d), "--labels", str(bad)]) == 2
    assert "non-empty" in capsys.readouterr().err
