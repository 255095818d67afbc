"""AMP as the field-trial programs use it: CUDA autocast at two sites (switched off on an Ascend host), an
explicit enabled=False, npu fp16 autocast with a GradScaler, and dropout draws printed for --cpu-rng."""
import sys

import torch

mode = sys.argv[1]
torch.manual_seed(0)
if mode == "rng":
    torch.nn.Linear(4, 4)  # init on the CPU draws from the CPU generator, as before .to(device)
    x = torch.ones(8, device="npu")
    print("DROP", torch.nn.functional.dropout(x, 0.5).tolist())
    print("RAND", torch.rand(3, device="npu").tolist())
    torch.npu.manual_seed(123)
    print("RAND2", torch.rand(3, device="npu").tolist())
    sys.exit(0)
m = torch.nn.Linear(4, 4).to("npu")
opt = torch.optim.SGD(m.parameters(), lr=0.1)
x = torch.randn(2, 4, device="npu")
with torch.autocast("cuda"):  # SITE-A
    m(x)
with torch.autocast("cuda", dtype=torch.float16):  # SITE-B
    m(x)
with torch.autocast("cuda", enabled=False):  # SITE-OFF
    m(x)
if mode == "scaler":
    scaler = torch.amp.GradScaler("npu", init_scale=2.0 ** 10)  # SITE-SCALER
    for _ in range(3):
        with torch.autocast("npu", dtype=torch.float16):  # SITE-NPU
            loss = m(x).float().sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
    torch.ones(1, device="npu", dtype=torch.float64).reciprocal()  # SITE-F64: the program's own float64
elif mode == "cudascaler":
    scaler = torch.amp.GradScaler("cuda")  # SITE-CUDASCALER
    with torch.autocast("npu", dtype=torch.float16):
        loss = m(x).float().sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
else:
    with torch.autocast("npu", dtype=torch.float16):  # SITE-PLAIN
        loss = m(x).float().sum()
    loss.backward()
    opt.step()
print("DONE")
