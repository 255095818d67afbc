"""Numeric symptoms in metric logs: NaN/inf loss or grad norm, loss stuck at 0,
loss-scale collapse, exploding grad norm.

Reads the shapes training scripts print:

* JSON lines ``{"loss": NaN, "grad_norm": Infinity, "loss_scale": 1.0, "step": 100}``
  (``NaN`` / ``Infinity`` / ``nan`` / ``inf``, quoted or not);
* Python dict prints of the HF Trainer ``{'loss': 0.0, 'grad_norm': nan, 'epoch': 0.1}``;
* text ``step 100 loss nan``, ``loss=nan``, ``loss: 2.3``, Megatron rows
  ``iteration 100/ 1000 | lm loss: 2.3E+00 | loss scale: 1.0 | grad norm: 1.2 |``;
* loss-scaler messages: DeepSpeed ``Attempted loss scale: 2, reducing to 1`` and
  ``Current loss scale already at minimum``, apex ``reducing loss scale to 512.0``.

Each stream keeps one small :class:`Tracker` per rank (a window of recent
grad norms), so memory does not grow with the log.  The explanations and
thresholds live in ``data/symptoms.toml``.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Optional

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_NUM = r"""["']?(?P<v>[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|NaN|NAN|inf|Inf|INF|Infinity|infinity)\b)"""
_KEYS = {
    "loss": "loss", "lm loss": "loss", "lm_loss": "loss", "train/loss": "loss",
    "grad_norm": "grad_norm", "grad norm": "grad_norm", "gnorm": "grad_norm", "grad-norm": "grad_norm",
    "train/grad_norm": "grad_norm", "global_grad_norm": "grad_norm",
    "loss_scale": "loss_scale", "loss scale": "loss_scale", "loss-scale": "loss_scale", "scaler": "loss_scale",
    "step": "step", "global_step": "step", "iteration": "step", "iter": "step", "train/global_step": "step",
}
_KV = re.compile(
    r"""(?<![\w/.-])["']?(?P<k>train/global_step|train/grad_norm|train/loss|global_grad_norm|global_step|grad_norm|grad norm|grad-norm|gnorm|loss_scale|loss scale|loss-scale|lm loss|lm_loss|loss|iteration|iter|step)["']?(?![\w-])\s{0,16}[:=]?\s{0,16}"""
    + _NUM,
    re.IGNORECASE,
)
_SCALE_MSG = re.compile(r"(?:reducing to|reducing loss scale to|loss scale(?:r)? (?:is )?(?:set|reduced) to)\s+(?P<v>[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)", re.IGNORECASE)
SCALE_MIN_MSG = "Current loss scale already at minimum"
TRIGGERS = (b"loss", b"Loss", b"LOSS", b"grad_norm", b"grad norm", b"gnorm", b"reducing to")
"""Byte strings that mark a metric line (the scanner parses every such line in
the first ``FULL_HEAD`` bytes of a stream and near an anomaly, else samples)."""
HOT = re.compile(rb"[nNiIrC](?:an|aN|AN|nf(?:inity)?|educing|urrent loss scale already)(?![A-Za-z])")
"""Tokens worth a look wherever they are: ``nan`` / ``inf`` / ``Infinity`` words and the
loss-scaler messages (``reducing to``, ``Current loss scale already at minimum``); one
character class first, so the search runs at C speed (≈12 ms/MiB).  A zero loss, a
collapsed scale or a large grad norm lasts, so the scanner's samples find those."""


def anomalous(values: dict, floor: float = 1.0) -> bool:
    """Whether a record is unusual enough to read every metric line after it."""
    loss, g, sc = values.get("loss"), values.get("grad_norm"), values.get("loss_scale")
    return ((loss is not None and (loss == 0.0 or not math.isfinite(loss)))
            or (g is not None and (not math.isfinite(g) or g >= 100.0))
            or (sc is not None and sc <= floor))


def _val(s: str) -> float:
    s = s.strip("\"'").lower()
    if "nan" in s:
        return math.nan
    if "inf" in s:
        return -math.inf if s.startswith("-") else math.inf
    return float(s)


def parse_metrics(line: str) -> dict:
    """The metric values of one line: ``{"loss", "grad_norm", "loss_scale", "step"}``
    (those present; floats, NaN/inf kept), empty when the line has none."""
    out: dict = {}
    for m in _KV.finditer(line):
        k = _KEYS.get(m.group("k").lower())
        if k is None or k in out:
            continue
        try:
            out[k] = _val(m.group("v"))
        except ValueError:
            continue
    m = _SCALE_MSG.search(line)
    if m:  # "Attempted loss scale: 2, reducing to 1": the new scale is the one after "reducing to"
        out["loss_scale"] = float(m.group("v"))
    if "step" in out and not (math.isfinite(out["step"]) and out["step"] >= 0):
        del out["step"]
    if len(out) == 1 and "step" in out:
        return {}
    return out


@dataclass(frozen=True)
class Symptom:
    id: str
    title: str
    severity: str
    role: str
    confidence: float
    cause: str
    fix: str
    next_step: str
    source: str
    verified: bool = True


@dataclass
class SymptomData:
    symptoms: dict
    thresholds: dict


@lru_cache(maxsize=1)
def load_symptoms() -> SymptomData:
    """The packaged ``data/symptoms.toml``."""
    text = resources.files("ascendify.diagnose").joinpath("data").joinpath("symptoms.toml").read_text(encoding="utf-8")
    data = tomllib.loads(text)
    syms = {}
    for raw in data.get("symptom", []):
        for f in ("id", "title", "severity", "role", "cause", "fix", "next_step", "source"):
            if not raw.get(f):
                raise ValueError(f"symptoms.toml: symptom {raw.get('id', '?')}: missing {f}")
        syms[raw["id"]] = Symptom(
            id=raw["id"], title=raw["title"], severity=raw["severity"], role=raw["role"],
            confidence=float(raw.get("confidence", 0.6)), cause=raw["cause"], fix=raw["fix"], next_step=raw["next_step"],
            source=raw["source"], verified=bool(raw.get("verified", True)),
        )
    return SymptomData(syms, dict(data.get("thresholds", {})))


@dataclass
class Event:
    """A symptom decided on a line: ``id`` (symptoms.toml), where it started and the numbers."""

    id: str
    line: int
    text: str
    step: Optional[float]
    record: int
    value: Optional[float]
    details: dict
    onset_text: str = ""   # the record where the symptom began, when not ``text`` (a loss scale's first decrease)
    onset_record: int = 0
    final: bool = False    # an end-of-stream update of a symptom already reported (its final counts only)


def _fmt(v: Optional[float]) -> str:
    if v is None:
        return "?"
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


class Tracker:
    """Metric history of one rank of one stream (bounded)."""

    def __init__(self, thresholds: Optional[dict] = None):
        t = thresholds if thresholds is not None else load_symptoms().thresholds
        self.zero_n = int(t.get("zero_loss_records", 5))
        self.halvings_n = int(t.get("scale_halvings", 4))
        self.floor = float(t.get("scale_floor", 1.0))
        self.factor = float(t.get("explode_factor", 100.0))
        self.window_n = int(t.get("explode_window", 20))
        self.min_n = int(t.get("explode_min", 10))
        self.records = 0
        self.reported: set = set()
        self.zero_run = 0
        self.zero_first: Optional[tuple] = None
        self.scale_last: Optional[float] = None
        self.scale_first: Optional[tuple] = None
        self.halvings = 0
        self.window: list = []
        self.nonfinite_count = {"loss": 0, "grad_norm": 0}
        self.nonfinite_first: dict = {}
        self.nonfinite_n = {"loss": 1, "grad_norm": int(t.get("nonfinite_grad_records", 3))}
        self.scale_max: Optional[float] = None
        self.value_records = {"loss": 0, "grad_norm": 0}  # records that print each value at all

    def feed(self, values: dict, line: int, text: str) -> list:
        """Events decided by this record (each symptom id once per tracker)."""
        self.records += 1
        step = values.get("step")
        where = (line, text[:300], step, self.records)
        out = []
        for key, sid in (("loss", "loss-nonfinite"), ("grad_norm", "grad-norm-nonfinite")):
            v = values.get(key)
            if v is not None:
                self.value_records[key] += 1
            if v is not None and not math.isfinite(v):
                self.nonfinite_count[key] += 1
                if key not in self.nonfinite_first:
                    self.nonfinite_first[key] = (line, text[:300], step, self.records, v)
                loss = values.get("loss")
                with_bad_loss = key == "grad_norm" and loss is not None and (loss == 0.0 or not math.isfinite(loss))
                if sid not in self.reported and (self.nonfinite_count[key] >= self.nonfinite_n[key] or with_bad_loss):
                    self.reported.add(sid)
                    fl, ft, fs, fr, fv = self.nonfinite_first[key]
                    out.append(Event(sid, fl, ft, fs, fr, fv, {key: _fmt(fv), "records_nonfinite": self.nonfinite_count[key]}))
        loss = values.get("loss")
        if loss is not None:
            if loss == 0.0:
                self.zero_run += 1
                if self.zero_run == 1:
                    self.zero_first = where
                if self.zero_run == self.zero_n and "loss-zero" not in self.reported:
                    self.reported.add("loss-zero")
                    zl, zt, zs, zr = self.zero_first
                    out.append(Event("loss-zero", zl, zt, zs, zr, 0.0, {"records": self.zero_n}))
            else:
                self.zero_run = 0
        scale = values.get("loss_scale")
        if scale is not None and math.isfinite(scale):
            if self.scale_last is not None and scale < self.scale_last:
                if self.halvings == 0:
                    self.scale_first = where
                self.halvings += 1
            elif self.scale_last is not None and scale > self.scale_last:
                self.halvings = 0
            self.scale_last = scale
            self.scale_max = scale if self.scale_max is None else max(self.scale_max, scale)
            fell = self.halvings >= self.halvings_n or self.scale_max >= self.floor * 2 ** self.halvings_n
            if fell and scale <= self.floor and "loss-scale-collapse" not in self.reported:
                self.reported.add("loss-scale-collapse")
                out.append(Event("loss-scale-collapse", line, text[:300], step, self.records, scale,
                                 {"loss_scale": _fmt(scale), "max_loss_scale": _fmt(self.scale_max), "decreases_seen": self.halvings,
                                  "first_decrease_line": self.scale_first[0] if self.scale_first else None,
                                  "first_decrease_step": self.scale_first[2] if self.scale_first else None},
                                 onset_text=self.scale_first[1] if self.scale_first else "",
                                 onset_record=self.scale_first[3] if self.scale_first else 0))
        g = values.get("grad_norm")
        if g is not None and math.isfinite(g):
            if len(self.window) >= self.min_n and "grad-norm-explode" not in self.reported:
                med = sorted(self.window)[len(self.window) // 2]
                if med > 0 and g > self.factor * med:
                    self.reported.add("grad-norm-explode")
                    out.append(Event("grad-norm-explode", line, text[:300], step, self.records, g,
                                     {"grad_norm": _fmt(g), "median_before": _fmt(med)}))
            self.window.append(g)
            if len(self.window) > self.window_n:
                del self.window[0]
        return out

    def finish(self) -> list:
        """Events decided at the end of the stream: a NaN/inf grad norm in at least half of
        the records that print one (a short paste with one bad record); and, for a NaN/inf
        symptom reported earlier, its final counts (``final``: how many records were
        non-finite in the whole stream, not only up to the one that decided it)."""
        out = []
        for key, sid in (("loss", "loss-nonfinite"), ("grad_norm", "grad-norm-nonfinite")):
            if sid in self.reported and self.nonfinite_count[key]:
                fl, ft, fs, fr, fv = self.nonfinite_first[key]
                out.append(Event(sid, fl, ft, fs, fr, fv, {"records_nonfinite": self.nonfinite_count[key],
                                                           "records_with_value": self.value_records[key]}, final=True))
        key, sid = "grad_norm", "grad-norm-nonfinite"
        n = self.nonfinite_count[key]
        if sid in self.reported or n == 0 or n * 2 < self.value_records[key]:
            return out
        self.reported.add(sid)
        fl, ft, fs, fr, fv = self.nonfinite_first[key]
        return out + [Event(sid, fl, ft, fs, fr, fv, {key: _fmt(fv), "records_nonfinite": n,
                                                      "records_with_value": self.value_records[key]})]

    def scale_at_minimum(self, line: int, text: str) -> list:
        """DeepSpeed's ``Current loss scale already at minimum`` message."""
        if "loss-scale-collapse" in self.reported:
            return []
        self.reported.add("loss-scale-collapse")
        return [Event("loss-scale-collapse", line, text[:300], None, self.records, self.scale_last,
                      {"loss_scale": _fmt(self.scale_last), "message": SCALE_MIN_MSG})]


def step_text(ev: Event) -> str:
    """``step 100`` or ``record 7 (line 12)`` when the log prints no step."""
    if ev.step is not None:
        return f"step {int(ev.step) if float(ev.step).is_integer() else ev.step}"
    return f"metric record {ev.record} (line {ev.line})"


def value_text(ev: Event) -> str:
    return _fmt(ev.value)
