"""Behaviour of the emulated Ascend host (issue 18 items 1-6), in both modes: checks.py runs once per
mode in a fresh process; each test asserts what an Ascend host with torch_npu would give."""

from __future__ import annotations

import json

import pytest

from tests.run.emu_helpers import MODES, run_emu, run_plain, shim_built  # noqa: F401 - fixture

_RESULTS: dict = {}


@pytest.fixture(params=MODES)
def checks(request, tmp_path_factory, shim_built):  # noqa: F811
    mode = request.param
    if mode not in _RESULTS:
        tmp = tmp_path_factory.mktemp(f"checks-{mode}")
        res = run_emu(tmp, "checks.py", str(tmp / "ckpt.pt"), mode=mode)
        res.ckpt = str(tmp / "ckpt.pt")
        assert res.rc == 0, res.err[-4000:]
        _RESULTS[mode] = (json.loads(res.line("CHECKS")), res)
    return mode, _RESULTS[mode][0], _RESULTS[mode][1]


def val(r, name):
    assert "value" in r[name], f"{name}: {r[name]}"
    return r[name]["value"]


def err(r, name):
    assert "error" in r[name], f"{name} did not raise: {r[name]}"
    return r[name]["error"]


def test_cuda_is_absent_as_on_an_npu_host(checks):
    _mode, r, _res = checks
    assert val(r, "cuda_available") is False
    assert err(r, "zeros_cuda") == "AssertionError: Torch not compiled with CUDA enabled"
    assert err(r, "tensor_cuda") == "AssertionError: Torch not compiled with CUDA enabled"
    assert err(r, "cuda_set_device").startswith("AttributeError")
    assert err(r, "nccl") == "RuntimeError: Distributed package doesn't have NCCL built in"
    assert val(r, "cuda_gradscaler_enabled") is False
    assert any("CUDA is not available.  Disabling" in w for w in r["cuda_gradscaler_enabled"]["warnings"])
    assert val(r, "cuda_autocast") is False
    assert any("Disabling autocast" in w for w in r["cuda_autocast"]["warnings"])


def test_npu_is_a_device_type(checks):
    _mode, r, _res = checks
    assert val(r, "npu_available") is True
    assert val(r, "device_count") == 4
    assert val(r, "accelerator") == ["npu", 4]
    assert val(r, "torch_npu_version") == "2.7.1.post11"
    assert val(r, "find_spec") is True
    assert err(r, "custom_op").startswith("NotImplementedError: torch_npu.npu_fusion_attention is a torch_npu custom op")
    assert val(r, "device") == ["npu:0", True, "npu", "npu:1"]
    assert val(r, "to_npu") == ["npu:0", "npu:0", "npu:1"]
    assert val(r, "to_same_is_self") is True
    assert val(r, "set_device") == [1, "npu:1"]
    assert val(r, "device_ctx") == [1, 0]
    assert err(r, "numpy").startswith("TypeError: can't convert npu:0 device type tensor to numpy")
    assert val(r, "cpu_numpy") == [4, 4]
    assert val(r, "repr") == "tensor([0, 1, 2], device='npu:0')"


def test_streams_events_memory_rng(checks):
    _mode, r, _res = checks
    assert val(r, "stream_kw") == [True, False]      # torch.npu.stream(stream=s), torch_npu's signature
    assert val(r, "event_timing") is True
    assert val(r, "memory") == [4 << 20, True]       # 1 Mi float32 on npu:0
    assert val(r, "memory_freed") == 0
    # one generator per device: npu draws leave the CPU stream alone; npu:1 has its own
    assert val(r, "rng") == [True, True, True]
    assert val(r, "dropout_device_rng") == [True, True]


def test_device_mixing_raises(checks):
    _mode, r, _res = checks
    assert "Expected all tensors to be on the same device, but found at least two devices, npu:0 and cpu!" \
        in err(r, "mix_cpu")
    assert val(r, "mix_cpu_scalar") == "npu:0"
    assert "Expected all tensors to be on the same device, but found at least two devices, npu:0 and npu:1!" \
        in err(r, "mix_devices")


