"""Levers: sharding divides what it should; --batch auto checked against real CPU steps."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ascendify.errors import AscendifyError  # noqa: E402
from ascendify.fit import chip as chipmod  # noqa: E402
from ascendify.fit.engine import FitSession, StepOptions  # noqa: E402
from ascendify.fit.levers import Shard, find_batch, sharded_peak  # noqa: E402
from ascendify.fit.run import fit  # noqa: E402
from ascendify.probe.spec import parse_spec  # noqa: E402
from tests.fit import models  # noqa: E402
from tests.fit._real import real_peak  # noqa: E402


@pytest.fixture
def chip(monkeypatch):
    """A chip of ``cap[0]`` bytes, no allocator rounding, no runtime reserve."""
    cap = [1 << 30]
    monkeypatch.setattr(chipmod, "hbm_bytes", lambda soc: cap[0])
    monkeypatch.setattr(chipmod, "hbm_source", lambda soc: "test")
    monkeypatch.setattr(chipmod, "reserved_for", lambda events, peak, conf=None, soc=None: peak)
    monkeypatch.setattr(chipmod, "runtime_reserve", lambda: 0)
    return cap


def test_shard_factors():
    assert Shard("zero1", 4).factors() == {"optimizer_states": 0.25, "gradients": 1.0, "parameters": 1.0}
    assert Shard("zero2", 4).factors() == {"optimizer_states": 0.25, "gradients": 0.25, "parameters": 1.0}
    assert Shard("zero3", 8).factors() == {"optimizer_states": 0.125, "gradients": 0.125, "parameters": 0.125}
    assert Shard("fsdp", 2).factors() == Shard("zero3", 2).factors()
    assert Shard().factors() == {"optimizer_states": 1.0, "gradients": 1.0, "parameters": 1.0}


def test_sharding_divides_states_then_gradients_then_parameters():
    m = FitSession(models.mlp, [parse_spec("x:5,8")]).measure(StepOptions())
    tl, cat = m.timeline, m.category_timeline

    def by_hand(f_opt, f_grad, f_par):
        return int(max(tl[i] - (1 - f_opt) * cat["optimizer_states"][i] - (1 - f_grad) * cat["gradients"][i]
                       - (1 - f_par) * cat["parameters"][i] for i in range(len(tl))))

    assert sharded_peak(m, Shard("zero1", 4)) == by_hand(0.25, 1, 1)
    assert sharded_peak(m, Shard("zero2", 4)) == by_hand(0.25, 0.25, 1)
    assert sharded_peak(m, Shard("zero3", 4), gather_bytes=100) == by_hand(0.25, 0.25, 0.25) + 100
    # the peak of this step is in the Adam step: P + G + 2P states (+16 B of step counters) + P scratch
    P = 848
    assert m.peak_bytes == m.split["temporaries"] + 4 * P + 16 + m.split["inputs"]
    assert by_hand(0.25, 1, 1) < m.peak_bytes
    assert by_hand(0.25, 0.25, 0.25) < by_hand(0.25, 0.25, 1) < by_hand(0.25, 1, 1)


def test_fit_rows_each_lever_alone_and_together(chip):
    r = fit(models.blocks, ["x:64,8"], chip="Ascend910B3", amp="bf16", checkpointing="auto", cards=4, shard="zero2")
    levers = [row["lever"] for row in r["rows"]]
    assert levers == ["baseline", "amp bf16", "checkpointing auto", "zero2 x4",
                      "amp bf16 + checkpointing auto + zero2 x4"]
    base = r["rows"][0]
    z2 = r["rows"][3]
    assert z2["how"] == "computed from the measured split" and base["how"] == "measured"
    assert z2["peak_bytes"] < base["peak_bytes"]
    assert r["peak_bytes"] == r["rows"][-1]["peak_bytes"]
    assert r["fits"] is True and r["margin_bytes"] == (1 << 30) - r["reserved_bytes"]
    assert set(r["split"]) == {"parameters", "gradients", "optimizer_states", "inputs", "activations", "temporaries"}


def test_no_lever_and_no_fit_suggests_amp_and_checkpointing(chip):
    chip[0] = 1000
    r = fit(models.blocks, ["x:64,8"], chip="Ascend910B3")
    assert r["fits"] is False and r["margin_bytes"] < 0
    assert [row["lever"] for row in r["rows"]] == ["baseline", "amp bf16 (suggested)", "checkpointing auto (suggested)"]


def test_batch_auto_matches_real_cpu_steps(chip):
    # capacity: half a sample above the predicted peak at batch 96, so the answer is 96
    s = FitSession(models.wide_mlp, [parse_spec("x:8,64")])
    p96 = s.measure(StepOptions(), batch=96).peak_bytes
    p97 = s.measure(StepOptions(), batch=97).peak_bytes
    chip[0] = (p96 + p97) // 2
    row = find_batch(s, StepOptions(), Shard(), "Ascend910B3", 8)
    assert row["batch"] == 96 and row["next_batch"] == 97
    assert row["tried"][:5] == [8, 16, 32, 64, 128]
    # an independent measurement of real CPU steps at that batch and the next size up
    real96 = real_peak(models.wide_mlp, "x:96,64")
    real97 = real_peak(models.wide_mlp, "x:97,64")
    assert real96 <= chip[0] < real97
    assert abs(real96 - p96) <= 0.01 * real96


def test_batch_auto_needs_a_chip_and_reports_when_nothing_fits(chip):
    with pytest.raises(AscendifyError, match="needs --chip"):
        fit(models.mlp, ["x:4,8"], batch_auto=True)
    chip[0] = 10
    with pytest.raises(AscendifyError, match="even at batch 1"):
        fit(models.mlp, ["x:4,8"], chip="Ascend910B3", batch_auto=True)


def test_bad_options():
    with pytest.raises(AscendifyError, match="--shard zero1 needs --cards"):
        fit(models.mlp, ["x:4,8"], shard="zero1")
    with pytest.raises(AscendifyError, match="unknown soc_version"):
        fit(models.mlp, ["x:4,8"], chip="Ascend123")
    with pytest.raises(AscendifyError, match="names no module"):
        fit(models.mlp, ["x:4,8"], checkpointing="blocks.*")


def test_batch_auto_at_the_search_cap_says_so(chip, monkeypatch):
    from ascendify.fit import levers

    monkeypatch.setattr(levers, "MAX_BATCH", 48)
    chip[0] = 1 << 40  # everything fits
    r = fit(models.mlp, ["x:5,8"], chip="Ascend910B3", batch_auto=True)
    auto = r["rows"][-1]
    assert auto["lever"] == "batch auto" and auto["batch"] == 48  # the cap itself is tried, not only 40
    assert auto["tried"] == [5, 10, 20, 40, 48] and auto["next_batch"] is None
    assert auto["batch_capped"] is True and r["batch_capped"] is True
    assert any("search cap (48)" in n and "batch 48 still fits" in n for n in r["notes"])


def test_batch_auto_below_the_cap_is_not_capped(chip):
    s = FitSession(models.wide_mlp, [parse_spec("x:8,64")])
    chip[0] = s.measure(StepOptions(), batch=20).peak_bytes
    r = fit(models.wide_mlp, ["x:8,64"], chip="Ascend910B3", batch_auto=True)
    auto = r["rows"][-1]
    assert auto["batch"] == 20 and auto["next_batch"] == 21
    assert auto["batch_capped"] is False and r["batch_capped"] is False
    assert not any("search cap" in n for n in r["notes"])
