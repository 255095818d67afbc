"""Chip and software-stack context of a log, and what it changes in the fixes.

Detected from the log (first occurrence wins, with the line it came from) or
given on the command line (``--chip``, ``--torch-npu``, which win):

* chip: ``socVersion=Ascend910B3`` / ``soc_version: Ascend910A`` / ``Ascend910B3``
  anywhere / the Name column of an ``npu-smi info`` row (``| 0     910B3 | OK |``);
* torch_npu: ``torch_npu 2.1.0.post3``, ``torch-npu==2.1.0``, ``Torch-npu version: 2.1.0``,
  a ``pip list`` row ``torch-npu   2.1.0.post3``;
* torch: ``torch 2.1.0``, ``torch==2.1.0``, ``PyTorch version: 2.1.0``, ``pip list`` rows;
* CANN: ``CANN 8.0.RC1``, ``CANN version: 8.0.RC2``, ``ascend-toolkit/8.0.RC1``,
  ``Ascend-cann-toolkit_8.0.RC1_linux``.

Facts come from the knowledge base: bf16 support per chip from
:mod:`ascendify.kb.chips` (``kb/data/chips.json``), torch_npu ↔ CANN ↔ torch
pairs from :mod:`ascendify.kb.versions` (Ascend/pytorch compatibility table).
"""

from __future__ import annotations

import re
from typing import Optional

from ascendify.kb import chips as chips_kb
from ascendify.kb import versions as versions_kb

_CHIP = [
    re.compile(r"soc_?[vV]ersion\W{0,4}(Ascend[0-9A-Za-z_]{3,20})"),
    re.compile(r"(?<![\w/.-])(Ascend(?:910|310|950)[0-9A-Za-z_]{0,12})\b"),
    re.compile(r"^\|\s*\d{1,3}\s+((?:910|310|950)[0-9A-Za-z_]{0,12})\s+\|"),
]
_VER = r"v?(\d+\.\d+(?:\.\d+)?(?:(?:\.|)(?:post|rc|a|b|dev)\d+)*(?:\+[\w.]+)?)"
_SEP = r"(?:\s{1,8}version)?(?:\s{0,40}[:=]{1,2}\s{0,40}|\s{1,40})['\"]?"
"""Between a package name and its version: spaces (``pip list``), ``:`` / ``==`` (bounded, no backtracking blow-up)."""
_TORCH_NPU = re.compile(r"(?<![\w.-])torch[_-]npu" + _SEP + _VER + r"\b", re.IGNORECASE)
_TORCH = re.compile(r"(?<![\w.-])(?:torch|PyTorch)(?![\w-])" + _SEP + _VER + r"\b")
_CANN = [
    re.compile(r"\bCANN(?:\s{1,8}version)?\s{0,40}[:=]?\s{0,40}['\"]?v?(\d+\.\d+\.(?:RC\d+|T\d+|\d+)(?:\.(?:alpha|beta)\d+)?)", re.IGNORECASE),
    re.compile(r"ascend-toolkit/(\d+\.\d+\.(?:RC\d+|\d+)(?:\.(?:alpha|beta)\d+)?)"),
    re.compile(r"Ascend-cann-toolkit_(\d+\.\d+\.(?:RC\d+|\d+)(?:\.(?:alpha|beta)\d+)?)", re.IGNORECASE),
]
_N = r"v?(\d+\.\d+(?:\.\d+)?(?:\.?(?:post|rc|dev|a|b)\d+)*(?:\+[\w.]+)?)"
_PKG_VER = r"(?:\s{0,4}(?:==|version\s{0,4}[:=]?|:)\s{0,4}|\s{1,30})" + _N
FRAMEWORKS = [
    # (framework, version key, what marks it: regexes whose group 1 (when present) is the version)
    ("vllm", "vllm-ascend", [re.compile(r"(?<![\w-])vllm[_-]ascend" + _PKG_VER, re.IGNORECASE),
                             re.compile(r"(?<![\w-])vllm[_-]ascend\b", re.IGNORECASE),
                             re.compile(r"Platform plugin ascend is activated")]),
    ("vllm", "vllm", [re.compile(r"vLLM API server version " + _N), re.compile(r"Initializing a V\d LLM engine \(" + _N),
                      re.compile(r"(?<![\w-])vllm(?:==|\s{1,4}version\s{0,4}:?\s{0,4})" + _N, re.IGNORECASE),
                      re.compile(r"(?<![\w-])vllm serve\b"), re.compile(r"\bvllm[./](?:entrypoints|engine|worker|v1|executor|model_executor)\b")]),
    ("sglang", "sglang", [re.compile(r"(?<![\w-])sglang" + _PKG_VER, re.IGNORECASE), re.compile(r"\bsglang[./](?:launch_server|srt)\b")]),
    ("lmdeploy", "lmdeploy", [re.compile(r"(?<![\w-])lmdeploy" + _PKG_VER, re.IGNORECASE), re.compile(r"\blmdeploy\b")]),
    ("mindie", "mindie", [re.compile(r"\bmindie" + _PKG_VER, re.IGNORECASE), re.compile(r"\b(?:MindIE|mindie)(?:[_-]?(?:service|llm|torch|rt))?\b")]),
    ("llamafactory", "llamafactory", [re.compile(r"\bllamafactory" + _PKG_VER, re.IGNORECASE),
                                      re.compile(r"\b(?:llamafactory(?:-cli)?|LLaMA-Factory|LlamaFactory)\b")]),
    ("ms-swift", "ms-swift", [re.compile(r"\bms[_-]swift" + _PKG_VER, re.IGNORECASE),
                              re.compile(r"\b(?:ms[_-]swift|swift/(?:cli|llm|megatron)|swift (?:sft|pt|rlhf|infer|deploy))\b")]),
    ("mindspeed", "mindspeed", [re.compile(r"\bmindspeed(?:[_-]llm)?" + _PKG_VER, re.IGNORECASE),
                                re.compile(r"\b(?:mindspeed|MindSpeed)(?:[_-](?:llm|LLM|mm|MM|rl|RL))?\b")]),
    ("megatron", "megatron", [re.compile(r"\bmegatron[./](?:core|training|legacy)\b"), re.compile(r"\bpretrain_gpt\.py\b"),
                              re.compile(r"--tensor-model-parallel-size\b")]),
    ("deepspeed", "deepspeed", [re.compile(r"DeepSpeed info: version=" + _N), re.compile(r"\bdeepspeed" + _PKG_VER, re.IGNORECASE),
                                re.compile(r"\[deepspeed\]|\bdeepspeed[./](?:runtime|launcher|ops)\b|\bDeepSpeed\b")]),
    ("triton-ascend", "triton-ascend", [re.compile(r"\btriton[_-]ascend" + _PKG_VER, re.IGNORECASE),
                                        re.compile(r"\btriton[_-]ascend\b", re.IGNORECASE)]),
]
FRAMEWORK_RANK = {"vllm": 0, "sglang": 0, "lmdeploy": 0, "mindie": 0, "llamafactory": 1, "ms-swift": 1, "mindspeed": 1,
                  "megatron": 2, "deepspeed": 3, "triton-ascend": 4}