def test_ops_judged_by_the_kb(checks):
    mode, r, res = checks
    fb = r["linalg_inv_fallback"]
    assert fb["value"] == "npu:0"
    op = "aten::linalg_inv_ex.inverse" if mode == "shim" else "aten::linalg_inv_ex"
    assert fb["warnings"] == [f"CAUTION: The operator '{op}' is not currently supported on the NPU backend and will "
                              "fall back to run on the CPU. This may have performance implications."]
    assert any(w.startswith("aten::mm runs on float64") for w in r["float64_warns"]["warnings"])
    # composites torch_npu registers run as one op: no fallback warning for SDPA or LSTM/GRU
    for name in ("sdpa", "lstm", "gru"):
        assert not any("fall back" in w for w in r[name].get("warnings", [])), name
    assert val(r, "sdpa") == "npu:0"
    assert val(r, "lstm") == ["npu:0", "npu:0"]
    assert val(r, "gru") == "npu:0"
    # a non-aten op without an npu kernel: classed and warned as torch_npu's CPU fallback
    assert val(r, "non_aten_op") == [2.0, 2.0]
    assert any("The operator 'emucheck::double_it' is not currently supported on the NPU backend" in w
               for w in r["non_aten_op"]["warnings"])
    fallbacks = {e["op"]: e for e in res.kind("fallback")}
    assert op in fallbacks and "emucheck::double_it" in fallbacks
    assert fallbacks[op]["kb_class"] == "cpu_fallback"
    ops = res.kind("op")[0]
    assert ops["counts_by_class"]["npu_kernel"] > 50
    assert "aten::scaled_dot_product_attention" in ops["counts_by_op"]
    assert "aten::lstm.input" in ops["counts_by_op"]
    assert not any(k.startswith("aten::_scaled_dot_product_flash_attention") for k in ops["counts_by_op"])


def test_modules_autograd_optimizers(checks):
    _mode, r, _res = checks
    assert val(r, "module_to") == [["npu"], True]
    assert val(r, "tied") is True
    assert val(r, "backward") == ["npu"]
    assert val(r, "backward_npu1") == "npu:1"
    assert val(r, "fused_adamw") == "ran"
    assert val(r, "deepcopy_half") == "torch.float16"


def test_amp(checks):
    _mode, r, res = checks
    assert val(r, "autocast") == ["torch.float16", "torch.float32"]   # linear lowered, layer_norm in fp32
    assert val(r, "npu_amp_autocast") == "torch.bfloat16"
    assert val(r, "gradscaler_skip") == [512.0, True]   # inf grads: step skipped, scale halved
    ev = res.kind("gradscaler")
    assert {"event": "skip", "scale": 1024.0} in [{k: e.get(k) for k in ("event", "scale")} for e in ev]
    assert {"event": "backoff", "scale": 512.0} in [{k: e.get(k) for k in ("event", "scale")} for e in ev]
    ac = {(e["device_type"], e["dtype"]) for e in res.kind("autocast")}
    assert ("npu", "torch.float16") in ac and ("npu", "torch.bfloat16") in ac and ("cuda", None) in ac


def test_checkpoints_and_data(checks, tmp_path):
    mode, r, res = checks
    assert val(r, "save_tag") is True
    if mode == "shim":
        # on a machine without torch_npu the npu:0 location cannot be restored without map_location
        plain = run_plain(tmp_path, "import torch\ntry:\n    torch.load(%r)\nexcept Exception as e:\n"
                          "    print('FAILED', type(e).__name__, e)\n"
                          "print('CPU', sorted(torch.load(%r, map_location='cpu')))" % (res.ckpt, res.ckpt))
        assert plain.returncode == 0, plain.stderr[-2000:]
        failed = next(ln for ln in plain.stdout.splitlines() if ln.startswith("FAILED"))
        assert "npu" in failed
        assert "CPU ['0.bias', '0.weight', '2.bias', '2.weight']" in plain.stdout
    assert val(r, "load_cpu") == ["cpu"]
    assert val(r, "load_default") == ["npu:0"]
    assert val(r, "dataloader_pinned") == [True, "npu:0"]


def test_what_each_mode_cannot_do(checks):
    mode, r, res = checks
    start = res.kind("start")[0]
    assert start["mode"] == mode and start["torch_npu"] == "2.7.1.post11" and start["chip"] == "Ascend910B3"
    if mode == "shim":
        assert val(r, "unsqueeze_") == [1, 2]
        assert val(r, "resize_") == [5]
        assert val(r, "generator_npu") == 2
        assert "pure-Python mode" not in res.err
    else:
        assert "not supported by ascendify run's pure-Python mode" in err(r, "unsqueeze_")
        assert "not supported by ascendify run's pure-Python mode" in err(r, "resize_")
        assert err(r, "generator_npu").startswith("NotImplementedError")
        assert res.err.count("ascendify run: pure-Python mode") == 1
        assert any("in-place shape" in lim for lim in start["limits"])
