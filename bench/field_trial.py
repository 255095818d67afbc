"""The standing field trial (issue 23): public training programs, migrated with both targets, run for a
few steps under ``ascendify run`` next to a plain CPU run; prints the table.

    python bench/field_trial.py [--cache DIR] [--only nanogpt,mingpt,...] [--json FILE]
    python bench/field_trial.py --rescan [--only ...]     # the second scan of the copies the last run kept

The repositories are NOT part of ascendify and are never committed: the script expects each one
cloned at its pinned commit under ``CACHE/src/<name>`` (``git clone URL && git checkout COMMIT``;
default cache ``/work/scratch/trial``, or ``$FIELD_TRIAL_DIR``) and, for the torchvision programs,
a torchvision importable on ``PYTHONPATH`` (``CACHE/site``).  No project file is edited: the data
are synthetic, written in the formats the scripts read, into a copy.

Each entry runs five ways, one intra-op thread each (``OMP_NUM_THREADS=1``):
  orig      the original, under ``ascendify run`` (where does an Ascend host stop?)
  npu       ``ascendify fix --target npu --out-dir`` copy (safe fixes only), under run
  agnostic  ``ascendify fix --target agnostic --out-dir`` copy, under run
  cpu       the original on the plain CPU with its CPU switches (the loss baseline)
  cmp       the npu copy under ``run --cpu-rng`` (one RNG stream) with the same numeric switches as
            ``cpu`` (fp32, same optimizer path): its losses are compared with ``cpu``'s as printed
A program with no step limit is stopped (SIGINT to run, exit 130) after ``stop_after`` matching log
lines: "ran N steps" is then the outcome.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.environ.get("FIELD_TRIAL_DIR", "/work/scratch/trial")

REPOS = {
    # name: (url, pinned commit)
    "nanoGPT": ("https://github.com/karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291"),
    "minGPT": ("https://github.com/karpathy/minGPT", "37baab71b9abea1b76ab957409a1cc2fbfba8a26"),
    "examples": ("https://github.com/pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8"),
    "pytorch-image-models": ("https://github.com/huggingface/pytorch-image-models", "aa4b5850c1543fa488abf260f18390eda46cf85d"),
    "denoising-diffusion-pytorch": ("https://github.com/lucidrains/denoising-diffusion-pytorch", "faed4db28e724735323fa91c70aa9b28a6e1cbac"),
    "yolov5": ("https://github.com/ultralytics/yolov5", "5081342f04fb287fc2e5f2b5a4e06752b7937b1c"),
    "DiT": ("https://github.com/facebookresearch/DiT", "ed81ce2229091fd4ecc9a223645f95cf379d582b"),
}


def _yolo(d: str) -> None:
    """4 random 64x64 images with one box each, a dataset yaml, and the font yolov5 would download
    (matplotlib's DejaVuSans copied to ~/.config/Ultralytics/Arial.ttf, outside the project)."""
    import glob

    import numpy as np
    from PIL import Image

    rng = np.random.RandomState(0)
    for sub in ("images/train", "labels/train"):
        os.makedirs(os.path.join(d, "data", "synth", sub), exist_ok=True)
    for i in range(4):
        Image.fromarray(rng.randint(0, 256, size=(64, 64, 3)).astype("uint8")).save(
            os.path.join(d, "data", "synth", "images", "train", f"{i}.jpg"))
        with open(os.path.join(d, "data", "synth", "labels", "train", f"{i}.txt"), "w") as fh:
            fh.write(f"{i % 2} 0.5 0.5 0.3 0.3\n")
    with open(os.path.join(d, "synth.yaml"), "w") as fh:
        fh.write("path: data/synth\ntrain: images/train\nval: images/train\nnames:\n  0: a\n  1: b\n")
    font = os.path.join(os.path.expanduser("~"), ".config", "Ultralytics", "Arial.ttf")
    if not os.path.exists(font):
        import matplotlib

        src = glob.glob(os.path.join(os.path.dirname(matplotlib.__file__), "mpl-data", "fonts", "ttf", "DejaVuSans.ttf"))
        os.makedirs(os.path.dirname(font), exist_ok=True)
        shutil.copy(src[0], font)

# the repository has no training script: the trial's own driver, the README's Trainer example at toy size
DDPM_DRIVER = """\
import torch
from denoising_diffusion_pytorch import Unet, GaussianDiffusion, Trainer

torch.manual_seed(0)

model = Unet(dim=8, dim_mults=(1, 2), flash_attn=False)
diffusion = GaussianDiffusion(model, image_size=16, timesteps=10, sampling_timesteps=5)
trainer = Trainer(diffusion, "data/images", train_batch_size=16, train_lr=8e-5, train_num_steps=3,
                  gradient_accumulate_every=1, ema_decay=0.995, amp=False, calculate_fid=False,
                  save_and_sample_every=1000, results_folder="out-trial")
trainer.train()
"""


def _ddpm(d: str) -> None:
    import numpy as np
    from PIL import Image

    folder = os.path.join(d, "data", "images")
    os.makedirs(folder, exist_ok=True)
    rng = np.random.RandomState(0)
    for i in range(100):  # the Trainer asserts at least 100 images
        Image.fromarray(rng.randint(0, 256, size=(16, 16, 3)).astype("uint8")).save(os.path.join(folder, f"{i}.png"))
    with open(os.path.join(d, "trial_train.py"), "w", encoding="utf-8") as fh:
        fh.write(DDPM_DRIVER)


# DiT loads `AutoencoderKL.from_pretrained("stabilityai/sd-vae-ft-ema")` from the Hub, which this host
# cannot reach.  The trial's switch (no project file edited, no patch of diffusers): a randomly initialised
# tiny AutoencoderKL (4 latent channels, 8x down-sampling, as the real one) saved with `save_pretrained`
# into a Hub cache laid out as huggingface_hub writes it (CACHE/hf), and the run's environment has
# HF_HOME pointing there and HF_HUB_OFFLINE=1, so diffusers' own loading code reads it from the cache.
DIT_VAE = """\
import os, sys, torch
from diffusers.models import AutoencoderKL
torch.manual_seed(0)
vae = AutoencoderKL(in_channels=3, out_channels=3, latent_channels=4, layers_per_block=1, norm_num_groups=4,
                    block_out_channels=(8, 8, 8, 8),
                    down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4)
snap = os.path.join(sys.argv[1], "hub", "models--stabilityai--sd-vae-ft-ema")
rev = "0" * 40
vae.save_pretrained(os.path.join(snap, "snapshots", rev))
os.makedirs(os.path.join(snap, "refs"), exist_ok=True)
with open(os.path.join(snap, "refs", "main"), "w") as fh:
    fh.write(rev)
"""


def _dit_env() -> dict:
    # timm and diffusers (not in ascendify's environment) are installed for the trial only, into
    # CACHE/site-dit (`pip install --no-deps --target CACHE/site-dit timm diffusers importlib_metadata zipp`);
    # torchrun's variables for one process: train.py calls init_process_group with the env:// default
    return {"PYTHONPATH": os.path.join(CACHE, "site-dit"), "HF_HOME": os.path.join(CACHE, "hf"), "HF_HUB_OFFLINE": "1",
            "RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29517"}


def _dit(d: str) -> None:
    _image_folder(os.path.join(d, "data", "synth"), per_class={"train": 2})
    if not os.path.isdir(os.path.join(CACHE, "hf", "hub", "models--stabilityai--sd-vae-ft-ema", "snapshots")):
        env = _env(_dit_env())
        subprocess.run([sys.executable, "-c", DIT_VAE, os.path.join(CACHE, "hf")], env=env, check=True)


# ----------------------------------------------------------------------------- synthetic data
def _rand_tokens(folder: str, vocab: int = 65, n: int = 20000) -> None:
    import numpy as np

    os.makedirs(folder, exist_ok=True)
    rng = np.random.RandomState(0)
    for split in ("train", "val"):
        rng.randint(0, vocab, size=n).astype(np.uint16).tofile(os.path.join(folder, f"{split}.bin"))
    with open(os.path.join(folder, "meta.pkl"), "wb") as fh:
        pickle.dump({"vocab_size": vocab}, fh)


def _mnist_idx(folder: str, n_train: int = 256, n_test: int = 64) -> None:
    import numpy as np

    raw = os.path.join(folder, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    rng = np.random.RandomState(0)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        img = rng.randint(0, 256, size=(n, 28, 28)).astype(np.uint8)
        lab = rng.randint(0, 10, size=n).astype(np.uint8)
        with open(os.path.join(raw, f"{prefix}-images-idx3-ubyte"), "wb") as fh:
            fh.write((2051).to_bytes(4, "big") + n.to_bytes(4, "big") + (28).to_bytes(4, "big") + (28).to_bytes(4, "big"))
            fh.write(img.tobytes())
        with open(os.path.join(raw, f"{prefix}-labels-idx1-ubyte"), "wb") as fh:
            fh.write((2049).to_bytes(4, "big") + n.to_bytes(4, "big"))
            fh.write(lab.tobytes())


def _words(folder: str) -> None:
    import random

    os.makedirs(folder, exist_ok=True)
    rnd = random.Random(0)
    vocab = [f"w{i}" for i in range(200)]
    for split, lines in (("train", 400), ("valid", 60), ("test", 60)):
        with open(os.path.join(folder, f"{split}.txt"), "w", encoding="utf-8") as fh:
            for _ in range(lines):
                fh.write(" ".join(rnd.choice(vocab) for _ in range(12)) + "\n")


def _image_folder(folder: str, classes: int = 2, per_class: dict = None) -> None:
    import numpy as np
    from PIL import Image

    rng = np.random.RandomState(0)
    for split, n in (per_class or {"train": 8, "validation": 4}).items():
        for c in range(classes):
            d = os.path.join(folder, split, f"class{c}")
            os.makedirs(d, exist_ok=True)
            for i in range(n):
                Image.fromarray(rng.randint(0, 256, size=(32, 32, 3)).astype("uint8")).save(os.path.join(d, f"{i}.png"))


# ----------------------------------------------------------------------------- the entries
ENTRIES = [
    {
        "name": "nanogpt", "title": "nanoGPT train.py", "repo": "nanoGPT", "cwd": ".",
        "setup": lambda d: _rand_tokens(os.path.join(d, "data", "rand")),
        "argv": ["train.py", "--dataset=rand", "--n_layer=2", "--n_head=2", "--n_embd=64", "--block_size=32",
                 "--batch_size=4", "--max_iters=3", "--lr_decay_iters=3", "--eval_interval=1000", "--eval_iters=1",
                 "--log_interval=1", "--compile=False", "--warmup_iters=0", "--out_dir=out-trial"],
        "cpu": ["--device=cpu", "--dtype=float32"], "cmp": ["--dtype=float32"],
        "loss": r"iter (\d+): loss ([0-9.]+)",
    },
    {
        "name": "mingpt", "title": "minGPT adder demo", "repo": "minGPT", "cwd": ".",
        "setup": None,
        "argv": ["projects/adder/adder.py", "--trainer.max_iters=3", "--trainer.num_workers=0",
                 "--system.work_dir='out-trial'"],
        "env": {"PYTHONPATH": "."}, "cpu": [], "cmp": [],
        "loss": r"iter (\d+): train loss ([0-9.]+)",
    },
    {
        "name": "mnist", "title": "pytorch/examples mnist", "repo": "examples", "cwd": "mnist",
        "setup": lambda d: _mnist_idx(os.path.join(d, "..", "data")),  # main.py reads ../data
        "argv": ["main.py", "--epochs", "1", "--batch-size", "32", "--test-batch-size", "32", "--log-interval", "1"],
        # main.py shuffles (and starts a DataLoader worker) only with an accelerator: a --no-accel CPU run reads
        # the data in another order, so it is no baseline
        "cpu": None, "cmp": [], "no_cpu": "main.py shuffles only with an accelerator: --no-accel changes the data order",
        "loss": r"Train Epoch: \d+ \[(\d+)/\d+ .*\]\s+Loss: ([0-9.]+)",
    },
    {
        "name": "dcgan", "title": "pytorch/examples dcgan --accel", "repo": "examples", "cwd": "dcgan",
        "setup": None,
        "argv": ["main.py", "--dataset", "fake", "--accel", "--dry-run", "--batchSize", "8", "--manualSeed", "1",
                 "--ngf", "8", "--ndf", "8", "--workers", "0", "--outf", "out-trial"],
        "cpu": [], "cmp": [],
        "loss": r"\[\d+/\d+\]\[(\d+)/\d+\] Loss_D: ([0-9.]+)",
    },
    {
        "name": "imagenet", "title": "pytorch/examples imagenet --dummy", "repo": "examples", "cwd": "imagenet",
        "setup": None,
        "argv": ["main.py", "--dummy", "-a", "resnet18", "-b", "4", "--workers", "0", "--print-freq", "1", "--epochs", "1",
                 "--seed", "0"],  # without a seed torch's default generator is seeded at random
        # one device for the comparison: with 8, main.py wraps the model in DataParallel (BatchNorm per replica)
        "cpu": ["--no-accel"], "cmp": [], "cmp_run": ["--devices", "1"], "stop_after": (r"Epoch: \[0\]\[\s*\d+/", 3),
        "loss": r"Epoch: \[0\]\[\s*(\d+)/\d+\].*Loss ([0-9.e+-]+)",
    },
    {
        "name": "timm", "title": "timm train.py resnet10t", "repo": "pytorch-image-models", "cwd": ".",
        "setup": lambda d: _image_folder(os.path.join(d, "data", "synth")),
        "argv": ["train.py", "--data-dir", "data/synth", "--model", "resnet10t", "--num-classes", "2", "--img-size", "32",
                 "-b", "4", "--epochs", "1", "--workers", "1", "--log-interval", "1", "--output", "out-trial",
                 "--no-prefetcher", "--sched", "step", "--lr", "0.01", "--warmup-epochs", "0"],
        "cpu": ["--device", "cpu"], "cmp": [],
        "loss": r"Train: \d+ \[\s*(\d+)/\d+.*?Loss:\s+([0-9.]+)",
    },
    {
        "name": "timm-amp", "title": "timm train.py resnet10t --amp", "repo": "pytorch-image-models", "cwd": ".",
        "setup": lambda d: _image_folder(os.path.join(d, "data", "synth")),
        "argv": ["train.py", "--data-dir", "data/synth", "--model", "resnet10t", "--num-classes", "2", "--img-size", "32",
                 "-b", "4", "--epochs", "1", "--workers", "1", "--log-interval", "1", "--output", "out-trial",
                 "--no-prefetcher", "--sched", "step", "--lr", "0.01", "--warmup-epochs", "0", "--amp"],
        "cpu": None, "cmp": [], "no_cpu": "fp16 AMP: the CPU's autocast is bf16",
        "loss": r"Train: \d+ \[\s*(\d+)/\d+.*?Loss:\s+([0-9.]+)",
    },
    {
        "name": "ddpm", "title": "denoising-diffusion-pytorch Trainer (trial driver)", "repo": "denoising-diffusion-pytorch",
        "cwd": ".", "setup": _ddpm, "argv": ["trial_train.py"], "env": {"PYTHONPATH": "."},
        "cpu": [], "cmp": [],  # accelerate picks the device itself: the CPU on a plain machine
        "loss": r"(loss): ([0-9.]+)",
    },
    {
        "name": "yolov5", "title": "yolov5 train.py (yolov5n from scratch)", "repo": "yolov5", "cwd": ".", "setup": _yolo,
        "argv": ["train.py", "--img", "64", "--batch", "2", "--epochs", "1", "--data", "synth.yaml", "--cfg",
                 "models/yolov5n.yaml", "--weights", "", "--workers", "0", "--noplots", "--name", "trial", "--exist-ok"],
        # check_amp() turns AMP on for an accelerator (fp16 autocast + GradScaler, as on CUDA) and off on the CPU,
        # and train.py has no switch for it: no fp32 run of a copy to compare with the CPU's
        "cpu": None, "cmp": [], "no_cpu": "fp16 AMP on the NPU as on CUDA, fp32 on the CPU: check_amp() has no switch",
        "loss": r"(0/0)\s+\S+\s+([0-9.]+\s+[0-9.]+\s+[0-9.]+)",
    },
    {
        "name": "dit", "title": "DiT train.py DiT-S/8 (one process, torchrun's env)", "repo": "DiT", "cwd": ".", "setup": _dit,
        "argv": ["train.py", "--data-path", "data/synth/train", "--model", "DiT-S/8", "--image-size", "256",
                 "--num-classes", "2", "--epochs", "1", "--global-batch-size", "2", "--num-workers", "0",
                 "--log-every", "1", "--results-dir", "out-trial"],
        "env": _dit_env, "cpu": None, "cmp": [], "no_cpu": "train.py asserts CUDA and NCCL, in both copies an accelerator",
        "loss": r"\(step=(\d+)\) Train Loss: ([0-9.]+)",
    },
    {
        "name": "wlm", "title": "pytorch/examples word_language_model (LSTM)", "repo": "examples", "cwd": "word_language_model",
        "setup": lambda d: _words(os.path.join(d, "data", "synthetic")),
        "argv": ["main.py", "--accel", "--data", "./data/synthetic", "--epochs", "1", "--emsize", "16", "--nhid", "16",
                 "--bptt", "8", "--batch_size", "4", "--log-interval", "5", "--dry-run", "--save", "out-trial.pt"],
        "cpu": [], "cmp": [],
        "loss": r"(end of epoch).*valid loss\s+([0-9.]+)",
    },
]


# ----------------------------------------------------------------------------- running
def _env(extra=None) -> dict:
    if callable(extra):
        extra = extra()
    env = dict(os.environ)
    env.pop("ASCENDIFY_RUN_CONFIG", None)
    env["OMP_NUM_THREADS"] = "1"
    env["PYTHONHASHSEED"] = "0"
    site = os.path.join(CACHE, "site")
    paths = [os.path.join(ROOT, "src")] + ([site] if os.path.isdir(site) else [])
    for k, v in (extra or {}).items():
        if k == "PYTHONPATH":
            paths = [v] + paths
        else:
            env[k] = v
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _exec(cmd, cwd, env, timeout, stop_after=None) -> tuple:
    """(exit code, stdout, stderr, seconds); SIGINT after ``stop_after=(regex, n)`` matching stdout lines."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if stop_after:
        import threading

        err_chunks = []
        threading.Thread(target=lambda: err_chunks.append(p.stderr.read()), daemon=True).start()
        out_lines, seen = [], 0
        pat = re.compile(stop_after[0])
        deadline = t0 + timeout
        for line in p.stdout:
            out_lines.append(line)
            if pat.search(line):
                seen += 1
                if seen >= stop_after[1]:
                    p.send_signal(signal.SIGINT)
                    break
            if time.monotonic() > deadline:
                p.send_signal(signal.SIGINT)
                break
        try:  # SIGINT lands between ops: a slow CPU step on a loaded machine can take a while
            rest, _ = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            p.kill()
            rest, _ = p.communicate()
        out_lines.append(rest or "")
        time.sleep(0.1)
        return p.returncode, "".join(out_lines), "".join(err_chunks), time.monotonic() - t0
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
        err += f"\n[field trial: stopped after {timeout} s]"
    return p.returncode, out, err, time.monotonic() - t0


def _run_under(entry, folder, args, report, timeout, opts=()) -> dict:
    cwd = os.path.join(folder, entry["cwd"])
    cmd = [sys.executable, "-m", "ascendify", "run", *opts, "--report", report, "-o", os.devnull, "--", "python", *args]
    code, out, err, secs = _exec(cmd, cwd, _env(entry.get("env")), timeout, entry.get("stop_after"))
    try:
        with open(report, encoding="utf-8") as fh:
            doc = json.load(fh)
    except (OSError, ValueError):
        doc = None
    return {"code": code, "out": out, "err": err, "secs": secs, "doc": doc}


def _losses(entry, text) -> list:
    return [m.group(2) for m in re.finditer(entry["loss"], text)]


def _outcome(r: dict, entry) -> str:
    doc = r["doc"]
    losses = _losses(entry, r["out"] + r["err"])
    if doc is None:
        tail = (r["err"].strip().splitlines() or ["?"])[-1]
        return f"no report (exit {r['code']}): {tail[:120]}"
    parts = []
    ff = doc.get("first_failure")
    if r["code"] in (130, -2, -9) and entry.get("stop_after"):
        parts.append(f"ran {len(losses)} logged steps (stopped by the trial)")
    elif r["code"] == 0:
        parts.append("runs")
    stopped = (0, 130, -2, -9) if entry.get("stop_after") else (0,)
    if ff and r["code"] not in stopped:
        uf = ff.get("user_frame") or {}
        parts.append(f"fails {uf.get('path')}:{uf.get('line')} {ff.get('type')}: {' '.join(str(ff.get('message')).split())[:90]}")
    elif r["code"] not in stopped:
        parts.append(f"exit {r['code']}")
    p = doc.get("parameters") or {}
    if p.get("on"):
        parts.append(f"params {p['on']}" + (" (LOUD)" if p.get("loud") else ""))
    ac, by_program = [], 0
    for a in doc.get("autocast") or []:
        if a.get("switched_off"):
            ac.append(f"{a['device_type']} AMP SWITCHED OFF")
        elif a.get("disabled") or not a.get("dtype"):
            by_program += 1  # enabled=False written by the program (an fp32 reference pass)
        else:
            ac.append(f"{a['device_type']} {str(a['dtype']).replace('torch.', '')}")
    if ac or by_program:
        parts.append("autocast " + (", ".join(ac) or "none on") + (" (+ enabled=False by the program)" if by_program else ""))
    gs = doc.get("gradscaler") or {}
    made = gs.get("constructed") or []
    if any(c.get("enabled") for c in made):
        parts.append(f"loss scaler on ({gs.get('steps', 0)} steps, {gs.get('skip', 0)} skipped)")
    elif made and not any(c.get("requested", True) for c in made):
        parts.append("loss scaler off by the program (enabled=False)")
    elif made:
        parts.append("loss scaler SWITCHED OFF (" + ", ".join(sorted({str(c.get('device_type')) for c in made})) + ")")
    if doc.get("fallbacks"):
        parts.append("fallbacks " + ", ".join(f["op"] + (f" ({f['rule']})" if f.get("rule") else "") for f in doc["fallbacks"]))
    if doc.get("dtype_findings"):
        parts.append("dtype " + ", ".join(f"{d['op']}@{(d.get('user_frame') or {}).get('path')}:{(d.get('user_frame') or {}).get('line')}"
                                          for d in doc["dtype_findings"][:3]))
    return "; ".join(parts)


def trial(entry, work: str, timeout: int) -> dict:
    src = os.path.join(CACHE, "src", entry["repo"])
    if not os.path.isdir(src):
        url, commit = REPOS[entry["repo"]]
        return {"entry": entry["title"], "error": f"missing {src}: git clone {url} {src} && git -C {src} checkout {commit}"}
    base = os.path.join(work, entry["name"])
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    dirs = {}
    for v in ("orig", "cpu"):
        dirs[v] = os.path.join(base, v)
        shutil.copytree(src, dirs[v], ignore=shutil.ignore_patterns(".git"))
    notes = []
    for target in ("npu", "agnostic"):
        dirs[target] = os.path.join(base, target)
        r = subprocess.run([sys.executable, "-m", "ascendify", "fix", src, "--target", target, "--out-dir", dirs[target],
                            "--fail-on", "never", "--no-cache", "--exclude", ".git"],
                           capture_output=True, text=True, env=_env(), cwd=base)
        summary = [ln for ln in r.stdout.splitlines() + r.stderr.splitlines() if "fixed" in ln or "error" in ln.lower()]
        notes.append(f"fix --target {target}: exit {r.returncode}; {summary[-1] if summary else r.stderr[-300:]}")
        if not os.path.isdir(dirs[target]):
            return {"entry": entry["title"], "error": f"fix --target {target} wrote no copy: {r.stderr.strip()[-300:]}"}
    if entry.get("setup"):
        for d in dirs.values():
            entry["setup"](os.path.join(d, entry["cwd"]) if entry["cwd"] != "." else d)
    res = {}
    argv = entry["argv"]
    res["orig"] = _run_under(entry, dirs["orig"], argv, os.path.join(base, "orig.json"), timeout)
    res["npu"] = _run_under(entry, dirs["npu"], argv, os.path.join(base, "npu.json"), timeout)
    res["agnostic"] = _run_under(entry, dirs["agnostic"], argv, os.path.join(base, "agnostic.json"), timeout)
    if entry["cpu"] is None:  # no comparable CPU run (e.g. fp16 AMP: the CPU's autocast is bf16)
        code, out, err, secs = 0, "", "", 0.0
    else:
        cpu_args = [a for a in argv + entry["cpu"] if a != "--accel"]
        code, out, err, secs = _exec([sys.executable, *cpu_args], os.path.join(dirs["cpu"], entry["cwd"]),
                                     _env(entry.get("env")), timeout, entry.get("stop_after"))
    res["cpu"] = {"code": code, "out": out, "err": err, "secs": secs, "doc": None}
    cmp_args = argv + entry["cmp"]
    opts = entry.get("cmp_run", []) + ["--cpu-rng"]   # one RNG stream: npu random ops draw what the CPU run draws
    res["cmp"] = (res["npu"] if entry["cpu"] is None
                  else _run_under(entry, dirs["npu"], cmp_args, os.path.join(base, "cmp.json"), timeout, opts))
    cpu_l = _losses(entry, res["cpu"]["out"] + res["cpu"]["err"])
    cmp_l = _losses(entry, res["cmp"]["out"] + res["cmp"]["err"])
    if entry["cpu"] is None:
        ag_l = _losses(entry, res["agnostic"]["out"] + res["agnostic"]["err"])
        n = min(len(cmp_l), len(ag_l))
        both = ("the npu and agnostic copies print the same losses " + ", ".join(cmp_l[:4]) if n and cmp_l[:n] == ag_l[:n]
                else f"npu copy {cmp_l[:3]} vs agnostic copy {ag_l[:3]}")
        loss = f"no CPU baseline ({entry.get('no_cpu', 'see the entry')}); {both}"
    elif code not in (0, 130, -2, -9) or not cpu_l:  # -9: killed by the trial when SIGINT did not stop it
        loss = f"no CPU baseline (exit {code}: {(err.strip().splitlines() or ['?'])[-1][:100]})"
    elif not cmp_l:
        loss = "copy printed no loss"
    else:
        n = min(len(cpu_l), len(cmp_l))
        same = cpu_l[:n] == cmp_l[:n]
        loss = (f"identical ({n} printed losses)" if same else f"DIFFER: cpu {cpu_l[:3]} vs npu copy {cmp_l[:3]}")
    return {"entry": entry["title"], "orig": _outcome(res["orig"], entry), "npu": _outcome(res["npu"], entry),
            "agnostic": _outcome(res["agnostic"], entry), "loss": loss, "notes": notes,
            "secs": round(sum(r["secs"] for r in res.values()), 1)}


def rescan(entry, work: str) -> dict:
    """The second scan of the kept copies (issue 23): ``ascendify scan COPY --target T -j 1 --no-cache`` of each
    migrated copy (for a pytorch/examples entry its own folder), findings by severity and the codes of the
    ones above info."""
    out = {"entry": entry["title"]}
    for target in ("npu", "agnostic"):
        d = os.path.join(work, entry["name"], target)
        d = os.path.join(d, entry["cwd"]) if entry["cwd"] != "." else d
        if not os.path.isdir(d):
            out[target] = "no copy (run the trial first)"
            continue
        r = subprocess.run([sys.executable, "-m", "ascendify", "scan", ".", "--target", target, "-j", "1", "--no-cache",
                            "--format", "json", "--fail-on", "never", "--exclude", "out-trial"],
                           capture_output=True, text=True, env=_env(), cwd=d)
        try:
            found = json.loads(r.stdout)["findings"]
        except (ValueError, KeyError):
            out[target] = f"scan failed (exit {r.returncode}): {r.stderr.strip()[-200:]}"
            continue
        sev: dict = {}
        codes: dict = {}
        for f in found:
            sev[f["severity"]] = sev.get(f["severity"], 0) + 1
            if f["severity"] != "info":
                key = f"{f['code']} {f['severity']}"
                codes[key] = codes.get(key, 0) + 1
        order = ("error", "silent", "warning", "info")
        out[target] = (f"{len(found)} (" + ", ".join(f"{sev[k]} {k}" for k in order if sev.get(k)) + ")"
                       + ("; " + ", ".join(f"{k} x{n}" for k, n in sorted(codes.items())) if codes else ""))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", default=CACHE)
    ap.add_argument("--only", default=",".join(e["name"] for e in ENTRIES))
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--json", default=None, help="also write the rows as JSON here")
    ap.add_argument("--rescan", action="store_true",
                    help="only the second scan of the copies a previous run kept (CACHE/work): findings per copy")
    a = ap.parse_args(argv)
    globals()["CACHE"] = a.cache
    work = os.path.join(a.cache, "work")
    if a.rescan:
        rows = [rescan(e, work) for e in ENTRIES if e["name"] in a.only.split(",")]
        print("| entry point | npu copy: findings | agnostic copy: findings |")
        print("|---|---|---|")
        for r in rows:
            print(f"| {r['entry']} | {r['npu']} | {r['agnostic']} |")
        if a.json:
            with open(a.json, "w", encoding="utf-8") as fh:
                json.dump(rows, fh, indent=1)
        return 0
    rows = []
    for e in ENTRIES:
        if e["name"] not in a.only.split(","):
            continue
        print(f"== {e['title']} ...", file=sys.stderr, flush=True)
        row = trial(e, work, a.timeout)
        rows.append(row)
        print(json.dumps(row, indent=1), file=sys.stderr, flush=True)
    print("| entry point | original under run | npu copy | agnostic copy | npu copy vs plain CPU |")
    print("|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['entry']} | {r['error']} | | | |")
        else:
            print(f"| {r['entry']} | {r['orig']} | {r['npu']} | {r['agnostic']} | {r['loss']} |")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
