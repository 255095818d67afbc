#!/usr/bin/env python
"""Scan speed benchmark: ``ascendify scan`` against plain ``ast.parse`` on a generated corpus.

Builds (once, into ``bench/corpus/``, git-ignored) a corpus of realistic
PyTorch code -- model definitions, training scripts, data pipelines,
utilities, losses/metrics and inference/export scripts -- from templates with
varied names and structure, with CUDA-isms at a realistic density.  Then,
in the same run, measures:

1. baseline: read + decode + ``ast.parse`` of every file, one process;
2. cold scan: ``discover`` + ``scan_files`` (default ``jobs``) with an empty cache folder;
3. warm scan: the same again with the cache the cold scan filled.

and prints lines/s for each and the ratios against the targets:

* cold time <= 3 x baseline time   ("cold within 3x of ast.parse")
* warm time <= 0.1 x cold time     ("warm within 10% of cold")

It prints; it does not assert (timings on shared machines are noisy).

    python bench/scan_bench.py                 # build the corpus if needed, measure
    python bench/scan_bench.py --lines 200000  # a bigger corpus
    python bench/scan_bench.py --repeat 3      # best of 3 for each measurement
    python bench/scan_bench.py --serial        # also a cold scan with jobs=1 (per-core cost)
    python bench/scan_bench.py --profile       # cProfile of a cold jobs=1 scan, top 25 functions
    python bench/scan_bench.py --cpu           # also CPU-time ratio of a jobs=1 scan (for a loaded machine)
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import io
import json
import os
import pstats
import random
import shutil
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

from ascendify.config import Settings  # noqa: E402
from ascendify.rules.registry import ruleset_version  # noqa: E402
from ascendify.scan.engine import discover, scan_files  # noqa: E402

CORPUS_VERSION = 1
DEFAULT_DIR = os.path.join(HERE, "corpus")
TARGET_COLD_VS_AST = 3.0
TARGET_WARM_VS_COLD = 0.10

# --------------------------------------------------------------------------- vocabulary
PREFIXES = ["Res", "Dense", "Mobile", "Efficient", "Conv", "Trans", "Swin", "UNet", "Pyramid", "Seg", "Det", "Gated",
            "Sparse", "Dilated", "Ghost", "Shuffle", "Mix", "Cross", "Local", "Global", "Deform", "Axial", "Squeeze"]
SUFFIXES = ["Block", "Stage", "Encoder", "Decoder", "Head", "Neck", "Layer", "Unit", "Cell", "Branch", "Fusion", "Stem"]
TASKS = ["cls", "seg", "det", "depth", "pose", "ocr", "asr", "nlp", "rec", "gan", "vae", "flow", "reid", "caption"]
DOMAINS = ["imagenet", "coco", "cityscapes", "librispeech", "wikitext", "criteo", "kitti", "ade20k", "voc", "celeba"]
NOUNS = ["feat", "hidden", "emb", "logits", "scores", "mask", "attn", "tokens", "patches", "query", "ctx", "gate", "res"]
ACTS = ["nn.ReLU(inplace=True)", "nn.GELU()", "nn.SiLU()", "nn.LeakyReLU(0.1, inplace=True)", "nn.Hardswish()", "nn.Mish()"]
FUNC_ACTS = ["F.relu", "F.gelu", "F.silu", "torch.tanh", "torch.sigmoid"]
OPTIMS = ["torch.optim.AdamW({p}, lr={lr}, weight_decay={wd})", "torch.optim.SGD({p}, lr={lr}, momentum=0.9, weight_decay={wd})",
          "torch.optim.Adam({p}, lr={lr})", "torch.optim.RMSprop({p}, lr={lr}, alpha=0.9)"]
SCHEDS = ["torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max={n})",
          "torch.optim.lr_scheduler.StepLR(optimizer, step_size={s}, gamma=0.1)",
          "torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr={lr}, total_steps={n})",
          "torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[{s}, {s2}], gamma=0.2)"]


class Gen:
    """Deterministic text generator with unique-name helpers."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.used: set = set()

    def pick(self, seq):
        return self.r.choice(seq)

    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def n(self, lo: int, hi: int) -> int:
        return self.r.randint(lo, hi)

    def cls_name(self) -> str:
        for _ in range(100):
            name = self.pick(PREFIXES) + self.pick(PREFIXES[::2] + [""]) + self.pick(SUFFIXES)
            if name not in self.used:
                self.used.add(name)
                return name
        name = f"{self.pick(PREFIXES)}{self.pick(SUFFIXES)}{self.n(2, 999)}"
        self.used.add(name)
        return name

    def var(self) -> str:
        return self.pick(NOUNS) + self.pick(["", "_a", "_b", "_out", "_in", "_proj", "_norm", "2"])

    def lr(self) -> str:
        return self.pick(["1e-3", "3e-4", "0.1", "0.01", "5e-4", "2e-5", "0.05"])


def indent(text: str, n: int) -> str:
    pad = " " * n
    return "\n".join(pad + ln if ln.strip() else ln for ln in text.split("\n"))


# --------------------------------------------------------------------------- CUDA-isms
def cuda_device_line(g: Gen) -> str:
    return g.pick([
        'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")',
        'device = torch.device("cuda:0")',
        'device = "cuda" if torch.cuda.is_available() else "cpu"',
        "device = torch.device(f\"cuda:{local_rank}\")",
        'device = torch.device("cuda", local_rank)',
    ])


