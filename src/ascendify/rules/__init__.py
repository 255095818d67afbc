"""Scan rules: metadata in ``data/*.toml`` (one file per category), checks in ``checks/``."""
