"""Streaming stays bounded with the structure readers on: many tracebacks with distinct messages, per-rank metric
lines and CANN blocks do not make memory grow with the log (speed is measured in bench/diagnose_bench.py)."""

from __future__ import annotations

import tracemalloc

from ascendify.diagnose.engine import KEYS_PER_SIGNATURE, Aggregator
from ascendify.diagnose.scanner import BLOCK, FileStats, Scanner
from ascendify.diagnose.signatures import load
from tests.diagnose.generated_log import GeneratedLog


class _Noisy(GeneratedLog):
    """``size`` bytes of a torchrun console, generated as read (never held in memory)."""

    def _next(self) -> bytes:
        n, r = self.n, self.n % 4
        if n % 97 == 0:
            return (f"[rank{r}]:Traceback (most recent call last):\n"
                    f'[rank{r}]:  File "/home/u/job/data.py", line {n % 500}, in load\n'
                    f"[rank{r}]:    row = table[key]\n"
                    f"[rank{r}]:KeyError: 'row_{n}'\n").encode()
        if n % 101 == 0:
            return (f"[rank{r}]:[ERROR] 2026-05-01-10:00:00 (PID:9, Device:{r}, RankID:{r}) ERR01100 OPS call acl api failed\n"
                    f"[rank{r}]:EZ9999: Inner Error!\n").encode()
        if n % 3 == 0:
            return f'[rank{r}]:{{"step": {n}, "loss": 2.{n % 1000:03d}, "grad_norm": 1.{n % 7}, "loss_scale": 65536.0}}\n'.encode()
        return f"[rank{r}]:2026-05-01 10:00:00,000 INFO step {n} tokens/s 81234.5 lr 3e-4\n".encode()


def _scan(size: int):
    kb = load()
    tracemalloc.start()
    agg = Aggregator(kb)
    stats = FileStats("noisy")
    for hit in Scanner().scan_stream(_Noisy(size), "noisy", stats, None):
        agg.add(hit)
    agg.end_file("noisy")
    findings = agg.result()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return findings, stats, peak


def test_bounded_with_tracebacks_metrics_and_blocks():
    _, _, small = _scan(2 * BLOCK)
    findings, stats, peak = _scan(8 * BLOCK)
    exc = [f for f in findings if f.id == "python-exception"]
    assert len(exc) == KEYS_PER_SIGNATURE + 1  # distinct messages capped, the rest under (other)
    assert {r for f in exc for r in f.ranks} == {0, 1, 2, 3}
    assert all(f.frame and f.frame["path"] == "/home/u/job/data.py" for f in exc)
    assert not any(f.id.startswith("metric-") for f in findings)  # healthy metrics
    wrappers = [f for f in findings if f.role == "wrapper"]
    assert wrappers and all(f.count > 100 for f in wrappers)
    assert stats.lines > 100000
    assert peak < 8 * BLOCK, peak
    assert peak - small < 2 * BLOCK, (small, peak)
