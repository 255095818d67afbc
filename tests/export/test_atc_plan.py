"""ATC dynamic-shape constraints (accuracy-profiling-atc.md §1.3): each rule, positive and negative."""

from __future__ import annotations

import pytest

from ascendify.errors import AscendifyError
from ascendify.export.atc import atc_args, parse_input, plan_dynamic, render_command


def P(*specs, **kw):
    return plan_dynamic([parse_input(s) for s in specs], **kw)


def test_static_shape_no_dynamic_flag():
    p = P("x:1,3,224,224")
    assert (p.flag, p.input_shape, p.input_format, p.mode) == (None, "x:1,3,224,224", "NCHW", "static")


def test_batch_ok_and_profiles():
    p = P("data:-1,3,224,224", "img_info:-1,4", batch="1,2,4,8")
    assert p.flag == "--dynamic_batch_size" and p.value == "1,2,4,8"
    assert p.input_shape == "data:-1,3,224,224;img_info:-1,4"
    assert p.input_format == "ND"  # not every input is 4-D
    assert p.profiles[2] == {"data": [4, 3, 224, 224], "img_info": [4, 4]}


def test_batch_minus_one_off_axis0_is_E10018():
    with pytest.raises(AscendifyError, match="E10018"):
        P("x:1,-1,224,224", batch="1,2")


def test_minus_one_without_option_is_E10011():
    with pytest.raises(AscendifyError, match="E10011"):
        P("x:-1,3,224,224")


def test_option_without_minus_one_is_E10040():
    with pytest.raises(AscendifyError, match="E10040"):
        P("x:1,3,224,224", batch="1,2")


def test_mixing_options_is_E10009():
    with pytest.raises(AscendifyError, match="E10009"):
        P("x:-1,3,-1,-1", batch="1,2", image_size="224,224;448,448")
    with pytest.raises(AscendifyError, match="E10009"):
        P("x:1~8,3,224,224", batch="1,2")


def test_profile_count_bounds_E10035_E10036():
    with pytest.raises(AscendifyError, match="E10035"):
        P("x:-1,3,8,8", batch="4")
    with pytest.raises(AscendifyError, match="E10036"):
        P("x:-1,3,8,8", batch=",".join(str(i) for i in range(1, 102)))
    assert len(P("x:-1,3,8,8", batch=",".join(str(i) for i in range(1, 101))).profiles) == 100


def test_duplicate_profiles_E10039():
    with pytest.raises(AscendifyError, match="E10039"):
        P("x:-1,3,8,8", batch="1,2,2")


def test_image_size_ok_nchw_and_nhwc():
    p = P("x:8,3,-1,-1", image_size="416,416;832,832")
    assert p.flag == "--dynamic_image_size" and p.value == "416,416;832,832"
    assert p.profiles[1]["x"] == [8, 3, 832, 832]
    q = P("x:1,-1,-1,3", image_size="32,32;64,64", layout="NHWC")
    assert q.input_format == "NHWC" and q.profiles[0]["x"] == [1, 32, 32, 3]


def test_image_size_wrong_axes_E10019_and_pairs_E10020():
    with pytest.raises(AscendifyError, match="E10019"):
        P("x:-1,3,-1,224", image_size="224,224;448,448")
    with pytest.raises(AscendifyError, match="E10020"):
        P("x:1,3,-1,-1", image_size="224,224,3;448,448,3")


def test_dims_fill_minus_ones_in_input_order():
    p = P("data:1,-1", "mask:-1,-1", dims="20,1,1;40,2,2")
    assert p.flag == "--dynamic_dims" and p.input_format == "ND"
    assert p.profiles[1] == {"data": [1, 40], "mask": [2, 2]}


def test_dims_count_mismatch_E10045_and_uneven_E10037():
    with pytest.raises(AscendifyError, match="E10045"):
        P("data:1,-1", "mask:1,-1", dims="16;32")
    with pytest.raises(AscendifyError, match="E10037"):
        P("data:1,-1", "mask:1,-1", dims="16,16;32")


def test_dims_with_aipp_rejected():
    with pytest.raises(AscendifyError, match="AIPP"):
        P("x:1,3,-1,-1", dims="8,8;16,16", aipp=True)


def test_shape_range_mode():
    p = P("x:1~16,3,224,224")
    assert p.flag is None and p.mode == "shape_range" and p.input_shape == "x:1~16,3,224,224"
    assert p.profiles[0]["x"][0] == 1 and p.profiles[-1]["x"][0] == 16


def test_render_quotes_and_precision_validation():
    p = P("x:-1,3,8,8", batch="1,2")
    cmd = render_command(atc_args("my model.onnx", p, "Ascend910B3"))
    assert cmd.startswith("atc --model='my model.onnx' --framework=5 --output='my model' --soc_version=Ascend910B3")
    assert '--input_shape="x:-1,3,8,8" --dynamic_batch_size="1,2"' in cmd
    with pytest.raises(AscendifyError, match="precision-mode"):
        atc_args("m.onnx", p, "Ascend910B3", precision_mode="fp8_please")


def test_input_spec_parsing():
    s = parse_input("ids:1,-1:int64:0..30521")
    assert (s.name, s.dtype, s.value_range, s.dynamic_axes) == ("ids", "int64", (0.0, 30521.0), [1])
    with pytest.raises(AscendifyError, match="dtype 'complex64'"):
        parse_input("x:1:complex64")
    with pytest.raises(AscendifyError, match="must be positive or -1"):
        parse_input("x:0,3")
