"""Numeric symptoms in metric logs (JSON lines, HF Trainer dict prints, plain text, Megatron rows, DeepSpeed
loss-scaler messages).  Logs written for these tests."""

from __future__ import annotations

import json
import math

import pytest

from ascendify.diagnose.engine import diagnose
from ascendify.diagnose.metrics import Tracker, load_symptoms, parse_metrics
from ascendify.diagnose.scanner import FULL_HEAD


def _run(tmp_path, lines, name="metrics.log", **kw):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return diagnose((str(p),), **kw)


def _ids(rep):
    return [f.id for f in rep.findings]


@pytest.mark.parametrize("line,expected", [
    ('{"loss": NaN, "grad_norm": Infinity, "loss_scale": 1.0, "step": 100}',
     {"loss": math.nan, "grad_norm": math.inf, "loss_scale": 1.0, "step": 100.0}),
    ("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.01}", {"loss": 0.0, "grad_norm": math.nan}),
    ("step 100 loss nan", {"step": 100.0, "loss": math.nan}),
    (" iteration      100/    1000 | consumed samples: 800 | lm loss: 2.305E+00 | loss scale: 1024.0 | grad norm: 1.234 |",
     {"step": 100.0, "loss": 2.305, "loss_scale": 1024.0, "grad_norm": 1.234}),
    ("[INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, reducing to 1",
     {"loss_scale": 1.0}),
    ("loss_scale=65536.0 step=3 loss=-inf", {"loss_scale": 65536.0, "step": 3.0, "loss": -math.inf}),
    ("eval_loss: 3.0 val_loss=2.0", {}),
    ("{'train_runtime': 10.0, 'train_loss': 0.0}", {}),
    ("epoch 1 step 5", {}),
])
def test_parse_metrics(line, expected):
    got = parse_metrics(line)
    assert set(got) == set(expected), got
    for k, v in expected.items():
        assert (math.isnan(got[k]) and math.isnan(v)) or got[k] == v, (k, got[k])


def test_jsonl_nan_loss_first_step(tmp_path):
    lines = [json.dumps({"step": s, "loss": 2.0 - s / 100, "grad_norm": 1.0, "loss_scale": 65536.0}) for s in range(1, 60)]
    lines += ['{"step": 60, "loss": NaN, "grad_norm": NaN, "loss_scale": 65536.0}',
              '{"step": 61, "loss": NaN, "grad_norm": NaN, "loss_scale": 65536.0}',
              '{"step": 62, "loss": NaN, "grad_norm": NaN, "loss_scale": 65536.0}']
    rep = _run(tmp_path, lines)
    f = rep.findings[0]
    assert f.id == "metric-loss-nonfinite" and f.title == "Loss became NaN/inf at step 60"
    assert f.details["first_step"] == 60 and f.evidence[0].line == 60
    g = next(x for x in rep.findings if x.id == "metric-grad-norm-nonfinite")
    # a NaN grad norm in the same record as a NaN loss is reported at once (not an overflow step the scaler skips)
    assert g.details["first_step"] == 60 and g.details["records_nonfinite"] == 3  # in the whole log (steps 60-62)
    assert "GradScaler" in f.fix and "seed-amp" in f.source and f.verified


def test_single_inf_grad_norm_with_a_dynamic_scaler_is_normal(tmp_path):
    lines = [f"step {s} loss {2.0 - s / 1000:.4f} grad_norm {'inf' if s == 3 else '1.1'} loss_scale {32768.0 if s > 3 else 65536.0}"
             for s in range(1, 40)]
    assert _ids(_run(tmp_path, lines)) == []


def test_hf_trainer_dict_prints_loss_zero_and_nan_grad(tmp_path):
    lines = ["***** Running training *****", "  Num examples = 1,000"]
    lines += [f"{{'loss': {1.5 - i * 0.1:.4f}, 'grad_norm': 3.2, 'learning_rate': 2e-05, 'epoch': 0.0{i}}}" for i in range(1, 4)]
    lines += ["{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 2e-05, 'epoch': 0.1}"] * 6
    rep = _run(tmp_path, lines)
    ids = _ids(rep)
    assert "metric-loss-zero" in ids and "metric-grad-norm-nonfinite" in ids
    z = next(f for f in rep.findings if f.id == "metric-loss-zero")
    assert z.evidence[0].line == 6 and "metric record 4 (line 6)" in z.title  # HF prints no step: the record is named
    assert not z.verified  # the label-masking explanation is this tool's heuristic


