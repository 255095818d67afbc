"""AIPP: the generated config, applied by hand to uint8 pixels, equals torchvision-style normalisation.

Formula (accuracy-profiling-atc.md §1.4): out = (pixel - mean_chn - min_chn) * var_reci_chn.
"""

from __future__ import annotations

import numpy as np
import pytest

from ascendify.export.aipp import aipp_config, aipp_values, apply_aipp, parse_aipp

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def test_aipp_by_hand_equals_pytorch_normalize():
    import torch

    cfg = parse_aipp(aipp_config(MEAN, STD, 6, 5))
    pix = np.random.default_rng(0).integers(0, 256, (2, 5, 6, 3)).astype(np.uint8)  # NHWC uint8, RGB
    # AIPP applied by hand, channel by channel, straight from the config's numbers
    by_hand = np.empty((2, 3, 5, 6), np.float32)
    for c in range(3):
        by_hand[:, c] = (pix[..., c].astype(np.float32) - cfg[f"mean_chn_{c}"] - cfg[f"min_chn_{c}"]) * cfg[f"var_reci_chn_{c}"]
    # PyTorch: ToTensor (/255, HWC->CHW) then Normalize(mean, std)
    t = torch.from_numpy(pix).permute(0, 3, 1, 2).float() / 255.0
    ref = ((t - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)).numpy()
    assert np.abs(by_hand - ref).max() < 1e-4
    assert np.allclose(apply_aipp(pix, cfg), by_hand)


def test_aipp_values_imagenet():
    v = aipp_values(MEAN, STD)
    assert v["mean_chn"] == [0.0, 0.0, 0.0]
    assert v["min_chn"] == pytest.approx([123.675, 116.28, 103.53])
    assert v["var_reci_chn"] == pytest.approx([0.0171247538, 0.0175070028, 0.0174291939], rel=1e-8)


def test_aipp_plain_scale_only():
    v = aipp_values((0.0,) * 3, (1.0,) * 3)
    assert v["min_chn"] == [0.0] * 3 and v["var_reci_chn"] == pytest.approx([1 / 255] * 3)


def test_config_fields():
    text = aipp_config(MEAN, STD, 224, 224, related_input_rank=1)
    cfg = parse_aipp(text)
    assert text.lstrip().splitlines()[2] == "aipp_op {"
    assert cfg["related_input_rank"] == 1 and cfg["input_format"] == "RGB888_U8"
    assert cfg["csc_switch"] is False and cfg["rbuv_swap_switch"] is False


def test_normalize_option_forms():
    from ascendify.compare.samples import parse_mean_std
    from ascendify.errors import AscendifyError

    assert parse_mean_std("imagenet") == (MEAN, STD)
    assert parse_mean_std("0.485,0.456,0.406;0.229,0.224,0.225") == (MEAN, STD)
    assert parse_mean_std("0.485,0.456,0.406,0.229,0.224,0.225") == (MEAN, STD)
    assert parse_mean_std("0.5/0.25") == ((0.5,), (0.25,))
    for bad in ("0.5,0.5,0.5", "0.5;0", "a;b", "0.1,0.2;0.3"):
        with pytest.raises(AscendifyError):
            parse_mean_std(bad)
