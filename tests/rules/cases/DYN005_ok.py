import math

import numpy as np
import torch.nn as nn


class Gate(nn.Module):
    def forward(self, x, scale=None):
        if self.training:
            x = x * 2
        if x.shape[0] > 1 and x.size(1) > 2:
            x = x[:1]
        if scale is not None and len(x) > 0:
            x = x * scale
        if math.isclose(1.0, 1.0) and np.any([True]):
            x = x + 0
        if max(x.shape) > 4:
            x = x[:4]
        return x