def move_batch(g: Gen, names: list, cuda: bool) -> list:
    out = []
    for nm in names:
        if cuda:
            out.append(g.pick([f"{nm} = {nm}.cuda(non_blocking=True)", f"{nm} = {nm}.cuda()", f'{nm} = {nm}.to("cuda")']))
        else:
            out.append(f"{nm} = {nm}.to(device, non_blocking=True)")
    return out


# --------------------------------------------------------------------------- model files
def model_block(g: Gen) -> tuple[str, str]:
    name = g.cls_name()
    kind = g.pick(["conv", "attn", "mlp", "conv", "residual"])
    act = g.pick(ACTS)
    if kind == "conv":
        k = g.pick([1, 3, 5, 7])
        body = f'''
class {name}(nn.Module):
    """Conv-norm-act stack with {g.n(2, 4)} stages and an optional squeeze-excite gate."""

    def __init__(self, in_ch, out_ch, stride=1, groups=1, use_se={g.pick(["True", "False"])}):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, {k}, stride=stride, padding={k // 2}, groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.act = {act}
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.use_se = use_se
        if use_se:
            hidden = max(8, out_ch // {g.pick([4, 8, 16])})
            self.se = nn.Sequential(
                nn.AdaptiveAvgPool2d(1),
                nn.Conv2d(out_ch, hidden, 1),
                {g.pick(ACTS)},
                nn.Conv2d(hidden, out_ch, 1),
                nn.Sigmoid(),
            )
        self.downsample = None
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False), nn.BatchNorm2d(out_ch))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.act(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.use_se:
            out = out * self.se(out)
        return self.act(out + identity)
'''
    elif kind == "attn":
        v = g.var()
        fused = g.chance(0.4)
        attn_core = (
            f"        {v} = F.scaled_dot_product_attention(q, k, v, dropout_p=self.drop if self.training else 0.0)\n"
            if fused else
            f"        scores = (q @ k.transpose(-2, -1)) * self.scale\n"
            f"        if mask is not None:\n"
            f"            scores = scores.masked_fill(mask[:, None, None, :] == 0, float(\"-inf\"))\n"
            f"        {v} = F.dropout(scores.softmax(dim=-1), self.drop, self.training) @ v\n"
        )
        body = f'''
class {name}(nn.Module):
    """Multi-head self-attention with a pre-norm residual and an MLP ({g.pick(["ViT", "BERT", "Swin", "DeiT"])} style)."""

    def __init__(self, dim, heads={g.pick([2, 4, 8, 12])}, mlp_ratio={g.pick(["2.0", "4.0", "3.0"])}, drop={g.pick(["0.0", "0.1"])}):
        super().__init__()
        assert dim % heads == 0, "dim must divide by heads"
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.drop = drop
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, dim * 3, bias={g.pick(["True", "False"])})
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), {act}, nn.Dropout(drop), nn.Linear(hidden, dim))

    def attention(self, x, mask=None):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
{attn_core}        return self.proj({v}.transpose(1, 2).reshape(b, n, c))

    def forward(self, x, mask=None):
        x = x + self.attention(self.norm1(x), mask)
        return x + self.mlp(self.norm2(x))
'''
    elif kind == "mlp":
        layers = g.n(2, 5)
        body = f'''
class {name}(nn.Module):
    """{layers}-layer MLP with {g.pick(["LayerNorm", "BatchNorm1d", "no"])} normalisation and dropout."""

    def __init__(self, in_features, hidden={g.pick([64, 128, 256, 512])}, out_features=None, dropout={g.pick(["0.1", "0.2", "0.0"])}):
        super().__init__()
        out_features = out_features or in_features
        dims = [in_features] + [hidden] * {layers - 1} + [out_features]
        blocks = []
        for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
            blocks.append(nn.Linear(a, b))
            if i < len(dims) - 2:
                blocks.append({act})
                blocks.append(nn.Dropout(dropout))
        self.net = nn.Sequential(*blocks)

    def forward(self, x):
        return self.net(x)
'''
    else:
        fa = g.pick(FUNC_ACTS)
        body = f'''
class {name}(nn.Module):
    """Pre-activation residual unit with stochastic depth (drop rate {g.pick(["0.1", "0.2", "0.05"])})."""

    def __init__(self, channels, drop_path=0.1):
        super().__init__()
        self.norm1 = nn.GroupNorm({g.pick([4, 8, 16, 32])}, channels)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm2 = nn.GroupNorm({g.pick([4, 8, 16, 32])}, channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.drop_path = drop_path

    def _drop_path(self, x):
        if not self.training or self.drop_path == 0.0:
            return x
        keep = 1.0 - self.drop_path
        shape = (x.shape[0],) + (1,) * (x.ndim - 1)
        mask = x.new_empty(shape).bernoulli_(keep)
        return x * mask / keep

    def forward(self, x):
        out = self.conv1({fa}(self.norm1(x)))
        out = self.conv2({fa}(self.norm2(out)))
        return x + self._drop_path(out)
'''
    return name, body


