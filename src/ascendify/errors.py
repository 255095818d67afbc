"""Exceptions that the CLI turns into one-line messages (exit code 2)."""

from __future__ import annotations


class AscendifyError(Exception):
    """A user-facing error: the message names the file and what to do."""


class ConfigError(AscendifyError):
    """``[tool.ascendify]`` in pyproject.toml, or a command-line option, is invalid."""
