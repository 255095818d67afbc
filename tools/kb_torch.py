"""Vendored compact dispatch info from torch's ``native_functions.yaml``.

``python tools/kb_torch.py torch-2.7.1-….whl [more wheels]`` writes
``tools/kb_inputs/torch/<version>.json.gz``: per aten overload
``[name, structured_delegate, dispatch keys | null]`` plus provenance (wheel
file, wheel sha256, member path, yaml sha256, licence BSD-3-Clause).  This is
the only torch-side input of the classification, so the KB rebuilds from
``../shared/reference/data`` + these small files without downloading torch.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kb_ops  # noqa: E402

INPUT_DIR = os.path.join(HERE, "kb_inputs", "torch")


def extract(wheel_or_yaml: str) -> dict:
    """Compact document for one torch wheel (or ``"installed"``)."""
    text, ver, ysha = kb_ops.read_torch_yaml(wheel_or_yaml)
    prov = {"package": "torch", "version": ver, "member": kb_ops.TORCH_YAML_IN_WHEEL,
            "yaml_sha256": ysha, "licence": "BSD-3-Clause", "repository": "pytorch/pytorch"}
    if wheel_or_yaml.endswith(".whl"):
        h = hashlib.sha256()
        with open(wheel_or_yaml, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        prov.update(file=os.path.basename(wheel_or_yaml), sha256=h.hexdigest(), index="PyPI")
    else:
        prov.update(file=wheel_or_yaml)
    return {"schema": 1, "torch": ver, "provenance": prov, "entries": kb_ops.torch_entries(text)}


def save(doc: dict, out_dir: str = INPUT_DIR) -> str:
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{doc['torch']}.json.gz")
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as fh:
        fh.write(json.dumps(doc, separators=(",", ":")).encode("utf-8"))
    with open(path, "wb") as fh:
        fh.write(buf.getvalue())
    return path


def load(torch_version: str, in_dir: str = INPUT_DIR) -> "dict | None":
    path = os.path.join(in_dir, f"{torch_version}.json.gz")
    if not os.path.exists(path):
        return None
    with gzip.open(path, "rb") as fh:
        return json.loads(fh.read().decode("utf-8"))


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(save(extract(arg)))
