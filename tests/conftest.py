import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The reference data the tests read: a vendored subset of the research folder, in its layout
# (tests/data/reference/README.md gives provenance).  Never ../shared: a clean clone runs the same.
REFERENCE = os.path.join(ROOT, "tests", "data", "reference")
SHARED = REFERENCE  # old name, kept for tests that import it


def reference_path(*parts: str) -> str:
    """Path of a vendored reference file (``reference_path("data", "profiler", "x.csv")``);
    fails the test, never skips it, when the file is missing."""
    p = os.path.join(REFERENCE, *parts)
    if not os.path.exists(p):
        pytest.fail(f"vendored reference data missing: {os.path.relpath(p, ROOT)} "
                    "(see tests/data/reference/README.md; restore it from git)", pytrace=False)
    return p


def full_reference_dir():
    """The full research folder (``reference/``, ~15 MB), for the tests that rebuild the package
    data from it: ``$ASCENDIFY_REFERENCE``, ``../shared/reference`` next to the checkout, or
    ``/work/shared/reference``; None when none holds ``data/``."""
    for p in (os.environ.get("ASCENDIFY_REFERENCE", ""), os.path.join(ROOT, "..", "shared", "reference"),
              "/work/shared/reference"):
        if p and os.path.isdir(os.path.join(p, "data")):
            return os.path.abspath(p)
    return None


@pytest.fixture(autouse=True)
def _no_inherited_columns(monkeypatch):
    """pytest-xdist's workers see COLUMNS=80 (seen here in every worker; not outside xdist), so under `make test` (-n 2) every
    text report laid out for an 80-column terminal and long lines moved to a list layout; outside xdist
    COLUMNS is unset.  Tests that need a width set it themselves (tests/test_cli_width.py)."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    """Every test gets its own cache folder; no test reads another's results."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("NO_COLOR", "1")


def mode_of(path) -> int:
    """The permission bits of ``path`` (``0o644``)."""
    import stat

    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    """Call it to set the process umask for one test; the old one is restored after."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda m: os.umask(m)
    os.umask(old)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Say when the browser tests did not run: pytest's summary only counts skips, so `make test`
    on a machine without chromium would pass without a word that the report was never opened."""
    browser = []
    for rep in terminalreporter.stats.get("skipped", []):
        if "browser" in getattr(rep, "keywords", {}) or "test_browser.py" in getattr(rep, "nodeid", ""):
            reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) and len(rep.longrepr) == 3 else "skipped"
            browser.append(reason.replace("Skipped: ", ""))
    if browser:
        reasons = ", ".join(sorted(set(browser)))
        config._ascendify_browser_note = (f"NOTE: {len(browser)} browser test(s) skipped ({reasons}): the HTML report was not "
                                          "checked in a browser; install chromium and playwright (pip install playwright) to run them")


def pytest_unconfigure(config):
    """The browser note (above) as the last line, under pytest's own summary line."""
    note = getattr(config, "_ascendify_browser_note", None)
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if note and tr is not None:
        tr.write_line(note, yellow=True)
