"""Per-release aten op tables for the KB (build-time only).

Two inputs per torch_npu release:

* the wheel's ``torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml``
  (registered PrivateUse1 kernels + ``impl_ns``; custom ``npu_*`` ops), read
  from a copied yaml or straight from a ``.whl`` with ``zipfile``;
* the dispatch classification per aten overload: either the research CSV
  ``derived/aten_op_classification_torch<T>_torch_npu<N>.csv`` or computed here
  by :func:`classify` from torch's ``native_functions.yaml`` (from a torch
  wheel, or the installed torch's ``torchgen/packaged``), following
  reference/op-support-and-versions.md §2.1.
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import zipfile
from typing import Any, Optional

NPU_YAML_IN_WHEEL = "torch_npu/csrc/aten/npu_native_functions_by_codegen.yaml"
TORCH_YAML_IN_WHEEL = "torchgen/packaged/ATen/native/native_functions.yaml"

CLASSES = ["npu_kernel", "npu_via_structured_out", "npu_foreach_slow", "composite_implicit",
           "composite_explicit", "not_dense", "cpu_fallback", "npu_only_not_in_torch_yaml"]


def _yaml_load(text: str) -> Any:
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(text, Loader=loader)


def op_name(entry: Any) -> str:
    """``"nanmean.out(Tensor self, …) -> …"`` or a bare name → ``"nanmean.out"``."""
    func = entry.get("func", "") if isinstance(entry, dict) else str(entry)
    return func.split("(")[0].strip()


def norm_impl(entry: Any) -> str:
    """``impl_ns`` as a sorted ``+``-joined string; core ops (no impl_ns) → ``torch_npu_core``."""
    if not isinstance(entry, dict) or not entry.get("impl_ns"):
        return "torch_npu_core"
    parts = sorted(p.strip() for p in str(entry["impl_ns"]).split(",") if p.strip())
    return "+".join(parts)


def parse_npu_yaml(text: str) -> "dict[str, Any]":
    """Registered aten overloads (name → impl) and custom ops (name → impl, exposed)."""
    doc = _yaml_load(text) or {}
    aten: dict = {}
    sparse: dict = {}
    for key in ("supported", "symint", "quant", "autograd"):
        for e in doc.get(key) or []:
            name = op_name(e)
            if isinstance(e, dict) and e.get("sparse"):
                sparse[name] = str(e["sparse"])
                if not e.get("impl_ns"):
                    continue  # SparsePrivateUse1 kernel only
            impl = norm_impl(e)
            if name in aten:  # listed twice (e.g. supported + symint): union of impls
                parts = set(aten[name].split("+")) | set(impl.split("+"))
                if len(parts) > 1:
                    parts.discard("torch_npu_core")
                impl = "+".join(sorted(parts))
            aten[name] = impl
    custom: dict = {}
    for e in doc.get("custom") or []:
        name = op_name(e)
        custom[name] = [norm_impl(e), bool(isinstance(e, dict) and e.get("exposed"))]
    return {"aten": aten, "sparse": sparse, "custom": custom}


def read_wheel(path: str) -> "dict[str, Any]":
    """Read a torch-npu wheel: yaml text, version, git_version, torch pin, sha256."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        if NPU_YAML_IN_WHEEL not in names:
            raise ValueError(f"{path}: no {NPU_YAML_IN_WHEEL} inside; is this a torch-npu wheel?")
        text = zf.read(NPU_YAML_IN_WHEEL).decode("utf-8")
        version = git = torch_pin = ""
        if "torch_npu/version.py" in names:
            vt = zf.read("torch_npu/version.py").decode("utf-8", "replace")
            m = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", vt)
            version = m.group(1) if m else ""
            m = re.search(r"git_version\s*=\s*['\"]([^'\"]+)", vt)
            git = m.group(1) if m else ""
        meta = [n for n in names if n.endswith(".dist-info/METADATA")]
        if meta:
            mt = zf.read(meta[0]).decode("utf-8", "replace")
            m = re.search(r"^Version:\s*(\S+)", mt, re.M)
            version = version or (m.group(1) if m else "")
            m = re.search(r"^Requires-Dist:\s*torch\s*==\s*([0-9][0-9.]*)", mt, re.M)
            torch_pin = m.group(1).rstrip(".") if m else ""
    return {"yaml": text, "version": version, "git_version": git, "torch": torch_pin,
            "sha256": h.hexdigest(), "file": os.path.basename(path)}


def read_torch_yaml(path: str) -> "tuple[str, str, str]":
    """native_functions.yaml text + torch version + sha256 from a torch wheel,
    a yaml file, or ``"installed"`` (the current torch's torchgen/packaged)."""
    if path == "installed":
        import torch
        import torchgen
        p = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native", "native_functions.yaml")
        with open(p, "rb") as fh:
            data = fh.read()
        return data.decode("utf-8"), torch.__version__.split("+")[0], hashlib.sha256(data).hexdigest()
    if path.endswith(".whl"):
        with zipfile.ZipFile(path) as zf:
            data = zf.read(TORCH_YAML_IN_WHEEL)
            ver = ""
            for n in zf.namelist():
                if n.endswith(".dist-info/METADATA"):
                    m = re.search(r"^Version:\s*(\S+)", zf.read(n).decode("utf-8", "replace"), re.M)
                    ver = m.group(1).split("+")[0] if m else ""
        return data.decode("utf-8"), ver, hashlib.sha256(data).hexdigest()
    with open(path, "rb") as fh:
        data = fh.read()
    return data.decode("utf-8"), "", hashlib.sha256(data).hexdigest()


_DENSE_BACKENDS = {"CPU", "CUDA"}