def test_loss_zero_needs_a_run(tmp_path):
    lines = [f"step {s} loss {'0.0' if s % 2 else '0.3'}" for s in range(1, 30)]
    assert "metric-loss-zero" not in _ids(_run(tmp_path, lines))


def test_megatron_loss_scale_collapse(tmp_path):
    scale, lines = 65536.0, []
    for it in range(1, 40):
        if it > 10 and scale > 0.5:
            scale /= 2
        lines.append(f" iteration {it:8d}/   10000 | consumed samples: {it * 8:10d} | lm loss: 9.1E+00 | "
                     f"loss scale: {scale:.1f} | grad norm: 1.0 | number of skipped iterations:   1 |")
    rep = _run(tmp_path, lines)
    f = next(x for x in rep.findings if x.id == "metric-loss-scale-collapse")
    assert f.details["loss_scale"] == "1" and f.details["max_loss_scale"] == "65536"
    assert f.details["first_step"] == 26  # 65536 / 2**16 = 1 at iteration 26
    assert f.severity == "error" and f.role == "cause"


def test_deepspeed_loss_scale_messages(tmp_path):
    lines = [f"[2026-05-01 10:00:{i:02d},000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping "
             f"step. Attempted loss scale: {2 ** (17 - i)}, reducing to {2 ** (16 - i)}" for i in range(1, 5)]
    lines.append("[2026-05-01 10:00:09,000] [INFO] [loss_scaler.py:190:update_scale] Current loss scale already at minimum - "
                 "cannot decrease scale anymore. Exiting run.")
    rep = _run(tmp_path, lines)
    f = next(x for x in rep.findings if x.id == "metric-loss-scale-collapse")
    assert f.evidence[0].line == 5 and f.details["message"].startswith("Current loss scale")
    assert f.ranks == set()  # DeepSpeed's message names no rank


def test_grad_norm_explodes(tmp_path):
    lines = [f"step {s} loss 2.1 grad_norm {1.0 + (s % 5) * 0.1:.2f}" for s in range(1, 30)]
    lines.append("step 30 loss 2.4 grad_norm 5120.5")
    rep = _run(tmp_path, lines)
    f = rep.findings[0]
    assert f.id == "metric-grad-norm-explode" and f.severity == "warning" and f.details["first_step"] == 30
    assert f.details["grad_norm"] == "5120.5" and f.details["median_before"] == "1.2"


def test_normal_training_has_no_symptom(tmp_path):
    lines = [f"2026-05-01 10:00:00,000 INFO step {s} loss {3.0 / (1 + s / 50):.4f} lr 1e-4 grad_norm {0.5 + s % 7 / 10:.2f} "
             f"loss_scale 65536.0" for s in range(1, 400)]
    assert _ids(_run(tmp_path, lines)) == []


def test_per_rank_trackers(tmp_path):
    lines = []
    for s in range(1, 8):
        lines.append(f"[rank0]:step {s} loss 0.0")
        lines.append(f"[rank1]:step {s} loss 1.{s}")
    rep = _run(tmp_path, lines)
    f = next(x for x in rep.findings if x.id == "metric-loss-zero")
    assert f.ranks == {0}


def test_nan_far_into_a_big_log_is_found_with_its_first_step(tmp_path):
    # beyond the first MiB the scanner samples metric lines; NaN/inf words are searched everywhere
    line = "2026-05-01 10:00:00,000 INFO train.py:212 step {s} loss 2.{f:04d} lr 3.0e-04 tokens/s 81234.5 grad_norm 1.02\n"
    p = tmp_path / "big.log"
    s = 0
    with open(p, "w") as fh:
        size = 0
        while size < 3 * FULL_HEAD:
            s += 1
            text = line.format(s=s, f=s % 10000)
            fh.write(text)
            size += len(text)
        first_nan = s + 1
        for k in range(5):
            fh.write(f"2026-05-01 10:00:00,000 INFO train.py:212 step {first_nan + k} loss nan lr 3.0e-04 grad_norm nan\n")
    rep = diagnose((str(p),))
    f = rep.findings[0]
    assert f.id == "metric-loss-nonfinite" and f.details["first_step"] == first_nan
    assert f.evidence[0].line == first_nan


def test_tracker_thresholds_come_from_the_data():
    t = load_symptoms().thresholds
    assert t["zero_loss_records"] == 5 and t["scale_floor"] == 1.0
    tr = Tracker({"zero_loss_records": 2})
    assert tr.feed({"loss": 0.0}, 1, "a") == []
    assert [e.id for e in tr.feed({"loss": 0.0}, 2, "b")] == ["loss-zero"]