def model_file(g: Gen) -> str:
    task = g.pick(TASKS)
    blocks = [model_block(g) for _ in range(g.n(3, 7))]
    net = g.cls_name().replace(g.pick(SUFFIXES), "") + "Net"
    if net in g.used:
        net = net + str(g.n(2, 99))
    g.used.add(net)
    names = [b[0] for b in blocks]
    extra = ""
    if g.chance(0.25):
        extra += '''

def count_flops(model, input_size=(1, 3, 224, 224)):
    """Rough multiply-accumulate count for convolutions and linear layers."""
    total = 0
    hooks = []

    def conv_hook(mod, inp, out):
        nonlocal total
        total += out.numel() * mod.in_channels * mod.kernel_size[0] * mod.kernel_size[1] // mod.groups

    def linear_hook(mod, inp, out):
        nonlocal total
        total += out.numel() * mod.in_features

    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            hooks.append(m.register_forward_hook(conv_hook))
        elif isinstance(m, nn.Linear):
            hooks.append(m.register_forward_hook(linear_hook))
    with torch.no_grad():
        model(torch.zeros(*input_size))
    for h in hooks:
        h.remove()
    return total
'''
    if g.chance(0.15):  # a CUDA-ism in a model file: a smoke test at the bottom
        extra += f'''

if __name__ == "__main__":
    net = build_{task}_model().cuda()
    x = torch.randn(2, 3, 224, 224).cuda()
    with torch.no_grad():
        y = net(x)
    torch.cuda.synchronize()
    print(y.shape, f"{{torch.cuda.max_memory_allocated() / 2**20:.1f}} MB")
'''
    width = g.pick([32, 48, 64, 96])
    return f'''"""{task.upper()} model: {", ".join(names)} and the {net} backbone."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
{"".join(b[1] for b in blocks)}

class {net}(nn.Module):
    def __init__(self, num_classes={g.pick([10, 100, 1000, 21, 80])}, width={width}, depth={g.n(2, 6)}):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(width), {g.pick(ACTS)})
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Linear(width, num_classes)
        self.depth = depth
        self.reset_parameters()

    def reset_parameters(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm, nn.LayerNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward_features(self, x):
        x = self.stem(x)
        return torch.flatten(self.pool(x), 1)

    def forward(self, x):
        return self.head(self.forward_features(x))


def build_{task}_model(pretrained=None, **kwargs):
    model = {net}(**kwargs)
    if pretrained:
        state = torch.load(pretrained, map_location="cpu")
        missing, unexpected = model.load_state_dict(state.get("model", state), strict=False)
        print(f"loaded {{pretrained}}: {{len(missing)}} missing, {{len(unexpected)}} unexpected keys")
    return model


def param_groups(model, weight_decay={g.pick(["0.05", "1e-4", "5e-4"])}):
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        (no_decay if p.ndim <= 1 or name.endswith(".bias") else decay).append(p)
    return [{{"params": decay, "weight_decay": weight_decay}}, {{"params": no_decay, "weight_decay": 0.0}}]
{extra}'''


