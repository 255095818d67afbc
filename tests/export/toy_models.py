"""Small models for the export tests (random weights, no download)."""

from __future__ import annotations

import torch


class SmallCNN(torch.nn.Module):
    """Conv-BN-ReLU-pool ×2 + linear head; works at any H, W >= 4 (global pooling)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten())
        self.head = torch.nn.Linear(16, 10)
        with torch.no_grad():  # non-trivial BN statistics
            self.features[1].running_mean.uniform_(-0.5, 0.5)
            self.features[1].running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return self.head(self.features(x))


def cnn() -> torch.nn.Module:
    return SmallCNN().eval()


class SegNet(torch.nn.Module):
    """Fully convolutional: output keeps the input's H, W (for dynamic image size)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.body = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(4, 2, 1))

    def forward(self, x):
        return self.body(x)


def segnet() -> torch.nn.Module:
    return SegNet().eval()


class WithFFT(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        return torch.fft.fft(y).real  # FFT_LINE: not exportable to ONNX opset 11


def with_fft() -> torch.nn.Module:
    return WithFFT().eval()


class UnusedInput(torch.nn.Module):
    def forward(self, x, unused):
        return x * 2


def unused_input() -> torch.nn.Module:
    return UnusedInput().eval()
