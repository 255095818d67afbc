"""The human-readable reason a CANN / ACL / HCCL / ATC message gives for itself.

Wrapper codes (``EZ9999``, ``E89999``, ``EE1001``, ``EE9999``, ACL ``561002``,
torch_npu ``ERR01100``) say *that* something failed; the text printed with them
says *what*: ``The parameter 'x' must be configured in ascending order``,
``op[Foo], ub overflow``, ``Reason: ModelCheckCompatibility failed``.  The
scanner reads the lines that follow a code (CANN prints its message as
``EZ9999: [PID: n] <time> <text>[FUNC:..][FILE:..][LINE:..]`` continuation
lines, then an indented ``TraceBack``), and :func:`extract` turns one line into
that text, or ``""`` when the line carries no reason of its own (``Inner
Error!``, ``call acl api failed``, ``The Inner error is reported as above``,
a bare frame).  The engine makes the reason evidence of its own: it is shown
with the finding and, when no catalogue entry explains the block, it *is* the
finding (``reason``), instead of a generic "inner error".
"""

from __future__ import annotations

import re

MAX_REASON = 300
UNREAD = "No catalogue entry names this reason; the text itself says which rule, argument, shape or resource was violated."
"""What a reason finding says when nothing reads its reason (dropped when a message-phrase rule of reasons.toml does)."""

_PREFIX = [
    re.compile(r"^\s*\((?:VllmWorker|EngineCore|Worker|RayWorker|APIServer)[^)]{0,80}\)\s*"),  # vLLM process prefixes
    re.compile(r"^\s*(?:INFO|ERROR|WARNING|WARN|DEBUG|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+\[[^\]]{1,80}\]\s*"),
    re.compile(r"^\s*\[(?:Error|ERROR|Warning)\]\s*:\s*"),
    re.compile(r"^\s*\[(?:ACL )?(?:ERROR|WARNING|ERRO|EVENT)\]\s*"),
    re.compile(r"^\s*\[?[A-Z_]{2,12}\(\d{1,8},[^)]{0,60}\):\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d(?:\.\d{1,3}){0,2}\]?\s*"
               r"(?:\[[^\]]{1,80}\])?\s*(?:\d{1,8}\s+)?(?:[A-Za-z_][\w:~]{0,80}[:\]]\s)?"),  # plog: MODULE(pid,proc):time [file.cc:12]tid func: (MindSpore: "func] ")
    re.compile(r"^\s*(?:E[0-9A-Z][0-9]{4}|EI\d{4})\s*[:：]\s*"),
    re.compile(r"^\s*E[0-9A-Z][0-9]{4}\s*(?=\[PID:)"),  # "EZ9999[PID: n] <time> (EZ9999): <text>"
    re.compile(r"^\s*\(E[0-9A-Z][0-9]{4}\)\s*[:：]\s*"),
    re.compile(r"^\s*[A-Z][A-Za-z]+(?:_[A-Za-z]+)+\((?:E[0-9A-Z][0-9]{4}|EI\d{4})\)\s*[:：]\s*"),  # AclNN_Parameter_Error(EZ1001): text
    re.compile(r"^\s*\[PID:\s*\d{1,9}\]\s*"),
    re.compile(r"^\s*\d{4}-\d\d-\d\d[- ]\d\d:\d\d:\d\d(?:[.,:]\d{1,6}){0,3}\s*"),
    re.compile(r"^\s*\(PID:\d{1,9}, Device:-?\d{1,4}, RankID:-?\d{1,6}\)\s*"),
    # "[2025-11-25 17:23:11,888] [249] [281471718846752] [llm] [ERROR] [logging.py-348] : " (MindIE, Python logging)
    re.compile(r"^\s*\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\]\s*(?:\[[^\]]{0,60}\]\s*){0,8}(?:[:：-]\s+)?"),
    # "2025-11-25 17:23:11,888 - name - ERROR - " / "... | ERROR | module:fn:12 - " (Python logging, loguru)
    re.compile(r"^\s*(?:-|\|)?\s*(?:[\w.]{1,60}\s*[-|]\s*)?(?:ERROR|CRITICAL|FATAL)\s*[-|:]\s*(?:[\w.:<>-]{1,80}\s+-\s+)?"),
]
_SRC_FRAME = re.compile(r"^[~./]?[\w./~+-]*\.(?:cc|cpp|cxx|c|h|hpp):\d+(?::\d+)?\s+(?:(?:[\w:<>*&]+\s+){0,3}[\w:~<>]+"
                        r"\([^()]{0,300}\)(?:\s*const)?(?:\s*\[with [^\]]{0,300}\])?\s*)?")
