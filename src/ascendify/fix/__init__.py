"""Rewriting: apply the fixes that scan findings carry, as range edits spliced into the text (fix/apply.py)."""