# --------------------------------------------------------------------------- training scripts
def train_file(g: Gen) -> str:
    task = g.pick(TASKS)
    data = g.pick(DOMAINS)
    amp = g.chance(0.7)
    ddp = g.chance(0.6)
    use_cuda_calls = g.chance(0.5)
    clip = g.chance(0.6)
    opt = g.pick(OPTIMS).format(p="model.parameters()", lr="args.lr", wd="args.weight_decay")
    sched = g.pick(SCHEDS).format(n="args.epochs * len(train_loader)", s=g.n(10, 30), s2=g.n(40, 80), lr="args.lr")
    move = "\n".join(move_batch(g, ["images", "targets"], use_cuda_calls))
    fwd = "outputs = model(images)\nloss = criterion(outputs, targets)"
    if amp:
        ac = g.pick(["with torch.cuda.amp.autocast():", "with torch.cuda.amp.autocast(enabled=args.amp):",
                     'with torch.autocast("cuda", dtype=torch.float16):', "with torch.autocast(device_type=\"cuda\", enabled=args.amp):"])
        step = f"{ac}\n{indent(fwd, 4)}\noptimizer.zero_grad(set_to_none=True)\nscaler.scale(loss).backward()\n"
        if clip:
            step += (g.pick(["scaler.unscale_(optimizer)\n", ""]) +
                     "torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)\n")
        step += "scaler.step(optimizer)\nscaler.update()"
        scaler = g.pick(["scaler = torch.cuda.amp.GradScaler(enabled=args.amp)", "scaler = torch.cuda.amp.GradScaler()",
                         'scaler = torch.amp.GradScaler("cuda", enabled=args.amp)'])
    else:
        step = f"{fwd}\noptimizer.zero_grad()\nloss.backward()\n"
        if clip:
            step += "torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)\n"
        step += "optimizer.step()"
        scaler = "scaler = None"
    dist_setup = ""
    if ddp:
        backend = g.pick(['"nccl"', "args.dist_backend", '"nccl" if torch.cuda.is_available() else "gloo"'])
        dist_setup = f'''
def setup_distributed(args):
    if "WORLD_SIZE" not in os.environ or int(os.environ["WORLD_SIZE"]) < 2:
        args.distributed = False
        return 0
    args.distributed = True
    args.rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend={backend}, init_method="env://")
    dist.barrier()
    return local_rank
'''
    empty = "\n        torch.cuda.empty_cache()" if g.chance(0.4) else ""
    sync = "torch.cuda.synchronize()\n    " if g.chance(0.5) else ""
    mem = ('\n            mem = torch.cuda.max_memory_allocated() / 1024 ** 2\n'
           '            print(f"epoch {epoch} it {i}/{len(loader)} loss {meter.avg:.4f} mem {mem:.0f}MB")'
           if g.chance(0.5) else
           '\n            print(f"epoch {epoch} it {i}/{len(loader)} loss {meter.avg:.4f}")')
    resume_load = g.pick(["torch.load(args.resume)", 'torch.load(args.resume, map_location="cpu")',
                          "torch.load(args.resume, map_location=device)"])
    seeds = "torch.manual_seed(args.seed)\n    torch.cuda.manual_seed_all(args.seed)" if g.chance(0.6) else "torch.manual_seed(args.seed)"
    bench = "\n    torch.backends.cudnn.benchmark = True" if g.chance(0.6) else ""
    wrap = ("\n    if args.distributed:\n        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)\n"
            "        model = DDP(model, device_ids=[local_rank], find_unused_parameters=False)") if ddp else ""
    return f'''"""Train a {task} model on {data}."""

import argparse
import json
import os
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def get_args():
    p = argparse.ArgumentParser(description="{task} training on {data}")
    p.add_argument("--data-root", default="/data/{data}")
    p.add_argument("--epochs", type=int, default={g.pick([10, 50, 90, 100, 300])})
    p.add_argument("--batch-size", type=int, default={g.pick([16, 32, 64, 128, 256])})
    p.add_argument("--lr", type=float, default={g.lr()})
    p.add_argument("--weight-decay", type=float, default={g.pick(["1e-4", "0.05", "5e-4"])})
    p.add_argument("--clip-grad", type=float, default={g.pick(["1.0", "5.0", "0.5"])})
    p.add_argument("--workers", type=int, default={g.pick([4, 8, 16])})
    p.add_argument("--amp", action="store_true")
    p.add_argument("--seed", type=int, default={g.n(0, 9999)})
    p.add_argument("--resume", default="")
    p.add_argument("--output", default="outputs/{task}_{data}")
    p.add_argument("--dist-backend", default="nccl")
    p.add_argument("--print-freq", type=int, default={g.pick([10, 20, 50, 100])})
    return p.parse_args()

{dist_setup}
class AverageMeter:
    def __init__(self):
        self.sum = 0.0
        self.count = 0

    def update(self, value, n=1):
        self.sum += value * n
        self.count += n

    @property
    def avg(self):
        return self.sum / max(self.count, 1)


def train_one_epoch(model, loader, criterion, optimizer, scheduler, scaler, epoch, device, args):
    model.train()
    meter = AverageMeter()
    start = time.time()
    for i, (images, targets) in enumerate(loader):
{indent(move, 8)}
{indent(step, 8)}
        scheduler.step()
        meter.update(loss.item(), images.size(0))
        if i % args.print_freq == 0:{mem}{empty}
    {sync}return meter.avg, time.time() - start


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    for images, targets in loader:
        images = images.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        preds = model(images).argmax(dim=1)
        correct += (preds == targets).sum().item()
        total += targets.numel()
    return correct / max(total, 1)


def main():
    args = get_args()
    {"local_rank = setup_distributed(args)" if ddp else "local_rank = 0"}
    {seeds}{bench}
    {cuda_device_line(g)}
    from models import build_model
    from data import build_loaders

    train_loader, val_loader = build_loaders(args)
    model = build_model(num_classes={g.pick([10, 100, 1000])}).to(device){wrap}
    criterion = nn.CrossEntropyLoss(label_smoothing={g.pick(["0.0", "0.1"])})
    optimizer = {opt}
    scheduler = {sched}
    {scaler}
    start_epoch = 0
    if args.resume:
        ckpt = {resume_load}
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        start_epoch = ckpt["epoch"] + 1
    os.makedirs(args.output, exist_ok=True)
    best = 0.0
    for epoch in range(start_epoch, args.epochs):
        loss, elapsed = train_one_epoch(model, train_loader, criterion, optimizer, scheduler, scaler, epoch, device, args)
        acc = evaluate(model, val_loader, device)
        print(json.dumps({{"epoch": epoch, "loss": loss, "acc": acc, "time": elapsed}}))
        if acc > best:
            best = acc
            torch.save({{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}},
                       os.path.join(args.output, "best.pth"))
    print(f"best accuracy {{best:.4f}}")


if __name__ == "__main__":
    main()
'''


# --------------------------------------------------------------------------- data pipelines
def dataset_class(g: Gen) -> str:
    name = g.pick(["Folder", "Csv", "Lmdb", "Json", "Shard", "Memmap", "Token", "Audio", "Patch", "Pair"]) + g.pick(["Dataset", "Images", "Corpus", "Samples"]) + str(g.n(1, 999))
    kind = g.pick(["image", "text", "table"])
    if kind == "image":
        return f'''
class {name}(Dataset):
    """Images listed in an index file, one `path label` per line."""

    def __init__(self, root, index_file, transform=None, cache_size={g.pick([0, 256, 1024])}):
        self.root = root
        self.transform = transform
        self.samples = []
        with open(os.path.join(root, index_file)) as fh:
            for line in fh:
                parts = line.strip().split()
                if len(parts) == 2:
                    self.samples.append((parts[0], int(parts[1])))
        self.cache = {{}}
        self.cache_size = cache_size

    def __len__(self):
        return len(self.samples)

    def _load(self, path):
        if path in self.cache:
            return self.cache[path]
        array = np.load(os.path.join(self.root, path))
        if len(self.cache) < self.cache_size:
            self.cache[path] = array
        return array

    def __getitem__(self, idx):
        path, label = self.samples[idx]
        image = torch.from_numpy(self._load(path)).float().div_(255.0)
        if image.ndim == 2:
            image = image.unsqueeze(0).expand(3, -1, -1)
        if self.transform is not None:
            image = self.transform(image)
        return image, label
'''
    if kind == "text":
        return f'''
class {name}(Dataset):
    """Fixed-length token blocks cut from a flat token file (block size {g.pick([128, 256, 512, 1024])})."""

    def __init__(self, path, block_size={g.pick([128, 256, 512])}, stride=None):
        self.tokens = np.memmap(path, dtype=np.uint16, mode="r")
        self.block_size = block_size
        self.stride = stride or block_size

    def __len__(self):
        return max(0, (len(self.tokens) - self.block_size - 1) // self.stride)

    def __getitem__(self, idx):
        start = idx * self.stride
        chunk = torch.from_numpy(self.tokens[start:start + self.block_size + 1].astype(np.int64))
        return chunk[:-1], chunk[1:]
'''
    return f'''
class {name}(Dataset):
    """Rows of a numeric table with {g.pick(["z-score", "min-max", "no"])} normalisation."""

    def __init__(self, array, target_column=-1, normalize=True):
        array = np.asarray(array, dtype=np.float32)
        self.x = np.delete(array, target_column, axis=1)
        self.y = array[:, target_column]
        if normalize:
            self.mean = self.x.mean(axis=0)
            self.std = self.x.std(axis=0) + 1e-6
            self.x = (self.x - self.mean) / self.std

    def __len__(self):
        return len(self.y)

    def __getitem__(self, idx):
        return torch.from_numpy(self.x[idx]), torch.tensor(self.y[idx])
'''


