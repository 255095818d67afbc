"""tiny-trainer: image classification on synthetic data (ResNet-style CNN or a small ViT)."""

__version__ = "0.3.0"
