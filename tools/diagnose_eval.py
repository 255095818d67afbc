#!/usr/bin/env python3
"""Score ``ascendify diagnose`` on a set of public failure logs with verified resolutions.

    python tools/diagnose_eval.py --set DIR --labels LABELS.json [--json] [-o OUT.json] [-v]

``DIR`` holds the logs under neutral names (``001.log``, ``002.log``, ...: a
descriptive file name must not leak the answer).  ``LABELS.json`` maps each
log's number to its label, written from the public thread *before* any run of
the tool::

    {"001": {"url": "https://github.com/...", "project": "vllm-ascend", "family": "hccl",
             "cause": "...", "fix": "...",
             "cause_any": [["previous", "process"], ["still running"]],
             "fix_any": [["kill"]],
             "exclude_urls": ["https://..."]}}            # optional aliases of url

A log passes when the tool's own words in its **first** finding satisfy one
group of ``cause_any`` **and** one group of ``fix_any``; a group is satisfied
when every one of its phrases occurs (case-insensitive; ``_`` and ``-`` count
as the same character).

Fairness rules, enforced here:

* each log is diagnosed with ``ASCENDIFY_KI_EXCLUDE_URLS`` set to the label's
  ``url`` (plus ``exclude_urls``) and to every known-issue record URL that names
  the same source under another spelling (see ``canonical_url``: another anchor
  or query, a pinned commit or branch, the ``zh``/``en`` copy of the same page,
  a renamed or mirrored repository), so the known-issue index cannot answer from
  the very thread or FAQ page the log was taken from;
* only the tool's own words count: ``title``, ``cause``, ``fix``,
  ``next_step`` and prose fields under ``details`` (never ``evidence``,
  ``python_frame``, ``exception`` or quote/line/text fields);
* from those words every line, sentence or clause, and every quoted span
  (``'..'``, ``".."``, `` `..` ``), that also occurs verbatim in the log is
  removed before matching — echoing the log's own error line earns nothing.

Prints one line per log (number, family, PASS/FAIL, which half failed) and
totals per family; ``--json`` prints the same as one JSON object.
Exit status 0 (scoring is a measurement, not a gate); 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from functools import lru_cache
from typing import Callable, Dict, Iterable, List, Optional, Sequence
from urllib.parse import unquote, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXCLUDE_ENV = "ASCENDIFY_KI_EXCLUDE_URLS"
TIMEOUT_S = 300

OWN_FIELDS = ("title", "cause", "fix", "next_step")
"""Finding fields written by the tool itself."""
DETAIL_SKIP = frozenset({
    "evidence", "quote", "quotes", "quoted", "line", "lines", "text", "texts", "log", "logs", "raw", "match_text",
    "matched_lines", "key_lines", "excerpt", "example", "examples", "python_frame", "frame", "exception", "url",
    "urls", "source", "sources", "file", "path", "id", "key",
})
"""Keys under ``details`` whose values are (or may be) text copied from the log or a thread, or not prose."""
MIN_ECHO = 12
"""Shortest tool segment (characters) that is removed for occurring verbatim in the log."""
MIN_QUOTE = 6
"""Shortest quoted span that is removed for occurring verbatim in the log."""

_WS = re.compile(r"\s+")
_QUOTED = re.compile(r"`([^`\n]+)`|\"([^\"\n]+)\"|'([^'\n]{2,})'|“([^”\n]+)”|‘([^’\n]+)’")
_CLAUSE = re.compile(r"(?<=[.;:!?。；：])\s+|\s+[-–—]\s+|\n")


class EvalError(Exception):
    """Bad input to the scorer (one line, shown without a traceback)."""


def _norm(s: str) -> str:
    return _WS.sub(" ", s.replace("_", "-")).strip().lower()


# ------------------------------------------------------------------ tool words

def own_words(finding: dict) -> List[str]:
    """The prose the tool wrote for one finding: OWN_FIELDS, then prose under ``details``."""
    out = []
    for k in OWN_FIELDS:
        v = finding.get(k)
        if isinstance(v, str) and v.strip():
            out.append(v)
    out.extend(_detail_prose(finding.get("details") or {}))
    return out


def _detail_prose(obj, depth: int = 0) -> Iterable[str]:
    if depth > 4:
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            if str(k).lower() in DETAIL_SKIP:
                continue
            if isinstance(v, str):
                if " " in v.strip():  # prose, not an identifier / number / version
                    yield v
            else:
                yield from _detail_prose(v, depth + 1)
    elif isinstance(obj, list):
        for v in obj:
            yield from _detail_prose(v, depth + 1)


def strip_echo(texts: Sequence[str], log_text: str) -> str:
    """``texts`` joined, less every line / clause / quoted span that occurs verbatim in ``log_text``."""
    log_n = _norm(log_text)

    def echoed(seg: str, minimum: int) -> bool:
        s = _norm(seg).strip(" .,;:!?\"'`()[]")
        return len(s) >= minimum and s in log_n

    kept = []
    for text in texts:
        for line in text.splitlines():
            if echoed(line, MIN_ECHO):
                continue
            line = _QUOTED.sub(lambda m: " " if echoed(next(g for g in m.groups() if g is not None), MIN_QUOTE) else m.group(0),
                               line)
            parts = [p for p in _CLAUSE.split(line) if p and not echoed(p, MIN_ECHO)]
            if parts:
                kept.append(" ".join(parts))
    return "\n".join(kept)


def groups_hit(text: str, groups: Sequence[Sequence[str]]) -> Optional[List[str]]:
    """The first group whose phrases all occur in ``text`` (normalised), else None."""
    t = _norm(text)
    for g in groups:
        if all(_norm(p) in t for p in g):
            return list(g)
    return None


# ------------------------------------------------------------------ leave-one-out by source

CODE_HOSTS = frozenset({"github.com", "gitee.com", "gitcode.com", "atomgit.com"})
"""Hosts where ``owner/repo`` mirrors of the same repository live."""
_LANG_SEGMENTS = frozenset({"zh", "en", "zh_cn", "zh-cn", "en_us", "en-us", "cn"})
_REF_KINDS = frozenset({"blob", "tree", "raw"})
_NON_ALNUM = re.compile(r"[^a-z0-9]")
_SOURCE_LANG = re.compile(r"^source_(zh_cn|zh|en)$")


def canonical_url(url: str) -> str:
    """A key under which spellings of one source compare equal.

    Ignored: scheme, ``www.``, query and fragment (``?plain=1``, ``#L95``, ``#issuecomment-1``),
    the ref after ``blob``/``tree``/``raw`` (branch or pinned commit), language path segments
    (``docs/zh/FAQ.md`` = ``docs/en/FAQ.md``), case and punctuation in ``owner/repo`` (a renamed
    ``LLaMA-Factory`` = ``LlamaFactory``) and the code host (GitHub, Gitee and GitCode mirrors).
    ``issues/5``, ``issues/50`` and ``pull/5`` stay different.
    """
    parts = urlsplit(unquote(url.strip()))
    host = parts.netloc.lower()
    if host.startswith("www."):
        host = host[4:]
    segs = [p for p in parts.path.split("/") if p]
    if host in CODE_HOSTS and len(segs) >= 2:
        owner, repo = (_NON_ALNUM.sub("", x.lower()) for x in segs[:2])
        rest = [x.lower() for x in segs[2:]]
        if rest[:1] and rest[0] in _REF_KINDS and len(rest) >= 2:
            rest = rest[2:]
        if rest[:1] == ["pulls"] or rest[:1] == ["merge_requests"]:
            rest = ["pull"] + rest[1:]
        rest = [_SOURCE_LANG.sub("source", x) for x in rest if x not in _LANG_SEGMENTS]
        return "code:%s/%s/%s" % (owner, repo, "/".join(rest))
    return host + parts.path.rstrip("/").lower()


def same_source_urls(urls: Sequence[str], candidates: Iterable[str]) -> List[str]:
    """The ``candidates`` whose ``canonical_url`` equals that of one of ``urls`` (sorted, ``urls`` left out)."""
    keys = {canonical_url(u) for u in urls if u}
    given = {u.rstrip("/") for u in urls if u}
    return sorted({c for c in candidates if c and c.rstrip("/") not in given and canonical_url(c) in keys})


def tool_src() -> str:
    """The ``src`` folder whose ``ascendify`` is scored.

    The first ``PYTHONPATH`` entry that holds the package (so ``PYTHONPATH=<clean copy>/src`` scores
    that copy, not the checkout this script lives in), else this checkout's ``src``.
    """
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p and os.path.isfile(os.path.join(p, "ascendify", "__init__.py")):
            return os.path.abspath(p)
    return os.path.join(ROOT, "src")


def ki_record_urls(src: Optional[str] = None) -> tuple:
    """URLs of the known-issue records packaged under ``src`` (default ``tool_src()``; empty when there are none)."""
    return _ki_record_urls(os.path.abspath(src or tool_src()))


@lru_cache(maxsize=4)
def _ki_record_urls(src: str) -> tuple:
    d = os.path.join(src, "ascendify", "diagnose", "data", "known_issues")
    out = []
    try:
        names = sorted(n for n in os.listdir(d) if n.endswith(".jsonl"))
    except OSError:
        return ()
    for n in names:
        try:
            with open(os.path.join(d, n), encoding="utf-8") as fh:
                for line in fh:
                    line = line.strip()
                    if line:
                        try:
                            u = json.loads(line).get("url")
                        except (ValueError, AttributeError):
                            continue
                        if isinstance(u, str) and u:
                            out.append(u)
        except OSError:
            continue
    return tuple(out)


# ------------------------------------------------------------------ running the tool

def run_diagnose(log_path: str, exclude_urls: Sequence[str]) -> dict:
    """``ascendify diagnose LOG --format json`` with the known-issue exclusion set; the parsed JSON."""
    env = dict(os.environ)
    env[EXCLUDE_ENV] = ",".join(u for u in exclude_urls if u)
    src = tool_src()
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    cmd = [sys.executable, "-m", "ascendify", "diagnose", log_path, "--format", "json"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"_error": f"timed out after {TIMEOUT_S} s"}
    try:
        return json.loads(proc.stdout)
    except ValueError:
        tail = (proc.stderr or proc.stdout or "").strip().splitlines()[-1:] or ["no output"]
        return {"_error": f"exit {proc.returncode}: {tail[0][:200]}"}


def score_one(num: str, log_path: str, label: dict,
              run: Callable[[str, Sequence[str]], dict] = run_diagnose,
              ki_urls: Optional[Iterable[str]] = None) -> dict:
    """Diagnose one log and score its first finding against ``label``.

    ``ki_urls``: the known-issue record URLs to search for other spellings of the label's
    source (default: the records packaged with the tool under test).
    """
    excl = [label.get("url", "")] + list(label.get("exclude_urls") or [])
    excl += same_source_urls(excl, ki_record_urls() if ki_urls is None else ki_urls)
    report = run(log_path, excl)
    with open(log_path, encoding="utf-8", errors="replace") as fh:
        log_text = fh.read()
    findings = report.get("findings") or []
    res = {"num": num, "family": label.get("family", "?"), "project": label.get("project", ""),
           "url": label.get("url", ""), "excluded": len(excl), "finding": None, "cause_hit": None, "fix_hit": None,
           "pass": False}
    if report.get("_error"):
        res["error"] = report["_error"]
        return res
    if not findings:
        return res
    first = findings[0]
    res["finding"] = first.get("id")
    words = strip_echo(own_words(first), log_text)
    res["cause_hit"] = groups_hit(words, label["cause_any"])
    res["fix_hit"] = groups_hit(words, label["fix_any"])
    res["pass"] = bool(res["cause_hit"] and res["fix_hit"])
    return res


# ------------------------------------------------------------------ CLI

def load_labels(path: str) -> Dict[str, dict]:
    try:
        with open(path, encoding="utf-8") as fh:
            labels = json.load(fh)
    except (OSError, ValueError) as e:
        raise EvalError(f"{path}: cannot read labels ({e}); give a JSON object of number -> label")
    if not isinstance(labels, dict):
        raise EvalError(f"{path}: labels must be a JSON object of number -> label")
    for num, lab in labels.items():
        for k in ("url", "cause_any", "fix_any"):
            if k not in lab:
                raise EvalError(f"{path}: label {num} has no '{k}'")
        for k in ("cause_any", "fix_any"):
            g = lab[k]
            if not (isinstance(g, list) and g and all(isinstance(x, list) and x and all(isinstance(p, str) and p for p in x)
                                                     for x in g)):
                raise EvalError(f"{path}: label {num} '{k}' must be a non-empty list of non-empty lists of phrases")
    return labels


def evaluate(set_dir: str, labels: Dict[str, dict], run=run_diagnose, verbose: bool = False,
             ki_urls: Optional[Iterable[str]] = None) -> dict:
    if not os.path.isdir(set_dir):
        raise EvalError(f"{set_dir}: not a folder; give the folder of NNN.log files")
    nums = sorted(labels)
    missing = [n for n in nums if not os.path.isfile(os.path.join(set_dir, n + ".log"))]
    if missing:
        raise EvalError(f"{set_dir}: no log for label(s) {', '.join(missing[:5])}; labels and set do not match")
    results = []
    for n in nums:
        r = score_one(n, os.path.join(set_dir, n + ".log"), labels[n], run=run, ki_urls=ki_urls)
        results.append(r)
        if verbose:
            print(_line(r), file=sys.stderr, flush=True)
    fam: Dict[str, List[int]] = {}
    for r in results:
        p = fam.setdefault(r["family"], [0, 0])
        p[0] += int(r["pass"])
        p[1] += 1
    passed = sum(int(r["pass"]) for r in results)
    return {"set": os.path.abspath(set_dir), "src": tool_src(), "total": len(results), "passed": passed,
            "rate": round(passed / len(results), 4) if results else 0.0,
            "families": {k: {"passed": v[0], "total": v[1]} for k, v in sorted(fam.items())},
            "results": results}


def _line(r: dict) -> str:
    if r["pass"]:
        status = "PASS"
    elif r.get("error"):
        status = "FAIL (tool error: " + r["error"] + ")"
    elif not r["finding"]:
        status = "FAIL (no finding)"
    else:
        miss = [h for h, k in (("cause", "cause_hit"), ("fix", "fix_hit")) if not r[k]]
        status = "FAIL (" + "+".join(miss) + " not named)"
    return f"{r['num']}  {r['family']:<14} {status}  [{r['finding'] or '-'}]"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", required=True, dest="set_dir", help="folder of NNN.log files")
    ap.add_argument("--labels", required=True, help="JSON labels for that folder")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("-o", "--output", help="also write the JSON result to this file")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each log's result as it is scored (stderr)")
    a = ap.parse_args(argv)
    try:
        out = evaluate(a.set_dir, load_labels(a.labels), verbose=a.verbose)
    except EvalError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.output:
        tmp = a.output + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1, ensure_ascii=False)
        os.replace(tmp, a.output)
    if a.json:
        print(json.dumps(out, indent=1, ensure_ascii=False))
        return 0
    for r in out["results"]:
        print(_line(r))
    print()
    for k, v in out["families"].items():
        print(f"  {k:<14} {v['passed']}/{v['total']}")
    print(f"total: {out['passed']}/{out['total']} ({100 * out['rate']:.0f}%)  [scored: {out['src']}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