def data_file(g: Gen) -> str:
    classes = "".join(dataset_class(g) for _ in range(g.n(2, 4)))
    pin = g.pick(["pin_memory=True", "pin_memory=True", "pin_memory=torch.cuda.is_available()", "pin_memory=False"])
    prefetch = ""
    if g.chance(0.3):
        prefetch = '''

class CUDAPrefetcher:
    """Overlap host-to-device copies with compute using a side stream."""

    def __init__(self, loader):
        self.loader = iter(loader)
        self.stream = torch.cuda.Stream()
        self.preload()

    def preload(self):
        try:
            self.next_input, self.next_target = next(self.loader)
        except StopIteration:
            self.next_input = self.next_target = None
            return
        with torch.cuda.stream(self.stream):
            self.next_input = self.next_input.cuda(non_blocking=True)
            self.next_target = self.next_target.cuda(non_blocking=True)

    def next(self):
        torch.cuda.current_stream().wait_stream(self.stream)
        batch = self.next_input, self.next_target
        self.preload()
        return batch
'''
    return f'''"""Datasets, transforms and loaders for {g.pick(DOMAINS)}."""

import math
import os
import random

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class RandomFlipCrop:
    def __init__(self, size={g.pick([32, 64, 128, 224])}, padding={g.pick([2, 4, 8])}, p={g.pick(["0.5", "0.3"])}):
        self.size = size
        self.padding = padding
        self.p = p

    def __call__(self, image):
        if random.random() < self.p:
            image = image.flip(-1)
        image = torch.nn.functional.pad(image, [self.padding] * 4, mode="reflect")
        top = random.randint(0, image.shape[-2] - self.size)
        left = random.randint(0, image.shape[-1] - self.size)
        return image[..., top:top + self.size, left:left + self.size]


class Normalize:
    def __init__(self, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)):
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def __call__(self, image):
        return (image - self.mean) / self.std
{classes}

def pad_collate(batch, pad_value=0):
    """Pad variable-length 1-D samples to the longest in the batch."""
    xs, ys = zip(*batch)
    longest = max(x.shape[0] for x in xs)
    out = torch.full((len(xs), longest), pad_value, dtype=xs[0].dtype)
    for i, x in enumerate(xs):
        out[i, : x.shape[0]] = x
    return out, torch.stack([torch.as_tensor(y) for y in ys])


def seed_worker(worker_id):
    seed = torch.initial_seed() % 2**32
    np.random.seed(seed)
    random.seed(seed)


def build_loader(dataset, batch_size, workers={g.pick([2, 4, 8])}, shuffle=True, distributed=False, collate_fn=None):
    sampler = DistributedSampler(dataset, shuffle=shuffle) if distributed else None
    return DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=shuffle and sampler is None,
        sampler=sampler,
        num_workers=workers,
        {pin},
        drop_last=shuffle,
        worker_init_fn=seed_worker,
        collate_fn=collate_fn,
        persistent_workers=workers > 0,
    )
{prefetch}'''


