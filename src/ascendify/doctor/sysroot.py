"""Read files of a system that may live under another root (``--root DIR``).

Absolute symlinks inside the root (``ascend-toolkit/latest -> /usr/local/Ascend/…``)
are re-rooted, so a container image or an unpacked tarball is read as that
system would see it.  Every read returns text or a one-line error; nothing raises.
"""

from __future__ import annotations

import glob
import os
from typing import List, Optional, Tuple

MAX_BYTES = 1 << 20  # version files are tiny; refuse to slurp anything huge


class SysRoot:
    """Path mapping for ``--root``; ``SysRoot("/")`` is the live system."""

    def __init__(self, root: str = "/") -> None:
        self.root = os.path.abspath(root or "/")
        self.is_live = self.root == "/"

    def host(self, path: str) -> str:
        """Host path of an absolute path on the target system (symlinks re-rooted)."""
        if self.is_live:
            return path
        return self._resolve(path)

    def _resolve(self, path: str, depth: int = 0) -> str:
        parts = [p for p in os.path.normpath("/" + path.lstrip("/")).split("/") if p]
        cur = self.root
        i = 0
        while i < len(parts):
            nxt = os.path.join(cur, parts[i])
            if os.path.islink(nxt) and depth < 40:
                try:
                    target = os.readlink(nxt)
                except OSError:
                    return os.path.join(nxt, *parts[i + 1:])
                if os.path.isabs(target):
                    rest = "/".join(parts[i + 1:])
                    return self._resolve(target + ("/" + rest if rest else ""), depth + 1)
                rel_target = os.path.normpath(os.path.join(self.display(cur), target))
                rest = "/".join(parts[i + 1:])
                return self._resolve(rel_target + ("/" + rest if rest else ""), depth + 1)
            cur = nxt
            i += 1
        return cur

    def display(self, host_path: str) -> str:
        """The target-system path for a host path (strip the root)."""
        if self.is_live:
            return host_path
        rel = os.path.relpath(host_path, self.root)
        return "/" if rel == "." else "/" + rel

    def exists(self, path: str) -> bool:
        return os.path.exists(self.host(path))

    def isdir(self, path: str) -> bool:
        return os.path.isdir(self.host(path))

    def glob(self, pattern: str) -> List[str]:
        """Target-system paths matching a glob (pattern is a target-system path)."""
        if self.is_live:
            return sorted(glob.glob(pattern))
        # Resolve the non-wildcard prefix (it may contain symlinks), glob below it.
        parts = pattern.split("/")
        k = next((i for i, p in enumerate(parts) if any(c in p for c in "*?[")), len(parts))
        prefix = "/".join(parts[:k]) or "/"
        host_prefix = self.host(prefix)
        rest = "/".join(parts[k:])
        hits = glob.glob(os.path.join(host_prefix, rest)) if rest else (
            [host_prefix] if os.path.exists(host_prefix) else [])
        out = []
        for h in hits:
            tail = os.path.relpath(h, host_prefix)
            out.append(os.path.normpath(prefix.rstrip("/") + "/" + tail) if tail != "." else prefix)
        return sorted(out)

    def read_text(self, path: str) -> Tuple[Optional[str], Optional[str]]:
        """``(text, None)`` or ``(None, error)``; error is one line naming the file.

        Text is UTF-8 (invalid bytes replaced); NUL bytes mean a binary/garbled file.
        """
        host = self.host(path)
        try:
            with open(host, "rb") as fh:
                raw = fh.read(MAX_BYTES + 1)
        except FileNotFoundError:
            return None, f"{path}: not found"
        except PermissionError:
            return None, f"{path}: permission denied (run as a user who can read it, e.g. the install user)"
        except IsADirectoryError:
            return None, f"{path}: is a directory, expected a file"
        except OSError as exc:
            return None, f"{path}: cannot read ({exc.strerror or exc})"
        if len(raw) > MAX_BYTES:
            return None, f"{path}: larger than {MAX_BYTES} bytes, not a version file"
        if b"\x00" in raw:
            return None, f"{path}: binary or corrupted content (NUL bytes); reinstall the package that owns it"
        return raw.decode("utf-8", errors="replace"), None
