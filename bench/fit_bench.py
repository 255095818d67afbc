"""Accuracy and speed of ``ascendify fit`` (issue 14).

Accuracy: the predicted peak (fake tensors, no memory) against the peak of live CPU
allocations of the same training step run for real, measured independently with
``torch.profiler.profile(profile_memory=True)`` (allocation/free events of the CPU
allocator, summed in time order, plus the tensors that existed before the step).  The
step is the one ``fit`` models: forward, loss = mean of the float outputs, backward,
Adam (foreach) step, zero_grad(set_to_none=True), after one warm-up step so the optimizer
states exist (steady state).  Models are built here from their published configs with
random weights (torchvision/transformers are not needed): ResNet-50, ViT-B/16 and a
GPT-2-small-sized decoder; each at two batch sizes, fp32 and CPU autocast bf16.

Speed: predicting ViT-B/16 at batch 128 (fp32, Adam) — wall time and peak RSS of this
process (the prediction allocates no activation memory).

    .venv/bin/python bench/fit_bench.py            # table + speed; exit 1 if a target is missed
    .venv/bin/python bench/fit_bench.py --quick    # one batch size per model
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from ascendify.fit.engine import FitSession, StepOptions  # noqa: E402
from ascendify.probe.spec import parse_spec  # noqa: E402


# ----------------------------------------------------------------------------- models
class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, width, stride=1):
        super().__init__()
        cout = width * 4
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + idt)


class ResNet50(nn.Module):
    """He et al. 2015, ResNet-50 (layers 3-4-6-3, bottleneck width 64..512), 1000 classes."""

    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.pool = nn.MaxPool2d(3, 2, 1)
        layers, cin = [], 64
        for i, (n, w) in enumerate(zip((3, 4, 6, 3), (64, 128, 256, 512))):
            blocks = []
            for j in range(n):
                blocks.append(Bottleneck(cin, w, 2 if (j == 0 and i > 0) else 1))
                cin = w * 4
            layers.append(nn.Sequential(*blocks))
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x):
        x = self.pool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class Attention(nn.Module):
    def __init__(self, d, heads, causal=False):
        super().__init__()
        self.h, self.causal = heads, causal
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.proj(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, d, heads, mlp, causal=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads, causal)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, mlp), nn.GELU(), nn.Linear(mlp, d))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class ViT(nn.Module):
    """Dosovitskiy et al. 2020, ViT-B/16: 224 px, patch 16, 12 layers, width 768, 12 heads, MLP 3072."""

    def __init__(self, image=224, patch=16, d=768, depth=12, heads=12, mlp=3072, num_classes=1000):
        super().__init__()
        self.patch = nn.Conv2d(3, d, patch, patch)
        n = (image // patch) ** 2
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.zeros(1, n + 1, d))
        self.blocks = nn.ModuleList(Block(d, heads, mlp) for _ in range(depth))
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, num_classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x[:, 0]))


class GPT(nn.Module):
    """Radford et al. 2019, GPT-2 small: 12 layers, width 768, 12 heads, vocab 50257, 1024 positions, tied head."""

    def __init__(self, vocab=50257, ctx=1024, d=768, depth=12, heads=12):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(ctx, d)
        self.blocks = nn.ModuleList(Block(d, heads, 4 * d, causal=True) for _ in range(depth))
        self.ln_f = nn.LayerNorm(d)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for blk in self.blocks:
            x = blk(x)
        return F.linear(self.ln_f(x), self.wte.weight)


def resnet50():
    return ResNet50()


def vit_b16():
    return ViT()


def gpt2_small():
    return GPT()


CASES = [  # name, factory, input template ({b} = batch), batch sizes
    ("ResNet-50", resnet50, "x:{b},3,224,224:float32", (8, 16)),
    ("ViT-B/16", vit_b16, "x:{b},3,224,224:float32", (8, 16)),
    ("GPT-2 small (T=256)", gpt2_small, "idx:{b},256:int64:0-50257", (8, 12)),
]


# ----------------------------------------------------------------------------- real CPU step
def _loss(out):
    from ascendify.probe.model import _loss_from
    return _loss_from(out)


def measure_real(factory, spec_text: str, amp: bool, ckpt_names=()) -> int:
    """Peak live CPU allocation bytes of one steady-state step, from the profiler's memory events.
    ``ckpt_names``: modules whose forward is wrapped in torch.utils.checkpoint (fit's wrapper)."""
    import contextlib
    from ascendify.fit.engine import checkpointed
    torch.manual_seed(0)
    model = factory()
    model.train()
    spec = parse_spec(spec_text)
    x = spec.make("cpu", torch.Generator().manual_seed(0))
    opt = torch.optim.Adam(model.parameters(), foreach=True)

    def step():
        ctx = torch.autocast("cpu", dtype=torch.bfloat16) if amp else torch.autocast("cpu", enabled=False)
        with ctx:
            loss = _loss(model(x))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    # warm-up as fit does it: one optimizer step on zero gradients, so the states exist (steady state)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    opt.step()
    opt.zero_grad(set_to_none=True)
    gc.collect()
    base = 0
    seen = set()
    tensors = list(model.parameters()) + list(model.buffers()) + [x]
    for st in opt.state.values():
        tensors += [v for v in st.values() if isinstance(v, torch.Tensor)]
    for t in tensors:
        s = t.untyped_storage()
        if s.data_ptr() not in seen:
            seen.add(s.data_ptr())
            base += s.nbytes()
    from torch.profiler import ProfilerActivity, profile
    wrap = checkpointed(model, list(ckpt_names), []) if ckpt_names else contextlib.nullcontext()
    with wrap, profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        step()
    # memory events of the CPU allocator: "[memory]" entries, nbytes > 0 an allocation, < 0 a free
    evs = [(e.start_ns(), e.nbytes()) for e in prof.profiler.kineto_results.events()
           if e.name() == "[memory]" and str(e.device_type()).endswith("CPU")]
    evs.sort(key=lambda t: t[0])
    live = peak = 0
    for _, d in evs:
        live += d
        peak = max(peak, live)
    del model, opt, x, prof
    gc.collect()
    return base + peak


def predict(factory, spec_text: str, amp: bool, session_cache: dict, ckpt: bool = False):
    """(predicted peak bytes, seconds, peak phase, checkpointed module names)."""
    key = factory.__name__
    if key not in session_cache:
        session_cache[key] = FitSession(factory, [parse_spec(spec_text)], optimizer="adam", foreach=True)
    s = session_cache[key]
    t0 = time.perf_counter()
    m = s.measure(StepOptions(amp="bf16" if amp else None, checkpointing="auto" if ckpt else None),
                  batch=parse_spec(spec_text).shape[0])
    return m.peak_bytes, time.perf_counter() - t0, m.peak_phase, m.checkpointed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="one batch size per model")
    ap.add_argument("--no-accuracy", action="store_true", help="only the speed check")
    args = ap.parse_args(argv)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    ok = True
    mib = float(1 << 20)
    if not args.no_accuracy:
        print("| model | batch | precision | predicted MiB | measured MiB | error | peak in | predict s | real s |")
        print("|---|---:|---|---:|---:|---:|---|---:|---:|")
        cache: dict = {}
        for name, factory, tmpl, batches in CASES:
            runs = [(b, amp, False) for b in (batches[:1] if args.quick else batches) for amp in (False, True)]
            if not args.quick:
                runs.append((batches[-1], False, True))  # + activation checkpointing of each block
            for b, amp, ckpt in runs:
                spec = tmpl.format(b=b)
                pred, ps, phase, names = predict(factory, spec, amp, cache, ckpt)
                t0 = time.perf_counter()
                real = measure_real(factory, spec, amp, names)
                rs = time.perf_counter() - t0
                err = (pred - real) / real
                ok = ok and abs(err) <= 0.10
                prec = ("bf16 autocast" if amp else "fp32") + (f" + checkpointing auto ({len(names)})" if ckpt else "")
                print(f"| {name} | {b} | {prec} | {pred / mib:.1f} | {real / mib:.1f} | "
                      f"{err * 100:+.1f}% | {phase} | {ps:.2f} | {rs:.1f} |", flush=True)
            cache.clear()
            gc.collect()
    # speed: `ascendify fit` of ViT-B/16 at batch 128 end to end (imports, fake build, step, allocator
    # replay, chip check) in a fresh child process, so its peak RSS is its own
    import subprocess
    here = os.path.dirname(os.path.abspath(__file__))
    # the child reports its own high-water RSS (VmHWM of its address space: ru_maxrss would count the
    # forked image of this process, which has just run the real steps)
    wrapper = ("import atexit, sys\n"
               "def _hwm():\n"
               "    try:\n"
               "        kb = [ln.split()[1] for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0]\n"
               "    except (OSError, IndexError):\n"
               "        import resource; kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
               "    sys.stderr.write('VmHWM_KB=%s\\n' % kb)\n"
               "atexit.register(_hwm)\n"
               "from ascendify.cli import main\n"
               "main(sys.argv[1:])\n")
    cmd = [sys.executable, "-c", wrapper, "fit", os.path.join(here, "fit_bench.py") + ":vit_b16",
           "--input", "x:128,3,224,224:float32", "--chip", "Ascend910B3", "--format", "json"]
    env = dict(os.environ, PYTHONPATH=os.path.join(here, "..", "src"))
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    hwm = [ln for ln in proc.stderr.splitlines() if ln.startswith("VmHWM_KB=")]
    rss = int(hwm[-1].split("=")[1]) / 1024 if hwm else float("nan")
    if proc.returncode not in (0, 1):
        print(proc.stderr)
        return 1
    import json
    d = json.loads(proc.stdout)
    print(f"\nspeed: ascendify fit ViT-B/16 batch 128 (fp32, Adam) predicted peak {d['peak_bytes'] / (1 << 30):.2f} GiB, "
          f"reserved {d['reserved_bytes'] / (1 << 30):.2f} GiB, fits {d['chip']}: {d['fits']}; {dt:.2f} s wall "
          f"({d['seconds']:.2f} s in the fake step, {d['ops']} ops); peak RSS of the process {rss:.0f} MiB; "
          f"target < 10 s: {'ok' if dt < 10 else 'MISSED'}")
    ok = ok and dt < 10
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
