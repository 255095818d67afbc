"""Serving-benchmark symptom: the mean time per output token stepping up with concurrency (the KV cache no longer
holds the requests: queueing / preemption), versus the gentle slope of a healthy server."""

from __future__ import annotations

from tests.diagnose.diag_util import diagnose_text


def _runs(pairs):
    out = []
    for conc, tpot in pairs:
        out += ["============ Serving Benchmark Result ============", "Successful requests:                     200",
                f"Maximum request concurrency:             {conc}", "Mean TTFT (ms):                          120.31",
                f"Mean TPOT (ms):                          {tpot}"]
    return "\n".join(out) + "\n"




def test_tpot_step_with_concurrency(tmp_path):
    rep = diagnose_text(tmp_path, _runs([(16, 31.2), (32, 34.75), (64, 88.1)]))
    [f] = [x for x in rep.findings if x.id == "tpot-step"]
    assert f.details["concurrency"] == [32.0, 64.0] and f.details["mean_tpot_ms"] == [34.75, 88.1]
    assert "2.5x" in f.title and "--gpu-memory-utilization" in f.fix and f.severity == "warning"
    assert [e.line for e in f.evidence] == [10, 15]


def test_a_slope_is_not_a_step(tmp_path):
    rep = diagnose_text(tmp_path, _runs([(16, 31.2), (32, 36.0), (64, 45.9), (128, 70.0)]), "slope.log")
    assert not [x for x in rep.findings if x.id == "tpot-step"]
