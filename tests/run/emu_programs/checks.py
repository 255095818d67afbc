"""Behaviour checks run inside the emulator (tests/run/test_emu_behaviour.py reads the JSON it prints).

Each check stores a value (or the exception text) under its name; the test asserts the values."""
import copy
import importlib.util
import io
import json
import sys
import warnings

import torch
import torch.nn as nn

R = {}


def check(name, fn):
    try:
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            v = fn()
        R[name] = {"value": v, "warnings": [str(w.message) for w in ws]}
    except BaseException as e:  # noqa: BLE001
        R[name] = {"error": f"{type(e).__name__}: {e}"}


import torch_npu  # noqa: E402

# 1. CUDA absent
check("cuda_available", lambda: torch.cuda.is_available())
check("zeros_cuda", lambda: str(torch.zeros(1, device="cuda")))
check("tensor_cuda", lambda: str(torch.ones(1).cuda()))
check("cuda_set_device", lambda: torch.cuda.set_device(0))
check("nccl", lambda: torch.distributed.init_process_group("nccl", init_method="tcp://127.0.0.1:29431", rank=0,
                                                           world_size=1))
check("cuda_gradscaler_enabled", lambda: torch.cuda.amp.GradScaler().is_enabled())
check("cuda_autocast", lambda: (torch.autocast("cuda").__enter__(), torch.is_autocast_enabled("cuda"))[1])
# 2. npu device type
check("npu_available", lambda: torch.npu.is_available())
check("device_count", lambda: torch.npu.device_count())
check("accelerator", lambda: [torch.accelerator.current_accelerator().type, torch.accelerator.device_count()])
check("torch_npu_version", lambda: torch_npu.__version__)
check("find_spec", lambda: importlib.util.find_spec("torch_npu") is not None)
check("custom_op", lambda: torch_npu.npu_fusion_attention(None))
x = torch.randn(4, 4, device="npu")
check("device", lambda: [str(x.device), x.is_npu, x.device.type, str(torch.device("npu:1"))])
check("to_npu", lambda: [str(torch.ones(2).to("npu").device), str(torch.ones(2).npu().device),
                         str(torch.ones(2).npu(1).device)])
check("to_same_is_self", lambda: x.to("npu") is x and x.to("npu:0") is x)
check("mix_cpu", lambda: x + torch.ones(4, 4))
check("mix_cpu_scalar", lambda: str((x + torch.tensor(1.0)).device))
check("mix_devices", lambda: x + torch.ones(4, 4, device="npu:1"))
check("numpy", lambda: x.numpy())
check("cpu_numpy", lambda: list(x.cpu().numpy().shape))
torch.npu.set_device(1)
check("set_device", lambda: [torch.npu.current_device(), str(torch.zeros(1, device="npu").device)])
torch.npu.set_device(0)
with torch.npu.device(1):
    inner = torch.npu.current_device()
check("device_ctx", lambda: [inner, torch.npu.current_device()])
s = torch.npu.Stream()
with torch.npu.stream(stream=s):
    in_stream = torch.npu.current_stream() is s
check("stream_kw", lambda: [in_stream, torch.npu.current_stream() is s])
ev0, ev1 = torch.npu.Event(enable_timing=True), torch.npu.Event(enable_timing=True)
ev0.record(); ev1.record(); torch.npu.synchronize()
check("event_timing", lambda: ev0.elapsed_time(ev1) >= 0)
before = torch.npu.memory_allocated()
big = torch.empty(1024 * 1024, device="npu")
check("memory", lambda: [torch.npu.memory_allocated() - before, torch.npu.max_memory_allocated() >= 4 << 20])
del big
check("memory_freed", lambda: torch.npu.memory_allocated() - before)
torch.manual_seed(7)  # seeds the CPU generator and every npu one
a0 = torch.randn(3, device="npu").cpu()
c0 = torch.randn(3)   # npu draws did not consume the CPU generator
torch.manual_seed(7)
c1 = torch.randn(3)
a1 = torch.randn(3, device="npu").cpu()
torch.npu.manual_seed(7)
a2 = torch.randn(3, device="npu:1").cpu()  # npu:1 has its own generator, still at seed 7 from torch.manual_seed
check("rng", lambda: [torch.equal(a0, a1), torch.equal(c0, c1), torch.equal(a0, a2)])
torch.npu.manual_seed(3)
d0 = nn.functional.dropout(torch.ones(64, device="npu"), 0.5).cpu()
torch.npu.manual_seed(3)
torch.rand(100)  # CPU draws in between change nothing for the npu's dropout
d1 = nn.functional.dropout(torch.ones(64, device="npu"), 0.5).cpu()
torch.manual_seed(3)
d2 = nn.functional.dropout(torch.ones(64), 0.5)
check("dropout_device_rng", lambda: [torch.equal(d0, d1), int((d0 == 0).sum()) > 0])
# 3. KB-judged ops
check("linalg_inv_fallback", lambda: str(torch.linalg.inv(torch.eye(3, device="npu") * 2).device))
check("float64_warns", lambda: str((x.double() @ x.double()).dtype))
q = torch.randn(1, 2, 4, 8, device="npu")
check("sdpa", lambda: str(nn.functional.scaled_dot_product_attention(q, q, q).device))
lstm = nn.LSTM(4, 6, batch_first=True).npu()
gru = nn.GRU(4, 6).npu()
xin = torch.randn(2, 3, 4, device="npu", requires_grad=True)
check("lstm", lambda: (lambda o: (o.sum().backward(), [str(o.device), str(xin.grad.device)])[1])(lstm(xin)[0]))
check("gru", lambda: str(gru(torch.randn(3, 2, 4, device="npu"))[0].device))
lib = torch.library.Library("emucheck", "DEF")
lib.define("double_it(Tensor x) -> Tensor")
lib.impl("double_it", lambda t: t * 2, "CPU")
check("non_aten_op", lambda: torch.ops.emucheck.double_it(torch.ones(2, device="npu")).cpu().tolist())
# modules, autograd, optimizers
m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2)).to("npu")
check("module_to", lambda: [sorted({p.device.type for p in m.parameters()}),
                            all(isinstance(p, nn.Parameter) for p in m.parameters())])


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4, bias=False)
        self.b = nn.Linear(4, 4, bias=False)
        self.b.weight = self.a.weight