"""A C++ source location and function signature printed before the message (onnxruntime's
``cann_call.cc:137 bool onnxruntime::CannCall(ERRTYPE, ...) [with ERRTYPE = int; bool THRW = true] CANN failure ...``)."""
_TAIL = re.compile(r"\s*(?:\[(?:FUNC|FILE|LINE|THREAD|PID)\s*:[^\]]{0,200}\]\s*)+\.?\s*$")
_TAIL_ANY = re.compile(r"\[(?:FUNC|FILE|LINE|THREAD)\s*:[^\]]{0,200}\]")
_SUFFIX_PTA = re.compile(r"\s*\[ERROR\]\s*\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d.{0,80}ERR\d{5}.*$")
_REASON = re.compile(r"(?:\bReason\s*[:：]|\breason is\b[:：]?|\breason\s*[:：=])\s*(.+)", re.IGNORECASE)
_CODE_AT = re.compile(r"(?:^|\s)(E[0-9A-Z][0-9]{4}|EI\d{4})\s*[:：]")

GENERIC = (
    "inner error", "inner error!", "the inner error is reported as above", "traceback (most recent call last)",
    "call acl api failed", "pta call acl api failed", "ops call acl api failed", "call aclnn api failed",
    "internal error", "unknown error", "error", "failed", "the argument is invalid", "the argument is invalid.",
    "kernel task happen error", "rtkernellaunch failed", "rtstreamsynchronize failed", "synchronize stream failed",
    "rtstreamsynchronizewithtimeout execute failed", "launch kernel failed", "execute failed", "run failed",
    "please check", "no reason", "none", "%s", "dist call hccl api failed", "runtime error",
    "check param failed", "tiling failed", "kernel launch failed", "op tiling failed",
)
_GENERIC_START = (
    "the inner error is reported as above", "inner error", "traceback", "file \"", "[pid:", "process exits",
    "the process exits", "please refer", "for more details", "see the", "solution:", "possible cause",
    "call acl api failed", "pta call acl api failed", "[error]", "atc run failed", "check whether", "check if",
    "please check", "check the", "execute:", "unknown error occurred",
    "since the operator is called asynchronously", "if you want to get the accurate stacktrace",
)
_WORD = re.compile(r"[A-Za-z]{3,}")
_ERR_START = re.compile(r"^\s*ERR\d{5}\b")
_CALL_FAILED = re.compile(r"(?i)^(?:[\w.]+:\s*)?(?:(?:NPU|HCCL|ACL|DVPP|AICPU|OPS|PTA)\s+function error:\s*)?(?:call\s+)?"
                          r"[\w:.]+(?:\([^)]{0,200}\))?,?\s+(?:execute\s+)?failed,?\s*(?:error code is|ret(?:code)?\s*[=:]?|"
                          r"error\s*[=:])\s*-?\d+$|^(?:[\w.]+:\s*)?(?:NPU|HCCL|ACL)\s+function error:.{0,240}error code is\s*-?\d+$")
"""``NPU function error: call aclnnFoo failed, error code is 561002``, ``aclnnFoo failed, ret = 161002``: which call
failed with which code, no reason of its own (the reason, when printed, is on the lines after it)."""


def strip(text: str) -> str:
    """``text`` without the log / CANN prefixes (level, plog header, code, ``[PID: n]``, time) and the
    ``[FUNC:..][FILE:..][LINE:..]`` tail."""
    s = text.strip()
    for _ in range(4):
        before = s
        for rx in _PREFIX:
            s = rx.sub("", s, count=1)
        if s == before:
            break
    s = _SRC_FRAME.sub("", s, count=1)
    s = _SUFFIX_PTA.sub("", s)
    s = _TAIL.sub("", s)
    s = _TAIL_ANY.sub(" ", s)
    return " ".join(s.split()).strip(" .;,")


def is_generic(s: str) -> bool:
    low = s.lower().strip(" .!:;,")
    if not low or low in GENERIC or len(_WORD.findall(low)) < 2 or _ERR_START.match(s):
        return True
    if len(low.split()) < 2 or _CALL_FAILED.match(s.strip(" .!;,")):
        return True  # one identifier ("npu_fused_infer_attention_score:"), or "call X failed, error code is N"
    return low.startswith(_GENERIC_START)


def extract(text: str) -> str:
    """The reason one line gives, in plain words (at most ``MAX_REASON`` chars), or ``""``.

    ``Reason: X`` / ``the reason is X`` wins; otherwise the message text after a
    CANN code or a plog header, when it says more than "inner error"."""
    m = _REASON.search(text)
    if m:
        r = strip(m.group(1))
        if not is_generic(r):
            return r[:MAX_REASON]
    s = strip(text)
    if is_generic(s):
        return ""
    if s.startswith(("Traceback", "File ", "During handling", "The above exception")):
        return ""
    return s[:MAX_REASON]


