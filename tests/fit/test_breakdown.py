"""The step's breakdown against numbers computed by hand (fp32 = 4 bytes, bf16 = 2)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from ascendify.fit.engine import FitSession, StepOptions  # noqa: E402
from ascendify.probe.spec import parse_spec  # noqa: E402
from tests.fit import models  # noqa: E402
from tests.fit.models import D, FF, H, I, O, T, V  # noqa: E402


def session(factory, *inputs, optimizer="adam"):
    return FitSession(factory, [parse_spec(s) for s in inputs], optimizer=optimizer)


def test_mlp_fp32_parameters_gradients_adam_states_activations():
    B = 5
    m = session(models.mlp, f"x:{B},{I}").measure(StepOptions())
    P = (I * H + H + H * O + O) * 4
    assert m.totals["parameters"] == P == 848
    assert m.totals["gradients"] == P
    # Adam: exp_avg and exp_avg_sq per parameter, plus a float32 `step` scalar per parameter tensor (4 tensors)
    assert m.totals["optimizer_states"] == 2 * P + 4 * 4
    assert m.totals["inputs"] == B * I * 4
    # saved for backward: the ReLU output (ReLU and the second Linear save the same storage); the first
    # Linear saves only x (an input) because x needs no gradient, the second saves W2 (a parameter)
    assert m.totals["saved_activations"] == B * H * 4
    assert m.modules == {"1": B * H * 4}
    assert m.peak_bytes == max(m.timeline)
    assert sum(m.split.values()) == m.peak_bytes


def test_mlp_peak_is_in_the_foreach_adam_step_with_its_split():
    # tiny activations: the peak is inside the optimizer step, where parameters, gradients and states
    # are live with one parameter-sized foreach temporary list
    B = 5
    m = session(models.mlp, f"x:{B},{I}").measure(StepOptions())
    P = 848
    assert m.peak_phase == "optimizer"
    assert m.split["parameters"] == P
    assert m.split["gradients"] == P
    assert m.split["optimizer_states"] == 2 * P + 16
    assert m.split["activations"] == 0


def test_sgd_momentum_keeps_one_buffer_and_none_keeps_nothing():
    P = 848
    sgd = session(models.mlp, f"x:5,{I}", optimizer="sgd").measure(StepOptions(optimizer="sgd"))
    assert sgd.totals["optimizer_states"] == P
    none = session(models.mlp, f"x:5,{I}", optimizer="none").measure(StepOptions(optimizer="none"))
    assert none.totals["optimizer_states"] == 0
    assert none.peak_phase in ("forward", "backward")


def test_tiny_transformer_by_hand():
    B = 3
    m = session(models.tiny_transformer, f"idx:{B},{T}:int64:0-{V}").measure(StepOptions())
    P = (V * D + 4 * D * D + D * FF + FF * D + D * V) * 4
    assert m.totals["parameters"] == P
    assert m.totals["gradients"] == P
    assert m.totals["optimizer_states"] == 2 * P + 8 * 4
    assert m.totals["inputs"] == B * T * 8
    act = B * T * D * 4  # one (B, T, D) fp32 tensor
    att = B * T * T * 4  # one (B, T, T) fp32 tensor
    # x (embedding output), q, k, v, p (softmax output), a, y, h (B,T,FF), z
    expected = act * 7 + att + B * T * FF * 4
    assert m.totals["saved_activations"] == expected
    # each storage is charged to the module whose forward saved it first: a Linear saves its input;
    # q, k, v (saved by the matmuls), p and h (softmax, relu) are saved in the root's own forward
    assert m.modules == {"q": act, "o": act, "fc1": act, "head": act, "": 3 * act + att + B * T * FF * 4}
    # the head saves z; the logits are not saved (mean's backward needs only the shape)
    assert m.split["parameters"] == P


def test_amp_bf16_moves_saved_activations_by_the_hand_amount():
    B = 64
    s = session(models.mlp, f"x:{B},{I}")
    fp32 = s.measure(StepOptions())
    bf16 = s.measure(StepOptions(amp="bf16"))
    assert fp32.totals["saved_activations"] == B * H * 4
    # bf16: x cast to bf16 (saved by the first Linear), the ReLU output in bf16, the bf16 copy of W2 that
    # autocast caches (saved for the input gradient of the second Linear)
    assert bf16.totals["saved_activations"] == B * I * 2 + B * H * 2 + O * H * 2
    # master weights stay fp32: parameters, gradients and Adam states do not change
    for k in ("parameters", "gradients", "optimizer_states"):
        assert bf16.totals[k] == fp32.totals[k]


def test_amp_halves_activations_of_a_wide_model_and_lowers_the_peak():
    B = 256
    s = session(models.wide_mlp, f"x:{B},64")
    fp32 = s.measure(StepOptions())
    fp16 = s.measure(StepOptions(amp="fp16"))
    # fp32 saved: two ReLU outputs (B*512 each); fp16: x, both ReLU outputs in half, W2 and W3 half copies
    assert fp32.totals["saved_activations"] == 2 * B * 512 * 4
    assert fp16.totals["saved_activations"] == B * 64 * 2 + 2 * B * 512 * 2 + (512 * 512 + 8 * 512) * 2
    assert fp16.peak_bytes < fp32.peak_bytes


def test_checkpointing_keeps_only_block_inputs_and_outputs():
    B = 32
    s = session(models.blocks, f"x:{B},{I}")
    base = s.measure(StepOptions())
    ck = s.measure(StepOptions(checkpointing="0,1"))
    act = B * H * 4
    # without: each block saves its two ReLU outputs (the next Linear saves the same storages)
    assert base.totals["saved_activations"] == 4 * act
    # with: block 0 keeps x (an input), block 1 keeps its input (block 0's output), the head saves block 1's output
    assert ck.checkpointed == ["0", "1"]
    assert ck.totals["saved_activations"] == 2 * act
    assert ck.totals["parameters"] == base.totals["parameters"]


def test_checkpointing_pattern_star_spans_one_name_part():
    s = session(models.blocks, f"x:4,{I}")
    assert s.checkpoint_names("*") == ["0", "1", "2"]
    assert s.checkpoint_names("*.a") == ["0.a", "1.a"]
    assert s.checkpoint_names("auto") == ["0", "1"]  # the repeated Block class


def test_checkpointing_lowers_the_peak_of_an_activation_bound_step():
    B = 4096
    s = session(models.blocks, f"x:{B},{I}")
    base = s.measure(StepOptions())
    ck = s.measure(StepOptions(checkpointing="auto"))
    assert base.peak_phase in ("forward", "backward")
    assert ck.peak_bytes < base.peak_bytes


def test_batch_axis_is_re_measured():
    s = session(models.mlp, f"x:5,{I}")
    a = s.measure(StepOptions(), batch=10)
    b = s.measure(StepOptions(), batch=20)
    assert a.batch == 10 and b.batch == 20
    assert b.totals["saved_activations"] == 2 * a.totals["saved_activations"] == 20 * H * 4


def test_mlp_backward_peak_split_by_hand():
    # no optimizer, a big batch: the peak is in backward, when ReLU's backward allocates the gradient
    # of the first Linear's output while the saved ReLU output r, the gradient of r and the second
    # Linear's weight/bias gradients are live
    B = 1000
    m = session(models.mlp, f"x:{B},{I}", optimizer="none").measure(StepOptions(optimizer="none"))
    P = 848
    assert m.peak_phase == "backward"
    assert m.split["parameters"] == P
    assert m.split["inputs"] == B * I * 4
    assert m.split["activations"] == B * H * 4  # r
    assert m.split["gradients"] == (H * O + O) * 4  # dW2, db2 (dW1, db1 come after the peak)
    # grad of r and grad of the first Linear's output, plus a few 4-byte scalars (loss, its gradient)
    assert 2 * B * H * 4 <= m.split["temporaries"] <= 2 * B * H * 4 + 32
    assert m.split["optimizer_states"] == 0
    # the forward peak is lower: P + x + the Linear output and the ReLU output
    fwd_end = m.phase_starts["backward"]
    assert max(m.timeline[:fwd_end]) < m.peak_bytes


def test_a_factory_that_reads_values_is_built_on_the_cpu_then_faked():
    s = session(models.reads_while_building, f"x:5,{I}")
    assert s.built_on == "cpu"
    m = s.measure(StepOptions())
    assert m.totals["parameters"] == 848 and m.totals["saved_activations"] == 5 * H * 4
    assert session(models.mlp, f"x:5,{I}").built_on == "fake"
