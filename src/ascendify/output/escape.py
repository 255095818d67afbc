"""Text that every output format can carry, whatever bytes a file name holds.

On POSIX a file name is bytes; Python gives the bytes that are not UTF-8 as lone
surrogates (``b"name_\\xff.py"`` → ``"name_\\udcff.py"``, PEP 383), which no UTF-8
writer accepts.  Each format escapes them its own way:

- JSON: the ``\\udcXX`` escape, which strict parsers read back to the same string
  (``os.fsencode`` gives the original bytes);
- CSV and text: a backslash escape of the byte (``name_\\xff.py``);
- SARIF ``uri``: percent-encoding of the path's bytes (RFC 3986), ``name_%FF.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional
from urllib.parse import quote

_SURROGATE = re.compile("[\ud800-\udfff]")


def text_safe(s: str) -> str:
    """``s`` with undecodable file-name bytes (lone surrogates) as ``\\xNN`` escapes; valid UTF-8."""
    if s.isascii():
        return s
    return _SURROGATE.sub(_byte_escape, s)


def _byte_escape(m: "re.Match[str]") -> str:
    code = ord(m.group())
    return "\\x%02x" % (code - 0xDC00) if 0xDC80 <= code <= 0xDCFF else "\\u%04x" % code


def json_text(obj: Any, indent: Optional[int] = 2) -> str:
    """``json.dumps`` (non-ASCII kept as is) with any lone surrogate written as a ``\\uXXXX``
    escape, so the result is valid UTF-8 that ``json.loads`` reads back exactly."""
    text = json.dumps(obj, indent=indent, ensure_ascii=False)
    if text.isascii():
        return text
    return _SURROGATE.sub(lambda m: "\\u%04x" % ord(m.group()), text)


def _stray(s: str) -> bool:
    """A surrogate that no undecodable byte gives (not U+DC80..U+DCFF)."""
    return any(not 0xDC80 <= ord(c) <= 0xDCFF for c in _SURROGATE.findall(s))


def uri_path(path: str) -> str:
    """A relative path as a URI reference: ``/`` separators, bytes outside the unreserved
    set percent-encoded (a name's undecodable bytes as themselves: ``\\xff`` → ``%FF``)."""
    data = path.replace("\\", "/").encode("utf-8", "surrogateescape" if not _stray(path) else "surrogatepass")
    return quote(data, safe="/")