"""A framework of a lower rank wins over one found before it (LLaMA-Factory runs on DeepSpeed; MindSpeed on Megatron)."""
FRAMEWORK_TRIGGERS = (b"vllm", b"vLLM", b"VLLM", b"LLM engine (v", b"sglang", b"lmdeploy", b"indspeed", b"indSpeed", b"egatron",
                      b"pretrain_gpt", b"tensor-model-parallel", b"eepspeed", b"eepSpeed", b"lamafactory", b"LaMA-Factory",
                      b"lamaFactory", b"swift", b"indIE", b"indie", b"triton-ascend", b"triton_ascend")

TRIGGERS_BY_KEY = {
    "chip": (b"oc_version", b"ocVersion", b"Ascend910", b"Ascend310", b"Ascend950", b"910B", b"910C", b"910A", b"310P"),
    "torch_npu": (b"torch", b"Torch"),
    "torch": (b"torch", b"Torch"),
    "cann": (b"CANN", b"cann-toolkit", b"ascend-toolkit"),
    "framework": FRAMEWORK_TRIGGERS,
}
TRIGGERS = tuple(dict.fromkeys(t for ts in TRIGGERS_BY_KEY.values() for t in ts))
_FW_LOW = tuple(dict.fromkeys(t.decode().lower() for t in FRAMEWORK_TRIGGERS))
"""Byte strings the scanner's trigger adds so that banner and ``npu-smi`` lines reach :meth:`Context.feed`."""


