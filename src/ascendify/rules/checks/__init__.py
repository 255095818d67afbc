"""Check implementations, one module per category; each registers with ``registry.check``."""
