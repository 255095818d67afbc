"""File writing that never loses data: atomic replace, mode kept; path containment."""

from __future__ import annotations

import errno
import os
import stat
import tempfile

READ_ONLY = "read-only file"  # the reason atomic_write(keep_read_only=True) gives for a file it refuses to replace


def is_read_only(path: str) -> bool:
    """True if ``path`` exists and its user may not write it: ``os.access(path, W_OK)`` is false, or
    (for root, whom ``os.access`` lets write anything) its mode has no write bit for the owner.
    A file the user made read-only (``chmod a-w``) must not be rewritten behind its back by a
    temporary file and ``os.replace``, which only needs the folder to be writable."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    return not os.access(path, os.W_OK) or not st.st_mode & stat.S_IWUSR


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


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _default_mode(mode: int = 0o666) -> int:
    """The mode ``open(path, "w")`` would give a new file (``mode`` less the umask;
    ``mode=0o777`` for an executable script)."""
    return mode & ~_umask()


def file_mode(path: str, like: str | None = None, mode: int | None = None) -> int:
    """The permission bits a file written to ``path`` gets: those of ``like`` (default:
    ``path`` itself, when it exists), else ``0o666`` (``mode``, when given) less the umask.
    With ``mode`` given the result is also never less than ``mode`` less the umask, so
    an executable script rewritten over an old non-executable copy becomes executable."""
    like = like or (path if os.path.exists(path) else None)
    want = _default_mode(0o666 if mode is None else mode)
    if like:
        have = stat.S_IMODE(os.stat(like).st_mode)
        return have | want if mode is not None else have
    return want


def replace_file(tmp: str, path: str, like: str | None = None, mode: int | None = None) -> None:
    """``os.replace(tmp, path)`` after giving ``tmp`` the mode :func:`file_mode` picks
    (a ``tempfile.mkstemp`` file is ``0o600``; the result must not be)."""
    os.chmod(tmp, file_mode(path, like, mode))
    os.replace(tmp, path)


def atomic_write(path: str, data: bytes, like: str | None = None, mode: int | None = None,
                 keep_read_only: bool = False) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and
    ``os.replace``; the file mode is copied from ``like`` (default: ``path`` if it
    exists); a new file gets the mode ``open`` would give it (``0o666`` less the umask;
    ``mode=0o777`` for a script: ``0o777`` less the umask, see :func:`file_mode`).
    A symlink ``path`` is written through: its target is replaced and the link kept.
    With ``keep_read_only`` an existing file that :func:`is_read_only` raises ``PermissionError``
    (``strerror`` :data:`READ_ONLY`) instead of being replaced (``fix --write`` on the user's own files).
    Raises ``OSError`` on failure, leaving ``path`` as it was."""
    if os.path.islink(path):
        path = os.path.realpath(path)
    if keep_read_only and is_read_only(path):
        raise PermissionError(errno.EACCES, READ_ONLY, path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".ascendify-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        replace_file(tmp, path, like, mode)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def stale_output_warning(out_dir: str) -> "str | None":
    """A warning when ``out_dir`` already has files: they are kept, not removed (None if empty)."""
    try:
        if os.path.isdir(out_dir) and os.listdir(out_dir):
            return f"{out_dir} already exists; files in it that are not in the project are kept (remove the folder for a clean copy)"
    except OSError:
        return None
    return None
