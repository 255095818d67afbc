"""The engine tests of tests/diagnose run without the packaged known-issue records (collected data that grows
while the engine's behaviour must stay fixed); tests of the known-issue layer give their own seed records
(``use_known_issues``), and tests/diagnose/test_known_issues_data.py checks the packaged records."""

from __future__ import annotations

import pytest

from ascendify.diagnose import known_issues as ki


@pytest.fixture(autouse=True)
def _no_packaged_known_issues(request, monkeypatch):
    if request.node.get_closest_marker("packaged_known_issues"):
        return
    empty = ki.Index(ki.build([]))
    monkeypatch.setattr(ki, "load", lambda: empty)


@pytest.fixture
def use_known_issues(monkeypatch):
    """``use_known_issues(records)``: diagnose matches against these records only."""

    def use(records):
        idx = ki.from_records(records)
        monkeypatch.setattr(ki, "load", lambda: idx)
        return idx

    return use


def pytest_configure(config):
    config.addinivalue_line("markers", "packaged_known_issues: run with the packaged known-issue index")
