"""A log of ``size`` bytes generated as it is read, never held in memory (streaming tests)."""

from __future__ import annotations

import io


class GeneratedLog(io.RawIOBase):
    """Subclasses give ``_next()``: the next chunk of lines (bytes); ``self.n`` counts chunks."""

    def __init__(self, size: int):
        self.size, self.pos, self.n, self.pending = size, 0, 0, b""

    def readable(self):
        return True

    def _next(self) -> bytes:  # pragma: no cover - abstract
        raise NotImplementedError

    def read(self, n=-1):
        out, got = [], 0
        while got < n and self.pos < self.size:
            if not self.pending:
                self.n += 1
                self.pending = self._next()
            take = self.pending[: n - got]
            self.pending = self.pending[len(take):]
            out.append(take)
            got += len(take)
            self.pos += len(take)
        return b"".join(out)
