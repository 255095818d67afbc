"""Probe overhead on a ResNet-50-sized model, forward + backward on the CPU (printed, not asserted).

Builds a ResNet-50 (bottleneck blocks 3-4-6-3, 25.6 M parameters; written here,
torchvision is not needed), then times in the same process

* plain: forward + backward, no recording;
* probe: the same step under ascendify's OpRecorder (TorchDispatchMode +
  TorchFunctionMode, source lines, re-entry into device-generic kernels);

and prints the best and median of --repeat interleaved runs and the ratio (target ≤ 1.5x, issue #3).

    .venv/bin/python bench/probe_bench.py [--batch 2 --size 160 --repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402


class Bottleneck(nn.Module):
    def __init__(self, cin, mid, stride):
        super().__init__()
        cout = mid * 4
        self.c1, self.b1 = nn.Conv2d(cin, mid, 1, bias=False), nn.BatchNorm2d(mid)
        self.c2, self.b2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False), nn.BatchNorm2d(mid)
        self.c3, self.b3 = nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        y = torch.relu(self.b2(self.c2(y)))
        y = self.b3(self.c3(y))
        return torch.relu(y + (x if self.down is None else self.down(x)))


def resnet50(num_classes=1000):
    layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
    cin = 64
    for mid, n, stride in ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)):
        for i in range(n):
            layers.append(Bottleneck(cin, mid, stride if i == 0 else 1))
            cin = mid * 4
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, num_classes)]
    return nn.Sequential(*layers)


def step(model, x):
    model.zero_grad(set_to_none=True)
    model(x).float().mean().backward()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--size", type=int, default=160)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    torch.manual_seed(0)
    model = resnet50().train()
    x = torch.randn(a.batch, 3, a.size, a.size)
    print(f"ResNet-50: {sum(p.numel() for p in model.parameters()) / 1e6:.1f} M parameters, input {tuple(x.shape)}, "
          f"{torch.get_num_threads()} threads")
    from ascendify.kb import ops as kbops
    from ascendify.probe.recorder import OpRecorder
    table = kbops.load_release("2.7.1.post11")

    def reenter(op):
        r = table.ops.get(op)
        return r is not None and r[0] == "composite_explicit"

    step(model, x)  # warm-up (allocator, lazy imports)
    with OpRecorder(reenter=reenter):
        step(model, x)
    plain, probe = [], []
    n_ops = 0
    for _ in range(a.repeat):
        t = time.perf_counter()
        step(model, x)
        plain.append(time.perf_counter() - t)
        rec = OpRecorder(reenter=reenter)
        t = time.perf_counter()
        with rec:
            step(model, x)
        probe.append(time.perf_counter() - t)
        n_ops = sum(r["count"] for r in rec.result())
    p, q = min(plain), min(probe)
    print(f"plain forward+backward: best {p * 1000:.0f} ms, median {statistics.median(plain) * 1000:.0f} ms ({a.repeat} runs)")
    print(f"under the probe:        best {q * 1000:.0f} ms, median {statistics.median(probe) * 1000:.0f} ms "
          f"({n_ops} aten calls recorded)")
    print(f"overhead ratio (best/best): {q / p:.2f}x (target <= 1.5x; other load on the machine makes single runs noisy)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
