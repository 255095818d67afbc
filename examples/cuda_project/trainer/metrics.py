"""Validation metrics from a confusion matrix."""

import torch

from .distributed import all_reduce_sum


@torch.no_grad()
def evaluate(model, loader, device, num_classes):
    """Top-1 accuracy and mean per-class accuracy over ``loader``."""
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
    per_class = confusion.diag() / confusion.sum(dim=1)  # NaN for classes absent from the split
    top1 = confusion.diag().sum() / confusion.sum()
    return {"top1": top1.item(), "mean_class_acc": torch.nanmean(per_class).item()}
