from __future__ import annotations

import os

import pytest

from tests.conftest import REFERENCE, full_reference_dir, reference_path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="session")
def reference():
    """The vendored reference subset (tests/data/reference, the research folder's layout)."""
    reference_path("data", "derived", "classification_summary.json")
    return REFERENCE


@pytest.fixture(scope="session")
def full_reference():
    """The full research folder; the tests that rebuild the whole op KB from it fail without it."""
    d = full_reference_dir()
    if d is None:
        pytest.fail("the full research folder (reference/, ~15 MB) was not found: set ASCENDIFY_REFERENCE=PATH/reference "
                    "or put it at ../shared/reference; tools/build_kb.py rebuilds the op KB from it", pytrace=False)
    return d
