"""Validation metrics from a confusion matrix."""

import torch

from .distributed import all_reduce_sum


@torch.no_grad()
def evaluate(model, loader, device, num_classes):
    """Top-1 accuracy, and the mean and spread of the per-class accuracies, over ``loader``."""
    model.eval()
    confusion = torch.zeros(num_classes, num_classes, dtype=torch.float64, device=device)
    for images, labels in loader:
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        preds = model(images).argmax(dim=1)
        idx = labels * num_classes + preds
        confusion += torch.bincount(idx, minlength=num_classes**2).reshape(num_classes, num_classes)
    all_reduce_sum(confusion)
    model.train()
    top1 = confusion.diag().sum() / confusion.sum()
    per_class = confusion.diag() / confusion.sum(dim=1)
    per_class = per_class[~per_class.isnan()]  # classes absent from the split
    return {
        "top1": top1.item(),
        "mean_class_acc": per_class.mean().item(),
        "class_acc_std": torch.std(per_class).item(),
    }