def torch_entries(torch_yaml_text: str) -> "list[list]":
    """Compact view of native_functions.yaml: ``[name, structured_delegate, keys]``
    per overload; ``keys`` is ``None`` when the entry has no ``dispatch:`` at all
    (CompositeImplicitAutograd) and ``[]`` for ``dispatch: {}`` (no kernel)."""
    out = []
    for e in _yaml_load(torch_yaml_text) or []:
        if not isinstance(e, dict) or "func" not in e:
            continue
        keys = None
        if "dispatch" in e:
            keys = []
            for k in (e.get("dispatch") or {}):
                keys.extend(x.strip() for x in str(k).split(","))
        out.append([op_name(e), e.get("structured_delegate") or "", keys])
    return out


def classify(entries: "list[list]", npu_aten: "dict[str, str]", npu_sparse: "dict[str, str] | None" = None) -> "list[list[str]]":
    """Classify every aten overload of one torch version against one NPU registry.

    ``entries``: :func:`torch_entries` output.  Mirrors the dispatcher's
    choice for the PrivateUse1 key (reference/op-support-and-versions.md §2.1;
    precedence checked against ``torch._C._dispatch_dump_table`` on torch 2.13):
    NPU-registered → ``npu_kernel``; ``structured_delegate: X.out`` (PyTorch
    generates a CompositeExplicitAutogradNonFunctional kernel, which wins over
    CompositeExplicitAutograd and over sparse/nested-only entries) → 
    ``npu_via_structured_out`` if X.out is NPU-registered, else
    ``cpu_fallback``; ``_foreach_*`` with a CPU kernel → ``npu_foreach_slow``;
    no ``dispatch`` or CompositeImplicitAutograd → ``composite_implicit``;
    CompositeExplicitAutograd[NonFunctional] → ``composite_explicit``; a CPU
    or CUDA kernel, or ``dispatch: {}`` → ``cpu_fallback`` (the boxed fallback
    is entered; for CUDA-only ops it then fails for want of a CPU kernel);
    otherwise (sparse/quantized/nested/MPS/XPU/Meta-only) → ``not_dense``.  NPU names absent from torch's yaml →
    ``npu_only_not_in_torch_yaml``.  NPU entries with only ``sparse:`` are
    SparsePrivateUse1 kernels and do not count as dense NPU kernels.

    Returns rows ``[overload, class, npu_impl, torch_dispatch_keys]``.
    """
    npu_sparse = npu_sparse or {}
    by_name = {e[0]: e for e in entries}
    rows = []
    for name, sd, keys in entries:
        if sd:
            disp = f"structured_delegate:{sd}"
        elif keys is None:
            disp = "none(CompositeImplicitAutograd)"
        else:
            disp = ",".join(sorted(keys)) if keys else "none(dispatch: {})"
        kset = set(keys or ())
        if name in npu_aten:
            rows.append([name, "npu_kernel", npu_aten[name], disp])
        elif sd:
            if sd in npu_aten:
                rows.append([name, "npu_via_structured_out", "via_out:" + npu_aten[sd], disp])
            else:
                out_keys = set(by_name.get(sd, ["", "", []])[2] or ())
                rows.append([name, "cpu_fallback" if out_keys & _DENSE_BACKENDS or not out_keys else "not_dense", "", disp])
        elif name.startswith("_foreach_") and "CPU" in kset:
            rows.append([name, "npu_foreach_slow", "", disp])
        elif keys is None or "CompositeImplicitAutograd" in kset:
            rows.append([name, "composite_implicit", "", disp])
        elif kset & {"CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"}:
            rows.append([name, "composite_explicit", "", disp])
        elif kset & _DENSE_BACKENDS or keys == []:
            rows.append([name, "cpu_fallback", "", disp])
        else:
            rows.append([name, "not_dense", "sparse_only" if name in npu_sparse else "", disp])
    seen = set(by_name)
    for name, impl in sorted(npu_aten.items()):
        if name not in seen:
            rows.append([name, "npu_only_not_in_torch_yaml", impl, ""])
    return rows


def read_classification_csv(path: str) -> "list[list[str]]":
    with open(path, encoding="utf-8", newline="") as fh:
        r = csv.reader(fh)
        header = next(r)
        if header[:4] != ["aten_overload", "class", "npu_impl", "torch_dispatch_keys"]:
            raise ValueError(f"{path}: unexpected header {header}")
        return [row[:4] for row in r if row]


def release_table(*, torch_npu: str, torch: str, rows: "list[list[str]]", npu: "dict[str, Any]",
                  provenance: "list[dict]", rows_from: str, extra: "Optional[dict]" = None) -> "dict[str, Any]":
    """The compact per-release JSON document the package ships."""
    counts: dict = {}
    for _, cls, _, _ in rows:
        counts[cls] = counts.get(cls, 0) + 1
    impl_split: dict = {}
    for impl in npu["aten"].values():
        impl_split[impl] = impl_split.get(impl, 0) + 1
    doc = {
        "schema": 1,
        "torch_npu": torch_npu,
        "torch": torch,
        "classification_from": rows_from,
        "provenance": provenance,
        "class_counts": dict(sorted(counts.items())),
        "npu_registered_aten_overloads": len(npu["aten"]),
        "custom_npu_ops": len(npu["custom"]),
        "impl_split": dict(sorted(impl_split.items())),
        "columns": ["class", "npu_impl", "torch_dispatch_keys"],
        "ops": {r[0]: [CLASSES.index(r[1]) if r[1] in CLASSES else r[1], r[2], r[3]] for r in rows},
        "classes": CLASSES,
        "custom": npu["custom"],
    }
    if extra:
        doc.update(extra)
    return doc