class Context:
    """What the log (or the command line) says about the chip and the stack.

    ``values``: ``{"chip"|"torch_npu"|"torch"|"cann": {"value", "from", "file", "line", "text"}}``.
    """

    def __init__(self, chip: Optional[str] = None, torch_npu: Optional[str] = None):
        self.values: dict = {}
        if chip:
            alias = chips_kb.FAMILY_ALIASES.get(chip.strip().lower())
            canon = None if alias else chips_kb.normalize_soc_version(chip)
            fam = alias or chips_kb.family_code(chip)
            if canon is None and fam is None:
                from ascendify.errors import AscendifyError

                raise AscendifyError(f"--chip {chip}: unknown chip (expected a soc_version such as Ascend910B3 or a family such as 910B)")
            # a family spelling (910B = Atlas A2, a3, 310P) is a family, not the digit-less soc_version Ascend910B
            self.values["chip"] = {"value": canon or chip, "from": "option"}
            if canon is None:
                self.values["chip"]["family_only"] = fam
        if torch_npu:
            self.values["torch_npu"] = {"value": torch_npu, "from": "option"}

    @property
    def complete(self) -> bool:
        return all(k in self.values for k in TRIGGERS_BY_KEY)

    def missing_triggers(self) -> tuple:
        """The trigger words of the facts not known yet."""
        return tuple(dict.fromkeys(t for k, ts in TRIGGERS_BY_KEY.items() if k not in self.values for t in ts))

    def _set(self, key: str, value: str, file: str, line: int, text: str) -> None:
        if key not in self.values:
            self.values[key] = {"value": value, "from": "log", "file": file, "line": line, "text": text[:200].strip()}

    def feed(self, text: str, file: str, line: int) -> None:
        """Look for chip / version facts in one line (cheap when none is there)."""
        if "chip" not in self.values:
            for rx in _CHIP:
                m = rx.search(text)
                if m:
                    canon = chips_kb.normalize_soc_version(m.group(1))
                    if canon is not None:
                        self._set("chip", canon, file, line, text)
                        break
        low = text.lower()
        if "torch" in low:
            if "torch_npu" not in self.values:
                m = _TORCH_NPU.search(text)
                if m:
                    self._set("torch_npu", m.group(1), file, line, text)
            if "torch" not in self.values:
                m = _TORCH.search(text)
                if m and versions_kb.base_version(m.group(1)):
                    self._set("torch", m.group(1), file, line, text)
        fw = self.values.get("framework")
        if (fw is None or FRAMEWORK_RANK[fw["value"]] > 0 or len(fw["versions"]) < 2) and any(w in low for w in _FW_LOW):
            self.feed_framework(text, file, line)
        if "cann" not in self.values and ("cann" in low or "toolkit" in low):
            for rx in _CANN:
                m = rx.search(text)
                if m and versions_kb.cann_key(m.group(1)):
                    self._set("cann", m.group(1), file, line, text)
                    break

    def feed_framework(self, text: str, file: str, line: int) -> None:
        """Framework (vLLM, MindSpeed, …) and its version from one line; a more specific framework found later
        replaces a base one (:data:`FRAMEWORK_RANK`), versions of each package are kept under ``versions``."""
        cur = self.values.get("framework")
        for name, vkey, rxs in FRAMEWORKS:
            for rx in rxs:
                m = rx.search(text)
                if m is None:
                    continue
                ver = m.group(1) if m.groups() else None
                if cur is None or (FRAMEWORK_RANK[name] < FRAMEWORK_RANK[cur["value"]]):
                    cur = self.values["framework"] = {"value": name, "from": "log", "file": file, "line": line,
                                                      "text": text[:200].strip(), "versions": dict(cur["versions"]) if cur else {}}
                if ver and vkey not in cur["versions"]:
                    cur["versions"][vkey] = ver
                    if vkey == name or (name == "vllm" and "version" not in cur):
                        cur.setdefault("version", ver)
                break

    def versions(self) -> dict:
        """``{"torch_npu": …, "cann": …, "torch": …, "vllm": …, "vllm-ascend": …}``: the versions the log (or options) show."""
        out = {k: v["value"] for k, v in self.values.items() if k in ("torch_npu", "cann", "torch") and v.get("value")}
        fw = self.values.get("framework")
        if fw:
            out.update(fw.get("versions", {}))
        return out

    # ------------------------------------------------------------------ advice

    def chip_info(self):
        v = self.values.get("chip")
        if not v:
            return None
        fam_only = v.get("family_only")
        info = None if fam_only else chips_kb.chip_info(v["value"])
        if fam_only:
            chips = chips_kb.family_chips(fam_only)
            return chips[0] if chips else None
        if info is None:
            fam = chips_kb.family_code(v["value"])
            chips = chips_kb.family_chips(fam) if fam else []
            info = chips[0] if chips else None
        return info

    def bf16_note(self) -> Optional[str]:
        """One sentence on bf16 for the detected chip, or None when no chip is known."""
        info = self.chip_info()
        if info is None:
            return None
        name = self.values["chip"]["value"]
        if info.bf16 is False:
            return (f"{name} ({info.family_name}) has no bf16 support (chips KB): use float16 with a dynamic loss scaler "
                    "(torch.npu.amp.GradScaler) instead of bf16, and keep overflow-prone ops in float32.")
        if info.bf16 is True:
            return (f"{name} ({info.family_name}) supports bf16 (chips KB): training in bf16 instead of fp16 avoids fp16 "
                    "overflow and needs no loss scaler.")
        return f"bf16 support on {name} is unknown in the chips KB ({info.bf16_note or 'sources disagree'})."

    def version_note(self) -> Optional[str]:
        """What the compatibility table says about the detected torch_npu / CANN / torch, or None."""
        npu = self.values.get("torch_npu", {}).get("value")
        cann = self.values.get("cann", {}).get("value")
        torch = self.values.get("torch", {}).get("value")
        parts = []
        if cann:
            rows = versions_kb.releases_matching(cann=cann)
            if rows:
                parts.append(f"For CANN {cann} the compatibility table lists torch_npu "
                             + ", ".join(f"{r.torch_npu} (torch {r.torch})" for r in rows[:4]) + ".")
            else:
                look = versions_kb.lookup_cann(cann)
                if look.note:
                    parts.append(look.note + ".")
        if npu:
            look = versions_kb.lookup_torch_npu(npu)
            if look.release is not None:
                if cann and versions_kb.cann_key(versions_kb.cann_release_of(cann) or "") != versions_kb.cann_key(look.release.cann):
                    parts.append(f"torch_npu {npu} is made for CANN {look.release.cann}, not {cann}: install CANN "
                                 f"{look.release.cann} or a torch_npu listed for CANN {cann}.")
                if torch and versions_kb.base_version(torch) != versions_kb.base_version(look.release.torch):
                    parts.append(f"torch_npu {npu} needs torch {look.release.torch}, the log shows torch {torch}.")
            elif look.note:
                parts.append(look.note + ".")
        if not parts:
            return None
        return " ".join(parts) + f" (source: {versions_kb.SOURCE_MATRIX})"

    def mismatch(self) -> Optional[str]:
        """A sentence when the detected versions do not pair in the table, else None."""
        npu = self.values.get("torch_npu", {}).get("value")
        cann = self.values.get("cann", {}).get("value")
        torch = self.values.get("torch", {}).get("value")
        if not npu or not (cann or torch):
            return None
        look = versions_kb.lookup_torch_npu(npu)
        if look.release is None or not look.exact:
            return None
        bad = []
        if cann and versions_kb.lookup_cann(cann).exact and not versions_kb.releases_matching(torch_npu=npu, cann=cann):
            needed, options = versions_kb.suggest_for_mismatch(npu, cann, torch)
            bad.append(f"torch_npu {npu} is made for CANN {needed}, the log shows CANN {cann}"
                       + (f" (torch_npu for CANN {cann}: {', '.join(options[:4])})" if options else ""))
        if torch and versions_kb.base_version(torch) != versions_kb.base_version(look.release.torch):
            bad.append(f"torch_npu {npu} needs torch {look.release.torch}, the log shows torch {torch}")
        return "; ".join(bad) if bad else None

    def to_dict(self) -> dict:
        out = {k: {a: b for a, b in v.items() if a != "family_only"} for k, v in self.values.items()}
        info = self.chip_info()
        if info is not None:
            out["chip"].update(family=info.family, bf16=info.bf16)
        return out


