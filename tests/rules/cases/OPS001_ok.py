import numpy as np
import pandas as pd
import matplotlib.pyplot as plt
import torch

a = torch.randn(4, 4)
b = torch.linalg.matmul(a, a)          # NPU kernel
c = torch.linalg.svd(a)                # NPU kernel (acl_op + op_api)
d = np.linalg.inv(np.eye(3))           # numpy, not torch
df = pd.DataFrame({"x": [1, 2, 2]})
most = df.mode()                       # pandas .mode(), receiver is not a tensor
fig, ax = plt.subplots()
ax.scatter([1, 2], [3, 4])             # matplotlib
s = torch.scatter(a, 0, torch.zeros(1, 4, dtype=torch.long), a[:1])  # scatter.src has an NPU kernel
y = torch.nanmean(a)                   # decomposes to NPU ops
