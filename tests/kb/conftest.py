from __future__ import annotations

import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def reference_dir():
    for p in (os.environ.get("ASCENDIFY_REFERENCE", ""), os.path.join(ROOT, "..", "shared", "reference"),
              "/work/shared/reference"):
        if p and os.path.isdir(os.path.join(p, "data")):
            return os.path.abspath(p)
    return None


@pytest.fixture(scope="session")
def reference():
    d = reference_dir()
    if d is None:
        pytest.skip("reference data (../shared/reference) not available")
    return d