_DETAIL = re.compile(r"\bdetail\s*[:：]\s*(.+)", re.IGNORECASE)
_ADVICE = re.compile(r"(?i)(?:\bplease\b[,:]?\s*(?:try\s+(?:to\s+)?)?|\btry\s+to\s+|\byou\s+(?:can|may|should|need\s+to|must)\s+"
                     r"(?:try\s+(?:to\s+)?)?|\bconsider\s+|\bsuggest(?:ion)?s?\s*(?:to\s+)?[:：]?\s*)"
                     r"((?:decrease|reduce|lower|increase|raise|enlarge|set|unset|use|install|reinstall|upgrade|downgrade|update|export|"
                     r"add|remove|disable|enable|pass|specify|change|limit|adjust|make sure|ensure)\b(?:[^.;\n]|\.(?=\S)){3,200})")
"""The advice a message gives itself (``Please try to decrease `maxPrefillTokens` in config.json``): an action verb
after "please", "try to", "you can/should", "consider"."""


def advice(text: str) -> str:
    """The action the message itself advises, in its own words (``decrease `maxPrefillTokens` in config.json of
    mindie-service``), or ``""`` ("please check the log" is no advice: it names no action on a setting)."""
    m = _ADVICE.search(text)
    if not m:
        return ""
    a = " ".join(m.group(1).split()).rstrip(" .,;:")
    return a[:MAX_REASON]


def advice_lead(text: str) -> str:
    """The sentence that puts the message's own :func:`advice` first in a fix (``"Do what the message itself advises:
    …. "``), or ``""``."""
    a = advice(text)
    return f"Do what the message itself advises: {a}. " if a else ""


def explicit(text: str) -> bool:
    """The text gives its reason in a field of its own (``Reason:``, ``the reason is``, ``detail:``)."""
    m = _REASON.search(text) or _DETAIL.search(text)
    return bool(m) and not is_generic(strip(m.group(1)))


def _words(s: str) -> set:
    return {w.lower() for w in _WORD.findall(s)} - {"the", "and", "for", "with", "was", "has", "not"}


def covers(template: str, reason: str) -> bool:
    """The message template (``%s`` placeholders) already says the reason: most of its words are the template's."""
    t = _words(template.replace("%s", " "))
    r = _words(reason)
    return bool(t) and bool(r) and len(r & t) >= 0.6 * len(r)


_CONT = re.compile(r"^(?:\s+\S|\s*(?:E[0-9A-Z][0-9]{4}|EI\d{4})\s*[:：]|\s*\[PID:|\s*\[(?:ACL )?ERROR\])|\[FUNC:|\[FILE:|"
                   r"\b[Rr]eason\s*[:：]|\bthe reason is\b")


_NOT_CONT = re.compile(r"\b(?:loss|Loss|grad[_ ]norm|iteration|lr|learning_rate|it/s|tokens/s|throughput)\b|\| |%\|| INFO | DEBUG |"
                       r"^\s*(?:INFO|DEBUG|WARNING)\b")
"""Ordinary log lines printed after a CANN message (metric rows, progress bars, INFO lines) are not its continuation."""


_RULE = re.compile(r"(?i)\b(?:should|must|shall)(?: not)? (?:be|have|equal|match|align|aligned|support|satisfy|greater|less|"
                   r"smaller|larger|contain|in)\b|\bbut (?:got|get|is|was|received)\b|\bexpected\b[^.]{0,60}\b(?:got|but|actual)\b|"
                   r"\bnot (?:supported|support|aligned)\b|\bexceeds?\b|\bout of range\b|\bis invalid\b|\binvalid value\b")
"""A plain sentence that states a rule and how the input broke it (``block_size should aligned to 16, but got 1``):
the kernel's own reason, printed on a line of its own after the code line."""


def continuation(text: str, following: bool = False) -> bool:
    """The line looks like the continuation of a CANN message (indented, a code or ``[PID:`` first, a
    ``[FUNC:..]`` tail, a ``Reason:`` field), not an ordinary log line printed after it.  ``following``: the line
    comes right after a code line; then a plain sentence stating a rule (:data:`_RULE`) continues it too."""
    if _NOT_CONT.search(text):
        return False
    if text.lstrip().startswith(("{", "File \"", "Traceback")):
        return False
    if _CONT.search(text):
        return True
    return following and bool(_RULE.search(text)) and len(_WORD.findall(text)) >= 3


def code_of(text: str) -> str:
    """The CANN code a continuation line starts with (``EZ9999``), or ``""``."""
    m = _CODE_AT.search(text[:200])
    return m.group(1) if m else ""


def exception_reason(etype: str, message: str) -> str:
    """The reason a Python exception's message gives (its torch_npu ``[ERROR] … ERR…`` suffix cut), or ``""``."""
    msg = _SUFFIX_PTA.sub("", " ".join(message.split()))
    m = _REASON.search(msg) or _DETAIL.search(msg)
    if m and not is_generic(strip(m.group(1))):
        return strip(m.group(1))[:MAX_REASON]
    msg = strip(msg)
    return "" if is_generic(msg) else msg[:MAX_REASON]