# --------------------------------------------------------------------------- utils
def utils_file(g: Gen) -> str:
    parts = []
    parts.append('''
def set_seed(seed, deterministic=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
''' + ("    torch.cuda.manual_seed_all(seed)\n" if g.chance(0.7) else "") + (
        "    torch.backends.cudnn.deterministic = deterministic\n    torch.backends.cudnn.benchmark = not deterministic\n"
        if g.chance(0.6) else ""))
    parts.append('''
class Timer:
    """Wall-clock sections; synchronizes the GPU so the numbers are real."""

    def __init__(self, sync=True):
        self.sync = sync
        self.totals = {}
        self.counts = {}

    def __call__(self, name):
        return _Section(self, name)


class _Section:
    def __init__(self, timer, name):
        self.timer = timer
        self.name = name

    def __enter__(self):
        if self.timer.sync:
            torch.cuda.synchronize()
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.timer.sync:
            torch.cuda.synchronize()
        dt = time.perf_counter() - self.t0
        self.timer.totals[self.name] = self.timer.totals.get(self.name, 0.0) + dt
        self.timer.counts[self.name] = self.timer.counts.get(self.name, 0) + 1
        return False
''' if g.chance(0.5) else '''
class Timer:
    def __init__(self):
        self.t0 = time.perf_counter()

    def lap(self):
        now = time.perf_counter()
        dt, self.t0 = now - self.t0, now
        return dt
''')
    parts.append('''
def gpu_memory_report(device=None):
    if not torch.cuda.is_available():
        return "cuda not available"
    alloc = torch.cuda.memory_allocated(device) / 2**20
    reserved = torch.cuda.memory_reserved(device) / 2**20
    peak = torch.cuda.max_memory_allocated(device) / 2**20
    return f"allocated {alloc:.0f} MB, reserved {reserved:.0f} MB, peak {peak:.0f} MB"
''' if g.chance(0.5) else '''
def human_bytes(n):
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(n) < 1024:
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PB"
''')
    parts.append('''
def reduce_tensor(tensor, world_size):
    rt = tensor.clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    return rt / world_size


def is_main_process():
    return not dist.is_available() or not dist.is_initialized() or dist.get_rank() == 0


def save_on_master(obj, path):
    if is_main_process():
        tmp = path + ".tmp"
        torch.save(obj, tmp)
        os.replace(tmp, path)
''')
    parts.append(f'''
def load_config(path, overrides=None):
    """Read a JSON config and apply `key.sub=value` overrides."""
    with open(path) as fh:
        cfg = json.load(fh)
    for item in overrides or []:
        key, _, value = item.partition("=")
        node = cfg
        *parents, leaf = key.split(".")
        for p in parents:
            node = node.setdefault(p, {{}})
        try:
            node[leaf] = json.loads(value)
        except ValueError:
            node[leaf] = value
    return cfg


class {g.cls_name()}Meter:
    """Exponential moving average of a scalar (decay {g.pick(["0.9", "0.98", "0.99"])})."""

    def __init__(self, decay={g.pick(["0.9", "0.98", "0.99"])}):
        self.decay = decay
        self.value = None

    def update(self, x):
        x = float(x)
        self.value = x if self.value is None else self.decay * self.value + (1 - self.decay) * x
        return self.value


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    return [correct[:k].reshape(-1).float().sum(0).mul_(100.0 / target.size(0)) for k in topk]
''')
    if g.chance(0.3):
        parts.append('''
def select_devices(ids):
    os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(str(i) for i in ids)
    return len(ids)
''')
    g.r.shuffle(parts)
    return '''"""Training utilities: seeding, timing, meters, distributed helpers."""

import json
import os
import random
import time

import numpy as np
import torch
import torch.distributed as dist
''' + "\n".join(parts)


# --------------------------------------------------------------------------- losses / metrics
def losses_file(g: Gen) -> str:
    parts = []
    for _ in range(g.n(3, 5)):
        name = g.cls_name() + "Loss"
        kind = g.pick(["focal", "dice", "smooth", "contrastive", "kd"])
        if kind == "focal":
            parts.append(f'''
class {name}(nn.Module):
    def __init__(self, gamma={g.pick(["2.0", "1.5"])}, alpha={g.pick(["0.25", "0.5", "None"])}, reduction="mean"):
        super().__init__()
        self.gamma = gamma
        self.alpha = alpha
        self.reduction = reduction

    def forward(self, logits, target):
        ce = F.cross_entropy(logits, target, reduction="none")
        pt = torch.exp(-ce)
        loss = (1 - pt) ** self.gamma * ce
        if self.alpha is not None:
            loss = self.alpha * loss
        return loss.mean() if self.reduction == "mean" else loss.sum()
''')
        elif kind == "dice":
            parts.append(f'''
class {name}(nn.Module):
    def __init__(self, smooth={g.pick(["1.0", "1e-5"])}):
        super().__init__()
        self.smooth = smooth

    def forward(self, logits, target):
        probs = logits.softmax(dim=1)
        onehot = F.one_hot(target, probs.shape[1]).permute(0, 3, 1, 2).float()
        inter = (probs * onehot).sum(dim=(2, 3))
        union = probs.sum(dim=(2, 3)) + onehot.sum(dim=(2, 3))
        return 1 - ((2 * inter + self.smooth) / (union + self.smooth)).mean()
''')
        elif kind == "smooth":
            parts.append(f'''
class {name}(nn.Module):
    def __init__(self, smoothing={g.pick(["0.1", "0.2"])}):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, target):
        logp = F.log_softmax(logits, dim=-1)
        nll = -logp.gather(dim=-1, index=target.unsqueeze(1)).squeeze(1)
        return ((1 - self.smoothing) * nll - self.smoothing * logp.mean(dim=-1)).mean()
''')
        elif kind == "contrastive":
            parts.append(f'''
class {name}(nn.Module):
    """InfoNCE over a batch of paired embeddings (temperature {g.pick(["0.07", "0.1", "0.2"])})."""

    def __init__(self, temperature={g.pick(["0.07", "0.1"])}):
        super().__init__()
        self.temperature = temperature

    def forward(self, a, b):
        a = F.normalize(a, dim=-1)
        b = F.normalize(b, dim=-1)
        logits = a @ b.t() / self.temperature
        labels = torch.arange(a.shape[0], device=a.device)
        return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
''')
        else:
            parts.append(f'''
class {name}(nn.Module):
    """Knowledge distillation: KL to a teacher at temperature T plus hard-label CE."""

    def __init__(self, T={g.pick(["2.0", "4.0"])}, alpha={g.pick(["0.5", "0.9"])}):
        super().__init__()
        self.T = T
        self.alpha = alpha

    def forward(self, student, teacher, target):
        soft = F.kl_div(F.log_softmax(student / self.T, dim=-1), F.softmax(teacher / self.T, dim=-1), reduction="batchmean")
        return self.alpha * soft * self.T ** 2 + (1 - self.alpha) * F.cross_entropy(student, target)
''')
    metric = '''
@torch.no_grad()
def confusion_matrix(preds, target, num_classes):
    idx = target * num_classes + preds
    return torch.bincount(idx, minlength=num_classes ** 2).reshape(num_classes, num_classes)


def mean_iou(conf):
    conf = conf.double()
    inter = conf.diag()
    union = conf.sum(0) + conf.sum(1) - inter
    return (inter / union.clamp(min=1)).mean().item()
''' if g.chance(0.5) else '''
@torch.no_grad()
def topk_accuracy(logits, target, k=5):
    top = logits.topk(k, dim=-1).indices
    return (top == target[:, None]).any(dim=-1).float().mean().item()
'''
    return '''"""Losses and metrics."""

import torch
import torch.nn as nn
import torch.nn.functional as F
''' + "".join(parts) + metric


