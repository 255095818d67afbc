"""The field trial's stand-in for torchvision's C++ ops (bench/field_trial.py, CACHE/site).

PyPI's torchvision 0.28.0 wheel is a CUDA build whose ``_C.so`` does not load on torch's CPU wheel, and
torchvision then fails at import (``operator torchvision::nms does not exist`` from its meta
registrations).  This file defines the ``torchvision::`` op schemas (as torchvision/csrc/ops/*.cpp
declare them) and a CPU kernel for nms in Python, so programs that call ``torchvision.ops.nms`` run and
the op reaches the emulated NPU's dispatch like the real one (no PrivateUse1 kernel: torch_npu's CPU
fallback).  The other ops exist without kernels.  Set-up (into the cache, never into a project)::

    pip install --no-deps --target CACHE/site torchvision==0.28.0
    cp bench/field_trial_tvops.py CACHE/site/torchvision/_trial_ops.py

and in CACHE/site/torchvision/extension.py, after ``if _load_library("_C"): def _has_ops(): return True``::

    else:
        from ._trial_ops import define as _trial_define

        _trial_define()

        def _has_ops():  # noqa: F811
            return True
"""
import torch

SCHEMAS = [
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
    "_roi_align_backward(Tensor grad, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width, int sampling_ratio, bool aligned) -> Tensor",
    "qroi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio, bool aligned) -> Tensor",
    "ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)",
    "_ps_roi_align_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, SymInt pooled_height, SymInt pooled_width, int sampling_ratio, SymInt batch_size, SymInt channels, SymInt height, SymInt width) -> Tensor",
    "roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) -> (Tensor, Tensor)",
    "_roi_pool_backward(Tensor grad, Tensor rois, Tensor argmax, float spatial_scale, SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width) -> Tensor",
    "ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) -> (Tensor, Tensor)",
    "_ps_roi_pool_backward(Tensor grad, Tensor rois, Tensor channel_mapping, float spatial_scale, SymInt pooled_height, SymInt pooled_width, SymInt batch_size, SymInt channels, SymInt height, SymInt width) -> Tensor",
    "deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor",
    "_deform_conv2d_backward(Tensor grad, Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) -> (Tensor, Tensor, Tensor, Tensor, Tensor)",
    "box_iou_rotated(Tensor boxes1, Tensor boxes2) -> Tensor",
    "_cuda_version() -> int",
]

_LIBS = []


def _nms_cpu(dets, scores, iou_threshold):
    if dets.numel() == 0:
        return torch.empty((0,), dtype=torch.long)
    x1, y1, x2, y2 = dets.unbind(1)
    areas = (x2 - x1) * (y2 - y1)
    order = scores.sort(stable=True, dim=0, descending=True)[1]  # as torchvision's CPU kernel
    suppressed = torch.zeros(dets.size(0), dtype=torch.bool)
    keep = []
    o = order.tolist()
    for _i, i in enumerate(o):
        if suppressed[i]:
            continue
        keep.append(i)
        rest = order[_i + 1:]
        xx1 = torch.maximum(x1[i], x1[rest]); yy1 = torch.maximum(y1[i], y1[rest])
        xx2 = torch.minimum(x2[i], x2[rest]); yy2 = torch.minimum(y2[i], y2[rest])
        inter = (xx2 - xx1).clamp(min=0) * (yy2 - yy1).clamp(min=0)
        iou = inter / (areas[i] + areas[rest] - inter)
        suppressed[rest[iou > iou_threshold]] = True
    return torch.tensor(keep, dtype=torch.long)


def define():
    lib = torch.library.Library("torchvision", "DEF")
    for s in SCHEMAS:
        lib.define(s)
    impl = torch.library.Library("torchvision", "IMPL", "CPU")
    impl.impl("nms", _nms_cpu)
    lib.impl("_cuda_version", lambda: -1, "CompositeExplicitAutograd")
    _LIBS.extend([lib, impl])
