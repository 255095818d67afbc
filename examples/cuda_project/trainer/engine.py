"""The training loop."""

import json
import os
import time

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

from .checkpoint import load_checkpoint, save_checkpoint
from .data import build_loaders
from .distributed import cleanup, init_distributed, is_main_process
from .export import export_onnx
from .metrics import evaluate
from .models import build_model, count_parameters
from .utils import (
    Throughput,
    configure_backends,
    describe_environment,
    peak_memory_mb,
    reset_memory_stats,
    seed_everything,
    select_gpus,
)

try:
    from apex.optimizers import FusedSGD
except ImportError:  # apex is optional
    FusedSGD = None


def build_optimizer(model, args):
    params = [p for p in model.parameters() if p.requires_grad]
    if args.fused_sgd and FusedSGD is not None:
        return FusedSGD(params, lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)
    return torch.optim.SGD(params, lr=args.lr, momentum=args.momentum, weight_decay=args.weight_decay)


def main(args):
    if args.gpus:
        select_gpus(args.gpus)
    distributed, rank, world_size = init_distributed(args)
    if distributed:
        device = torch.device("cuda", args.local_rank)
    else:
        device = torch.device(args.device)

    seed_everything(args.seed + rank)
    configure_backends()
    if is_main_process():
        print(describe_environment())
        os.makedirs(args.output_dir, exist_ok=True)

    train_loader, val_loader, train_sampler = build_loaders(args, distributed)

    model = build_model(args.model, args.num_classes, args.image_size).to(device)
    if distributed:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        model = DDP(model, device_ids=[args.local_rank], output_device=args.local_rank)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")
    if is_main_process():
        print(f"model {args.model}: {count_parameters(model):,} parameters, device {device}, world size {world_size}")

    optimizer = build_optimizer(model, args)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
    criterion = nn.CrossEntropyLoss()

    # Mixed precision only makes sense on the GPU.
    use_amp = args.amp and device.type == "cuda"
    amp_dtype = torch.bfloat16 if use_amp and torch.cuda.is_bf16_supported() else torch.float16
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp and amp_dtype == torch.float16)

    step = 0
    if args.resume:
        step = load_checkpoint(args.resume, model, optimizer, scaler)
        for _ in range(step):
            scheduler.step()
        print(f"resumed from {args.resume} at step {step}")

    metrics_path = os.path.join(args.output_dir, "metrics.jsonl")
    log = open(metrics_path, "a") if is_main_process() else None
    if device.type == "cuda":
        reset_memory_stats(device)
    timer = Throughput(device)
    timer.start()
    seen = 0
    epoch = 0
    model.train()
    while step < args.steps:
        if train_sampler is not None:
            train_sampler.set_epoch(epoch)
        for images, labels in train_loader:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)

            with torch.cuda.amp.autocast(enabled=use_amp, dtype=amp_dtype):
                logits = model(images)
                loss = criterion(logits, labels)

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            if args.clip_grad > 0:
                nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()

            step += 1
            seen += images.shape[0] * world_size
            loss_value = loss.item()
            if log is not None:
                log.write(json.dumps({"step": step, "loss": loss_value, "lr": scheduler.get_last_lr()[0]}) + "\n")
            if step % args.log_every == 0 or step == args.steps:
                ips = timer.stop(seen)
                mem = peak_memory_mb(device) if device.type == "cuda" else 0.0
                if is_main_process():
                    print(f"step {step:>5}/{args.steps}  loss {loss_value:.4f}  lr {scheduler.get_last_lr()[0]:.4g}  "
                          f"{ips:,.0f} img/s  peak mem {mem:.0f} MB")
                torch.cuda.empty_cache()
                timer.start()
                seen = 0
            if step >= args.steps:
                break
        epoch += 1

    if log is not None:
        log.close()
    t0 = time.perf_counter()
    result = evaluate(model, val_loader, device, args.num_classes)
    if is_main_process():
        print(f"validation: top-1 {result['top1']:.3f}  class acc {result['mean_class_acc']:.3f} "
              f"+- {result['class_acc_std']:.3f}  ({time.perf_counter() - t0:.1f}s)")
        save_checkpoint(os.path.join(args.output_dir, "last.pt"), model, optimizer, scaler, step, args)
        if args.export_onnx:
            export_onnx(model, args.export_onnx, args.image_size, device)
            print(f"exported ONNX to {args.export_onnx}")
    cleanup()
    return 0
