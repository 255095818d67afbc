"""Synthetic image classification data.

Every class has a fixed random "prototype" image (drawn from ``seed``); a
sample is its class prototype plus Gaussian noise.  Item ``i`` of a split is
generated from ``seed``, the split and ``i`` alone, so the data are identical
across runs, workers and ranks.
"""

import torch
from torch.utils.data import DataLoader, Dataset, DistributedSampler


class SyntheticImages(Dataset):
    SPLITS = {"train": 1, "val": 2, "test": 3}

    def __init__(self, size, image_size=32, num_classes=10, seed=0, split="train", noise=1.0):
        self.size = size
        self.image_size = image_size
        self.num_classes = num_classes
        self.noise = noise
        self.sample_seed = seed * 10 + self.SPLITS[split]
        self.prototypes = torch.randn(num_classes, 3, image_size, image_size, generator=torch.Generator().manual_seed(seed))
        g = torch.Generator().manual_seed(self.sample_seed)
        self.labels = torch.randint(0, num_classes, (size,), generator=g)

    def __len__(self):
        return self.size

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(self.sample_seed * 1_000_003 + index)
        label = int(self.labels[index])
        noise = torch.randn(3, self.image_size, self.image_size, generator=g)
        image = self.prototypes[label] + self.noise * noise
        return image, label


def build_loaders(args, distributed=False):
    """Training and validation loaders; the training one reshuffles each epoch from ``args.seed``."""
    train_set = SyntheticImages(args.train_size, args.image_size, args.num_classes, seed=args.seed, split="train")
    val_set = SyntheticImages(args.val_size, args.image_size, args.num_classes, seed=args.seed, split="val")

    if distributed:
        train_sampler = DistributedSampler(train_set, shuffle=True, seed=args.seed, drop_last=True)
        val_sampler = DistributedSampler(val_set, shuffle=False)
        generator = None
    else:
        train_sampler = val_sampler = None
        generator = torch.Generator().manual_seed(args.seed)

    train_loader = DataLoader(
        train_set,
        batch_size=args.batch_size,
        shuffle=train_sampler is None,
        sampler=train_sampler,
        generator=generator,
        num_workers=args.workers,
        pin_memory=True,
        drop_last=True,
        persistent_workers=args.workers > 0,
    )
    val_loader = DataLoader(
        val_set,
        batch_size=args.batch_size * 2,
        sampler=val_sampler,
        num_workers=args.workers,
        pin_memory=True,
    )
    return train_loader, val_loader, train_sampler
