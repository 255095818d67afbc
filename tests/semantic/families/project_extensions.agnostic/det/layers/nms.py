from det import _C


def nms(boxes, scores, threshold):
    return _C.nms(boxes, scores, threshold)  # expect: DEV026
