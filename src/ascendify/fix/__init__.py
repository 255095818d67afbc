"""Rewriting: apply the fixes that scan findings carry, with LibCST."""
