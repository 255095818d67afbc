"""Input samples from a data folder: ``.npy`` (one input), ``.npz`` (named inputs),
images (``.png/.jpg/.jpeg/.bmp``, with a :class:`Preprocess` spec)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

import numpy as np

from ascendify.errors import AscendifyError

IMAGE_EXTS = (".png", ".jpg", ".jpeg", ".bmp")
DATA_EXTS = (".npy", ".npz") + IMAGE_EXTS

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def parse_mean_std(text: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """``"imagenet"``, ``"0.485,0.456,0.406;0.229,0.224,0.225"`` (mean;std, also ``/``
    as separator) or the same as one list, means first (``"0.5,0.5,0.5,0.2,0.2,0.2"``) →
    (mean, std).  Raises ``AscendifyError`` on bad values or std ≤ 0."""
    t = text.strip()
    if t.lower() == "imagenet":
        return IMAGENET_MEAN, IMAGENET_STD
    sep = ";" if ";" in t else ("/" if "/" in t else None)
    if sep is None:
        vals = [v for v in t.split(",") if v.strip()]
        if len(vals) < 2 or len(vals) % 2:
            raise AscendifyError(f"--normalize '{text}': give MEAN;STD, e.g. '0.485,0.456,0.406;0.229,0.224,0.225', "
                                 "the means then the stds as one list, or 'imagenet'")
        a, b = ",".join(vals[: len(vals) // 2]), ",".join(vals[len(vals) // 2:])
    else:
        a, b = t.split(sep, 1)
    try:
        mean = tuple(float(v) for v in a.split(","))
        std = tuple(float(v) for v in b.split(","))
    except ValueError:
        raise AscendifyError(f"--normalize '{text}': values must be numbers") from None
    if len(mean) != len(std):
        raise AscendifyError(f"--normalize '{text}': {len(mean)} means but {len(std)} stds")
    if any(s <= 0 for s in std):
        raise AscendifyError(f"--normalize '{text}': std values must be > 0")
    return mean, std


@dataclass
class Preprocess:
    """How images become a model input: resize to ``size`` (H, W), scale to [0, 1],
    normalise with ``mean``/``std`` (torchvision ``ToTensor`` + ``Normalize`` order),
    ``layout`` ``NCHW`` or ``NHWC``, batch dimension added.  ``raw=True`` keeps uint8 HWC
    pixels (for AIPP models)."""

    size: Optional[tuple[int, int]] = None
    mean: Optional[Sequence[float]] = None
    std: Optional[Sequence[float]] = None
    layout: str = "NCHW"
    raw: bool = False

    def normalize_array(self, arr: np.ndarray, where: str) -> np.ndarray:
        """Apply ``(x − mean)/std`` on the channel axis of a 4-D float array already in
        0..1 (``.npy`` samples, to match a graph exported with ``--normalize``)."""
        if self.mean is None or self.std is None:
            return arr
        if arr.ndim != 4:
            raise AscendifyError(f"{where}: --normalize needs a 4-D {self.layout} array, got shape {arr.shape}")
        shape = (1, -1, 1, 1) if self.layout.upper() == "NCHW" else (1, 1, 1, -1)
        ch = arr.shape[1] if self.layout.upper() == "NCHW" else arr.shape[3]
        if ch != len(self.mean):
            raise AscendifyError(f"{where}: {ch} channels but --normalize has {len(self.mean)} values")
        x = arr.astype(np.float32)
        return (x - np.asarray(self.mean, np.float32).reshape(shape)) / np.asarray(self.std, np.float32).reshape(shape)

    def __call__(self, path: str) -> np.ndarray:
        try:
            from PIL import Image
        except ImportError:
            raise AscendifyError(f"{path}: reading images needs Pillow (pip install pillow)") from None
        try:
            img = Image.open(path).convert("RGB")
        except Exception as exc:  # noqa: BLE001
            raise AscendifyError(f"{path}: not a readable image ({exc})") from None
        if self.size:
            img = img.resize((self.size[1], self.size[0]), Image.BILINEAR)
        arr = np.asarray(img, dtype=np.uint8)  # H, W, C
        if self.raw:
            return arr[None]
        x = arr.astype(np.float32) / np.float32(255.0)
        if self.mean is not None and self.std is not None:
            x = (x - np.asarray(self.mean, np.float32)) / np.asarray(self.std, np.float32)
        if self.layout.upper() == "NCHW":
            x = x.transpose(2, 0, 1)
        return np.ascontiguousarray(x[None])


def list_samples(data: str) -> list[str]:
    """Sample files under ``data`` (a folder, searched recursively, or one file), sorted.
    Raises ``AscendifyError`` when none is found."""
    if os.path.isfile(data):
        return [data]
    if not os.path.isdir(data):
        raise AscendifyError(f"{data}: no such data folder")
    out = []
    for root, dirs, names in os.walk(data):
        dirs.sort()
        out += [os.path.join(root, n) for n in sorted(names) if n.lower().endswith(DATA_EXTS)]
    if not out:
        raise AscendifyError(f"{data}: no {', '.join(DATA_EXTS)} files found")
    return out


def sample_name(path: str, data: str) -> str:
    """Sample id: the path relative to the data folder, without extension, ``/``-separated."""
    base = data if os.path.isdir(data) else os.path.dirname(data)
    return os.path.splitext(os.path.relpath(path, base))[0].replace(os.sep, "/")


def iter_samples(data: str, input_names: Sequence[str], pre: Optional[Preprocess] = None
                 ) -> Iterator[tuple[str, str, dict[str, np.ndarray]]]:
    """Yield ``(sample_name, file, {input_name: array})`` for each sample file.

    ``.npy`` feeds the first input (error if the model has several; normalised when ``pre``
    has mean/std, assuming 0..1 values); ``.npz`` members are
    matched by input name (or ``arr_0``, ``arr_1``… in order); images need ``pre`` (default:
    0..1 NCHW float32 without normalisation)."""
    for f in list_samples(data):
        name = sample_name(f, data)
        low = f.lower()
        if low.endswith(".npy"):
            if len(input_names) != 1:
                raise AscendifyError(f"{f}: the model has {len(input_names)} inputs ({', '.join(input_names)}); "
                                     "use .npz files with one array per input name")
            try:
                arr = np.load(f, allow_pickle=False)
            except Exception as exc:  # noqa: BLE001
                raise AscendifyError(f"{f}: not a readable .npy file ({exc})") from None
            if pre is not None and pre.mean is not None:
                arr = pre.normalize_array(arr, f)
            yield name, f, {input_names[0]: arr}
        elif low.endswith(".npz"):
            try:
                with np.load(f, allow_pickle=False) as z:
                    d = {k: z[k] for k in z.files}
            except Exception as exc:  # noqa: BLE001
                raise AscendifyError(f"{f}: not a readable .npz file ({exc})") from None
            feeds = {}
            for i, n in enumerate(input_names):
                if n in d:
                    feeds[n] = d[n]
                elif f"arr_{i}" in d:
                    feeds[n] = d[f"arr_{i}"]
                else:
                    raise AscendifyError(f"{f}: no array for input '{n}' (has {', '.join(d)})")
            yield name, f, feeds
        else:
            if len(input_names) != 1:
                raise AscendifyError(f"{f}: images can feed only a one-input model")
            yield name, f, {input_names[0]: (pre or Preprocess())(f)}