def test_symptom_data_complete():
    data = load_symptoms()
    assert set(data.symptoms) == {"loss-nonfinite", "grad-norm-nonfinite", "loss-zero", "loss-scale-collapse", "grad-norm-explode"}
    for s in data.symptoms.values():
        assert s.cause and s.fix and s.next_step and s.source and 0 < s.confidence <= 1
        assert s.severity in ("error", "warning") and s.role in ("cause", "consequence", "wrapper")


def test_one_nan_grad_norm_with_a_zero_loss(tmp_path):
    # a pasted HF Trainer excerpt: progress bars and one record whose loss is 0.0 and grad norm NaN
    lines = [f"  0%|          | {i}/13080 [08:{i % 60:02d}<28:44:51,  7.95s/it]" for i in range(50, 60)]
    lines += ["{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 4.5e-06, 'epoch': 0.02}", "",
              "  0%|          | 61/13080 [08:46<29:39:21,  8.20s/it]"]
    rep = _run(tmp_path, lines)
    assert [f.id for f in rep.findings] == ["metric-grad-norm-nonfinite"]
    assert rep.findings[0].evidence[0].line == 11


def test_one_nan_grad_norm_among_many_finite_is_not_reported(tmp_path):
    lines = [f"{{'loss': 1.{i:02d}, 'grad_norm': {'nan' if i == 4 else '2.5'}, 'epoch': 0.{i:02d}}}" for i in range(20)]
    assert _ids(_run(tmp_path, lines)) == []


def test_short_paste_with_nan_grad_norms(tmp_path):
    # two records, both NaN: below the 3-record threshold, but every record that prints a grad norm is NaN
    lines = ["{'loss': 1.2, 'grad_norm': nan, 'epoch': 0.1}", "{'loss': 1.1, 'grad_norm': nan, 'epoch': 0.2}"]
    assert _ids(_run(tmp_path, lines)) == ["metric-grad-norm-nonfinite"]


_COLLAPSE = [  # a Megatron run whose fp16 loss scale halves from step 110, then grad norm and loss turn NaN
    "iteration      100/  5000 | lm loss: 2.345E+00 | loss scale: 65536.0 | grad norm: 1.234 |",
    "iteration      110/  5000 | lm loss: 2.301E+00 | loss scale: 8192.0 | grad norm: 15.8 |",
    "iteration      120/  5000 | lm loss: 2.299E+00 | loss scale: 128.0 | grad norm: nan |",
    "iteration      130/  5000 | lm loss: nan | loss scale: 1.0 | grad norm: nan |",
    "iteration      140/  5000 | lm loss: nan | loss scale: 1.0 | grad norm: nan |",
]


@pytest.mark.parametrize("stamp", ["", "[2026-05-02 10:00:{s:02d}] ", "05-02 10:00:{s:02d} "],
                         ids=["untimed", "full-stamp", "year-less"])
def test_symptom_that_began_first_leads(tmp_path, stamp):
    """The loss scale started falling at step 110, the grad norm went NaN at 120, the loss at 130; all three are
    decided on the step-130 record.  They are ordered by onset (before: the loss NaN led, the collapse came last),
    with and without timestamps, and the NaN counts are those of the whole log (before: 1 and 2, counted up to the
    record that decided each)."""
    lines = [stamp.format(s=10 * i + 1) + ln for i, ln in enumerate(_COLLAPSE)]
    rep = _run(tmp_path, lines)
    ids = _ids(rep)
    assert ids[:3] == ["metric-loss-scale-collapse", "metric-grad-norm-nonfinite", "metric-loss-nonfinite"], ids
    by = {f.id: f for f in rep.findings}
    assert by["metric-loss-nonfinite"].details["records_nonfinite"] == 2
    assert by["metric-grad-norm-nonfinite"].details["records_nonfinite"] == 3
    assert by["metric-grad-norm-nonfinite"].details["records_with_value"] == 5
    assert by["metric-loss-scale-collapse"].details["first_decrease_step"] == 110
    if stamp.startswith("[2026"):
        import datetime as dt

        first = by["metric-loss-scale-collapse"].first_time
        assert dt.datetime.fromtimestamp(first).strftime("%Y-%m-%d %H:%M:%S") == "2026-05-02 10:00:11"
