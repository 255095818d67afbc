"""Record model outputs over a data folder into one ``.npz`` (``ascendify baseline``).

Layout: one member per (sample, output), named ``<sample>/<output>`` (sample = input
file path relative to the data folder, without extension), plus ``__ascendify__``:
a uint8 array holding UTF-8 JSON ``{"model", "kind", "inputs", "outputs", "samples":
[{"sample", "file", "input_shapes", "outputs"}]}`` — readable without unpickling.
The archive is written member by member (no whole-set buffering) to a temporary file
in the target folder and renamed into place.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from typing import Any, Optional, Sequence

import numpy as np

from ascendify.compare.io import META_KEY
from ascendify.compare.runner import make_runner
from ascendify.compare.samples import Preprocess, iter_samples
from ascendify.errors import AscendifyError


class NpzWriter:
    """Write arrays one at a time into an uncompressed .npz; ``close()`` renames it into place."""

    def __init__(self, path: str) -> None:
        self.path = path
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d):
            raise AscendifyError(f"{path}: folder {d} does not exist")
        fd, self.tmp = tempfile.mkstemp(dir=d, prefix=".ascendify-", suffix=".npz.tmp")
        os.close(fd)
        self.zf = zipfile.ZipFile(self.tmp, "w", zipfile.ZIP_STORED, allowZip64=True)
        self.names: set[str] = set()

    def add(self, name: str, arr: np.ndarray) -> None:
        if name in self.names:
            raise AscendifyError(f"{self.path}: duplicate entry {name}")
        self.names.add(name)
        with self.zf.open(name + ".npy", "w", force_zip64=True) as fh:
            np.lib.format.write_array(fh, np.ascontiguousarray(arr), allow_pickle=False)

    def close(self) -> None:
        from ascendify.fsutil import replace_file

        self.zf.close()
        replace_file(self.tmp, self.path)  # the user's umask, not mkstemp's 0600

    def abort(self) -> None:
        try:
            self.zf.close()
        finally:
            if os.path.exists(self.tmp):
                os.unlink(self.tmp)


def record_baseline(model: str, data: str, out: str, input_names: Optional[Sequence[str]] = None,
                    output_names: Optional[Sequence[str]] = None, pre: Optional[Preprocess] = None,
                    limit: Optional[int] = None) -> dict[str, Any]:
    """Run ``model`` (``*.onnx`` or ``pkg.module:factory``) over every sample in ``data``
    and write ``out`` (.npz).  Returns the metadata record.  NaN/Inf in outputs are
    counted in the record (``nonfinite``) and do not stop the run."""
    if not out.lower().endswith(".npz"):
        raise AscendifyError(f"{out}: the baseline file must end in .npz")
    runner = make_runner(model, input_names, output_names)
    w = NpzWriter(out)
    meta: dict[str, Any] = {"format": "ascendify-baseline/1", "model": model, "kind": runner.kind,
                            "inputs": list(runner.input_names), "samples": []}
    try:
        for i, (name, f, feeds) in enumerate(iter_samples(data, runner.input_names, pre)):
            if limit is not None and i >= limit:
                break
            outs = runner.run(feeds)
            rec = {"sample": name, "file": os.path.relpath(f), "input_shapes": {k: list(v.shape) for k, v in feeds.items()},
                   "outputs": {}}
            for oname, arr in outs.items():
                arr = np.asarray(arr)
                nonfinite = int(arr.size - np.isfinite(arr).sum()) if arr.dtype.kind == "f" else 0
                rec["outputs"][oname] = {"shape": list(arr.shape), "dtype": str(arr.dtype), "nonfinite": nonfinite}
                w.add(f"{name}/{oname}", arr)
            meta["samples"].append(rec)
        meta["outputs"] = list(runner.output_names)
        if not meta["samples"]:
            raise AscendifyError(f"{data}: no samples were run")
        w.add(META_KEY, np.frombuffer(json.dumps(meta).encode("utf-8"), dtype=np.uint8))
        w.close()
    except BaseException:
        w.abort()
        raise
    return meta