# --------------------------------------------------------------------------- inference / export
def infer_file(g: Gen) -> str:
    opset = g.pick([11, 13, 17, 18])
    dyn = g.chance(0.4)
    dyn_arg = ',\n        dynamic_axes={"input": {0: "batch"}, "output": {0: "batch"}}' if dyn else ""
    dev = cuda_device_line(g) if g.chance(0.7) else 'device = torch.device("cpu")'
    half = "\n    if args.half:\n        model = model.half()\n        x = x.half()" if g.chance(0.4) else ""
    return f'''"""Run inference with a trained checkpoint, benchmark it, and export ONNX."""

import argparse
import time

import torch

from models import build_model


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("checkpoint")
    p.add_argument("--onnx", default="model.onnx")
    p.add_argument("--size", type=int, default={g.pick([224, 256, 320, 512])})
    p.add_argument("--batch", type=int, default={g.pick([1, 8, 32])})
    p.add_argument("--iters", type=int, default={g.pick([50, 100, 200])})
    p.add_argument("--half", action="store_true")
    return p.parse_args()


@torch.inference_mode()
def benchmark(model, x, iters):
    for _ in range({g.pick([5, 10, 20])}):
        model(x)
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        model(x)
    torch.cuda.synchronize()
    return (time.perf_counter() - start) / iters * 1000


def main():
    args = parse()
    {dev}
    state = torch.load(args.checkpoint{g.pick(["", ", map_location='cpu'", ""])})
    model = build_model()
    model.load_state_dict(state["model"] if "model" in state else state)
    model = model.to(device).eval()
    x = torch.randn(args.batch, 3, args.size, args.size, device=device){half}
    print(f"latency {{benchmark(model, x, args.iters):.2f}} ms/batch")
    torch.onnx.export(
        model,
        x,
        args.onnx,
        opset_version={opset},
        input_names=["input"],
        output_names=["output"]{dyn_arg},
    )
    print("exported", args.onnx)


if __name__ == "__main__":
    main()
'''


KINDS = [(model_file, 5), (train_file, 2), (data_file, 3), (utils_file, 2), (losses_file, 2), (infer_file, 1)]
FOLDER = {"model_file": "models", "train_file": "tools", "data_file": "data", "utils_file": "utils",
          "losses_file": "losses", "infer_file": "tools"}


def build_corpus(directory: str, min_lines: int, seed: int = 20260530) -> tuple[int, int]:
    """Write files until ``min_lines`` lines exist; every file must parse.  Returns (files, lines)."""
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.makedirs(directory)
    g = Gen(seed)
    weighted = [k for k, w in KINDS for _ in range(w)]
    files = lines = 0
    project = 0
    while lines < min_lines:
        if files % 40 == 0:
            project += 1
        kind = g.pick(weighted)
        text = kind(g)
        ast.parse(text)  # a generator bug must not turn into SYN001 findings
        sub = os.path.join(directory, f"project_{project:03d}", FOLDER[kind.__name__])
        os.makedirs(sub, exist_ok=True)
        path = os.path.join(sub, f"{kind.__name__.split('_')[0]}_{files:05d}.py")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        files += 1
        lines += text.count("\n") + 1
    with open(os.path.join(directory, "CORPUS.json"), "w") as fh:
        json.dump({"version": CORPUS_VERSION, "seed": seed, "min_lines": min_lines, "files": files, "lines": lines}, fh)
    return files, lines


def ensure_corpus(directory: str, min_lines: int, regen: bool) -> tuple[int, int]:
    stamp = os.path.join(directory, "CORPUS.json")
    if not regen and os.path.exists(stamp):
        with open(stamp) as fh:
            meta = json.load(fh)
        if meta.get("version") == CORPUS_VERSION and meta.get("min_lines") == min_lines:
            return meta["files"], meta["lines"]
    return build_corpus(directory, min_lines)


# --------------------------------------------------------------------------- measurements
def time_ast_parse(directory: str) -> tuple[float, int, int]:
    """Seconds to read, decode and ``ast.parse`` every .py file, one process."""
    paths = []
    for dirpath, _dirs, files in os.walk(directory):
        paths.extend(os.path.join(dirpath, f) for f in sorted(files) if f.endswith(".py"))
    t0 = time.perf_counter()
    lines = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for p in paths:
            with open(p, "rb") as fh:
                text = fh.read().decode("utf-8")
            ast.parse(text, filename=p)
            lines += text.count("\n") + 1
    return time.perf_counter() - t0, len(paths), lines


def time_scan(directory: str, cache_dir, jobs=None):
    settings = Settings().validate()
    t0 = time.perf_counter()
    entries = discover([directory], settings, lambda p, m: None)
    result = scan_files(entries, settings, cache_dir, jobs)
    return time.perf_counter() - t0, result


