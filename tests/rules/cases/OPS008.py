import torch
import torchvision
from torchvision.ops import RoIAlign, batched_nms, roi_pool
from torchvision.ops.boxes import nms as box_nms
from torchvision.ops import PSRoIAlign

boxes = torch.rand(8, 4).npu()
scores = torch.rand(8).npu()
keep = torchvision.ops.nms(boxes, scores, 0.5)  # expect: OPS008
keep2 = box_nms(boxes, scores, 0.5)  # expect: OPS008
kept = batched_nms(boxes, scores, torch.zeros(8).npu(), 0.5)  # expect: OPS008
pool = RoIAlign((7, 7), spatial_scale=0.25, sampling_ratio=2)  # expect: OPS008
pooled = roi_pool(torch.rand(1, 4, 16, 16).npu(), boxes, 7)  # expect: OPS008
ps = PSRoIAlign((7, 7), 0.25, 2)  # expect: OPS008
raw = torch.ops.torchvision.nms(boxes, scores, 0.5)  # expect: OPS008
