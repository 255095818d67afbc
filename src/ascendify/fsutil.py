"""File writing that never loses data: atomic replace, mode kept; path containment."""

from __future__ import annotations

import os
import stat
import tempfile


def is_within(path: str, folder: str) -> bool:
    """True if ``path`` is ``folder`` or lies inside it, comparing whole path components
    (``out/x`` is inside ``out``; ``outputs/x`` is not).  Both are made absolute, not
    resolved: pass ``os.path.realpath`` values to compare real locations."""
    p, f = os.path.abspath(path), os.path.abspath(folder)
    try:
        return os.path.commonpath([p, f]) == f
    except ValueError:  # different drives (Windows)
        return False


def display_path(path: str, cwd: str | None = None) -> str:
    """``path`` as ascendify shows it: relative to ``cwd`` (default: the current folder) when
    inside it, else absolute."""
    ap = os.path.abspath(path)
    try:
        r = os.path.relpath(ap, cwd or os.getcwd())
    except ValueError:  # another drive (Windows)
        return ap
    return ap if r.startswith("..") else r


def _default_mode() -> int:
    """The mode ``open(path, "w")`` would give a new file (0o666 less the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: str, data: bytes, like: str | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and
    ``os.replace``; the file mode is copied from ``like`` (default: ``path`` if it
    exists; a new file gets the mode ``open`` would give it).  A symlink ``path`` is
    written through: its target is replaced and the link kept.  Raises ``OSError``
    on failure, leaving ``path`` as it was."""
    if os.path.islink(path):
        path = os.path.realpath(path)
    like = like or (path if os.path.exists(path) else None)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".ascendify-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, stat.S_IMODE(os.stat(like).st_mode) if like else _default_mode())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