t = Tied().npu()
check("tied", lambda: t.a.weight is t.b.weight)
out = m(torch.randn(3, 4, device="npu")).sum()
out.backward()
check("backward", lambda: sorted({p.grad.device.type for p in m.parameters()}))
with torch.npu.device(1):
    m1 = nn.Linear(4, 2).to("npu:1")
    m1(torch.randn(2, 4, device="npu:1")).sum().backward()
check("backward_npu1", lambda: str(m1.weight.grad.device))
opt = torch.optim.AdamW(m.parameters(), lr=1e-3, fused=True)
check("fused_adamw", lambda: (opt.step(), "ran")[1])
check("deepcopy_half", lambda: str(copy.deepcopy(m).half()(torch.randn(2, 4, device="npu").half()).dtype))
# 4. AMP
with torch.autocast("npu", dtype=torch.float16):
    y = m(torch.randn(3, 4, device="npu"))
    ln = nn.functional.layer_norm(y, (2,))
check("autocast", lambda: [str(y.dtype), str(ln.dtype)])
with torch.npu.amp.autocast(dtype=torch.bfloat16):
    y2 = m(torch.randn(3, 4, device="npu"))
check("npu_amp_autocast", lambda: str(y2.dtype))
sc = torch.amp.GradScaler("npu", init_scale=1024.0)
opt2 = torch.optim.SGD(m.parameters(), lr=0.1)
sc.scale(m(torch.randn(3, 4, device="npu")).sum()).backward()
sc.step(opt2)
sc.update()
w_before = m[0].weight.detach().cpu().clone()
for p in m.parameters():
    p.grad.fill_(float("inf"))
sc.step(opt2)
sc.update()
check("gradscaler_skip", lambda: [sc.get_scale(), torch.equal(w_before, m[0].weight.detach().cpu())])
# 6. checkpoints, pinned memory, DataLoader
buf = io.BytesIO()
torch.save(m.state_dict(), buf)
raw = buf.getvalue()
check("save_tag", lambda: b"npu:0" in raw)
if len(sys.argv) > 1:  # a checkpoint for the plain-machine load test
    torch.save(m.state_dict(), sys.argv[1])
buf.seek(0)
check("load_cpu", lambda: sorted({v.device.type for v in torch.load(buf, map_location="cpu").values()}))
buf.seek(0)
check("load_default", lambda: sorted({str(v.device) for v in torch.load(buf).values()}))
ds = torch.utils.data.TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,)))
dl = torch.utils.data.DataLoader(ds, batch_size=4, pin_memory=True, num_workers=2)
xb, yb = next(iter(dl))
check("dataloader_pinned", lambda: [xb.is_pinned(), str(xb.to("npu", non_blocking=True).device)])
check("repr", lambda: repr(torch.arange(3, device="npu")))
check("unsqueeze_", lambda: list(torch.ones(2, device="npu").unsqueeze_(0).shape))
check("resize_", lambda: list(torch.ones(2, device="npu").resize_(5).shape))
check("generator_npu", lambda: torch.rand(2, device="npu", generator=torch.Generator(device="npu")).shape[0])
sys.stdout.write("CHECKS " + json.dumps(R, default=str) + "\n")
