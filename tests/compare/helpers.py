"""Shared helpers for the compare / export CLI tests."""

from __future__ import annotations

import pytest


def run(argv, capsys):
    """Run ``ascendify ARGV`` in-process; return (exit code, stdout, stderr)."""
    from ascendify.cli import main

    with pytest.raises(SystemExit) as e:
        main(argv)
    cap = capsys.readouterr()
    return e.value.code, cap.out, cap.err
