import torch
import torch_npu
import torchvision
import torchvision_npu
from torchvision.ops import box_iou, nms

boxes = torch.rand(8, 4).npu()
scores = torch.rand(8).npu()
keep = torchvision.ops.nms(boxes, scores, 0.5)  # covered by torchvision_npu, imported in this file
keep2 = nms(boxes, scores, 0.5)
iou = box_iou(boxes, boxes)  # plain tensor arithmetic, no C++ op


def roi_align(x, rois):  # a local function of the same name
    return x


y = roi_align(boxes, boxes)
