"""torchrun training script that joins a process group but never synchronises gradients.

Launched with `torchrun --nproc_per_node=8 train_cls.py`: every rank reads its own shard
(DistributedSampler), computes its own gradients and steps with them; nothing all-reduces.
The loss is all-reduced for logging only, which does not make the weights agree.
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


class Classifier(nn.Module):
    def __init__(self, width=256, classes=10):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, width), nn.ReLU(), nn.Linear(width, classes))

    def forward(self, x):
        return self.body(x)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32))

    def forward(self, z):
        return self.net(z)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, x):
        return self.net(x)


class GANTrainer:
    """Optimizers handed in by the caller below, models built there too."""

    def __init__(self, gen, critic, opt_g, opt_d):
        self.gen = gen
        self.critic = critic
        self.opt_g = opt_g
        self.opt_d = opt_d

    def train_step(self, real):
        z = torch.randn(real.size(0), 16, device=real.device)
        loss_d = F.softplus(self.critic(self.gen(z).detach())).mean() + F.softplus(-self.critic(real)).mean()
        self.opt_d.zero_grad()
        loss_d.backward()
        self.opt_d.step()  # expect: DST010
        loss_g = F.softplus(-self.critic(self.gen(z))).mean()
        self.opt_g.zero_grad()
        loss_g.backward()
        self.opt_g.step()  # expect: DST010
        return loss_d.item(), loss_g.item()


def train_amp(model, optimizer, loader, scaler, local_rank):
    model.train()
    for x, y in loader:
        x, y = x.cuda(local_rank, non_blocking=True), y.cuda(local_rank, non_blocking=True)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)  # expect: DST010
        scaler.update()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--amp", action="store_true")
    args = parser.parse_args()

    dist.init_process_group(backend="nccl")
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)

    data = TensorDataset(torch.randn(4096, 32), torch.randint(0, 10, (4096,)))
    sampler = DistributedSampler(data, shuffle=True)
    loader = DataLoader(data, batch_size=64, sampler=sampler, num_workers=2, pin_memory=True)

    model = Classifier().cuda(local_rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    if args.amp:
        scaler = torch.cuda.amp.GradScaler()
        for epoch in range(args.epochs):
            sampler.set_epoch(epoch)
            train_amp(model, optimizer, loader, scaler, local_rank)
    else:
        for epoch in range(args.epochs):
            sampler.set_epoch(epoch)
            for step, (x, y) in enumerate(loader):
                x, y = x.cuda(local_rank), y.cuda(local_rank)
                loss = F.cross_entropy(model(x), y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()  # expect: DST010
                reported = loss.detach().clone()
                dist.all_reduce(reported, op=dist.ReduceOp.AVG)
                if dist.get_rank() == 0 and step % 50 == 0:
                    print(f"epoch {epoch} step {step} loss {reported.item():.4f}")
            scheduler.step()

    gen, critic = Generator().cuda(local_rank), Critic().cuda(local_rank)
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = torch.optim.Adam(critic.parameters(), lr=2e-4, betas=(0.5, 0.999))
    trainer = GANTrainer(gen, critic, opt_g, opt_d)
    for (real, _) in loader:
        trainer.train_step(real.cuda(local_rank))

    if dist.get_rank() == 0:
        torch.save(model.state_dict(), "classifier.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