def best_of(n: int, fn):
    best = None
    for _ in range(n):
        out = fn()
        if best is None or out[0] < best[0]:
            best = out
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=DEFAULT_DIR, help="corpus folder (default: bench/corpus)")
    ap.add_argument("--lines", type=int, default=100_000, help="minimum corpus size in lines")
    ap.add_argument("--regen", action="store_true", help="rebuild the corpus even if it exists")
    ap.add_argument("--repeat", type=int, default=1, help="best of N for each measurement")
    ap.add_argument("--jobs", type=int, default=None, help="scan processes (default: the engine's default, CPU count)")
    ap.add_argument("--serial", action="store_true", help="also time a cold scan with jobs=1")
    ap.add_argument("--profile", action="store_true", help="cProfile a cold jobs=1 scan and print the top functions")
    ap.add_argument("--cpu", action="store_true",
                    help="also CPU time (process_time) of ast.parse and of a cold jobs=1 scan, alternating in this process: "
                         "a per-core ratio that other load on the machine moves less than wall time")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    files, lines = ensure_corpus(args.corpus, args.lines, args.regen)
    print(f"corpus: {files} files, {lines:,} lines in {args.corpus} ({time.perf_counter() - t0:.1f}s to build/check)")
    print(f"cpus: {os.cpu_count()}, scan jobs: {args.jobs or 'default (' + str(os.cpu_count()) + ')'}, python {sys.version.split()[0]}")

    version_before = ruleset_version()
    t_ast, n_files, n_lines = best_of(args.repeat, lambda: time_ast_parse(args.corpus))
    cache_root = tempfile.mkdtemp(prefix="ascendify-bench-cache-")
    try:
        colds = []
        for i in range(args.repeat):
            cache = os.path.join(cache_root, f"c{i}")
            colds.append((time_scan(args.corpus, cache, args.jobs), cache))
        (t_cold, res_cold), cache = min(colds, key=lambda c: c[0][0])
        t_warm, res_warm = best_of(args.repeat, lambda: time_scan(args.corpus, cache, args.jobs))
        t_serial = None
        if args.serial:  # a fresh cache folder for every repetition, so each one is cold
            t_serial = min(time_scan(args.corpus, os.path.join(cache_root, f"serial{i}"), 1)[0] for i in range(args.repeat))
    finally:
        shutil.rmtree(cache_root, ignore_errors=True)

    scanned_lines = sum(res_cold.lines.values())
    by_code: dict = {}
    for f in res_cold.findings:
        by_code[f.code] = by_code.get(f.code, 0) + 1

    def row(label, secs, nl):
        return f"  {label:<28} {secs:8.3f} s  {nl / secs:12,.0f} lines/s"

    print()
    print(row("ast.parse (baseline, 1 proc)", t_ast, n_lines))
    print(row("cold scan", t_cold, scanned_lines))
    print(row("warm scan (same cache)", t_warm, scanned_lines))
    if t_serial is not None:
        print(row("cold scan, jobs=1", t_serial, scanned_lines))
    print()
    r1 = t_cold / t_ast
    r2 = t_warm / t_cold
    print(f"  cold / ast.parse = {r1:6.2f}x   target <= {TARGET_COLD_VS_AST:.1f}x   {'MET' if r1 <= TARGET_COLD_VS_AST else 'MISSED'}")
    print(f"  warm / cold      = {r2:6.3f}    target <= {TARGET_WARM_VS_COLD:.2f}    {'MET' if r2 <= TARGET_WARM_VS_COLD else 'MISSED'}")
    if t_serial is not None:
        print(f"  cold jobs=1 / ast.parse = {t_serial / t_ast:.2f}x (per-core cost of the rules)")
    print()
    print(f"  findings: {len(res_cold.findings):,} ({len(res_cold.findings) / max(scanned_lines, 1) * 1000:.1f} per 1k lines); "
          f"cached on warm run: {res_warm.cached}/{len(res_warm.files)} files; warm findings equal: "
          f"{len(res_warm.findings) == len(res_cold.findings)}")
    top = ", ".join(f"{c} {n}" for c, n in sorted(by_code.items(), key=lambda kv: -kv[1])[:12])
    print(f"  by code: {top}")
    if ruleset_version() != version_before or res_warm.cached != len(res_warm.files):
        print("  WARNING: the rule set changed during the run (or the cache missed); the warm numbers are not valid, run again")
    if n_files != len(res_cold.files):
        print(f"  note: ast.parse saw {n_files} files, the scan {len(res_cold.files)}")

    if args.cpu:
        cpu_parse, cpu_scan = [], []
        for i in range(max(args.repeat, 3)):
            t0 = time.process_time()
            time_ast_parse(args.corpus)
            cpu_parse.append(time.process_time() - t0)
            t0 = time.process_time()
            time_scan(args.corpus, None, 1)
            cpu_scan.append(time.process_time() - t0)
        print(f"  CPU time, best of {len(cpu_scan)}: ast.parse {min(cpu_parse):.3f} s, cold scan jobs=1 {min(cpu_scan):.3f} s: "
              f"{min(cpu_scan) / min(cpu_parse):.2f}x")

    if args.profile:
        prof = cProfile.Profile()
        settings = Settings().validate()
        entries = discover([args.corpus], settings, lambda p, m: None)
        prof.enable()
        scan_files(entries, settings, None, 1)
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(25)
        print("\ncProfile, cold scan, jobs=1, no cache (cumulative):")
        print(out.getvalue())
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(25)
        print("cProfile (own time):")
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
