"""File writing that never loses data: atomic replace, mode kept."""

from __future__ import annotations

import os
import stat
import tempfile


def atomic_write(path: str, data: bytes, like: str | None = None) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and
    ``os.replace``; the file mode is copied from ``like`` (default: ``path`` if it
    exists).  Raises ``OSError`` on failure, leaving ``path`` as it was."""
    like = like or (path if os.path.exists(path) else None)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".ascendify-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if like:
            os.chmod(tmp, stat.S_IMODE(os.stat(like).st_mode))
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