BF16_WORDS = ("bf16", "bfloat16", "BF16", "BFloat16", "DT_BF16")
VERSION_FAMILIES = ("environment", "version", "versions", "install", "compat")
NUMERIC_FAMILIES = ("numeric", "metrics", "dtype")


def advice_for(finding, ctx: Context) -> list:
    """Extra fix sentences for ``finding`` given the chip / stack context."""
    out = []
    blob = " ".join((finding.title, finding.cause, finding.fix, " ".join(e.text for e in finding.evidence[:2])))
    if finding.family in NUMERIC_FAMILIES or any(w in blob for w in BF16_WORDS):
        note = ctx.bf16_note()
        if note:
            out.append(note)
    key = getattr(finding, "key", "") or ""
    chip = ctx.values.get("chip", {}).get("value")
    npu = ctx.values.get("torch_npu", {}).get("value")
    if key.startswith("aten::") and (chip or npu):
        opts = (f" --chip {chip}" if chip else "") + (f" --torch-npu {npu}" if npu else "")
        out.append(f"`ascendify ops {key}{opts}` shows which torch_npu releases"
                   + (" and whether this chip" if chip else "") + " run it on the NPU.")
    if finding.family in VERSION_FAMILIES or "undefined symbol" in blob or "version" in finding.title.lower():
        note = ctx.version_note()
        if note:
            out.append(note)
    return out
