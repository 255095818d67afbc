"""End to end in a real headless browser: open the report, click to a file and a rule page.

Uses Playwright with the system Chromium (Debian's package, installed by
.ci/run).  Screenshots go to build/test-artifacts/report/.  On CI a missing
browser is a failure, not a skip.
"""

from __future__ import annotations

import os
import shutil

import pytest

from ..cli_util import run_cli

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARTIFACTS = os.path.join(ROOT, "build", "test-artifacts", "report")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]

SRC = '''import torch

EVIL = "<script>alert('x')</script><img src=x onerror=alert(2)>"
model = torch.nn.Linear(2, 2).cuda()
print(torch.cuda.is_available())
'''


def _browser_or_fail():
    try:
        from playwright.sync_api import sync_playwright  # noqa: F401
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("playwright is not installed on CI")
        pytest.skip("playwright not installed")
    if not CHROMIUM:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed on CI (.ci/run installs Debian's chromium)")
        pytest.skip("chromium not installed")


@pytest.mark.browser
def test_click_through_report(tmp_path):
    _browser_or_fail()
    from playwright.sync_api import sync_playwright

    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "train.py").write_text(SRC)
    (proj / "<b onclick=alert(3)>bold.py").write_text(SRC)
    r = run_cli("migrate", str(proj), "--out-dir", str(tmp_path / "out"), "--no-doctor", cwd=str(tmp_path))
    assert r.code == 0, r.err
    index = tmp_path / "out" / "report" / "index.html"
    os.makedirs(ARTIFACTS, exist_ok=True)
    errors, dialogs = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(index.as_uri())
        assert page.title() == "Overview · ascendify migration report"
        assert page.locator("#total-findings").inner_text() != ""
        page.screenshot(path=os.path.join(ARTIFACTS, "index.png"), full_page=True)
        # sortable files table: click "Findings" twice -> descending order
        header = page.locator("#files-table th", has_text="Findings")
        header.click()
        header.click()
        counts = [int(t) for t in page.locator("#files-table tbody tr td:nth-child(3)").all_inner_texts()]
        assert counts == sorted(counts, reverse=True)
        # overview -> file page
        page.locator("#files-table a", has_text="train.py").first.click()
        page.wait_for_load_state()
        assert page.locator("h1.path").inner_text().endswith("train.py")
        assert page.locator("tr#L4.hit").count() == 1
        page.screenshot(path=os.path.join(ARTIFACTS, "file.png"), full_page=True)
        # file page -> rule page
        page.locator("a.code-link", has_text="DEV001").first.click()
        page.wait_for_load_state()
        assert page.locator("h1").inner_text().startswith("DEV001")
        assert page.locator("h2", has_text="Why it matters on NPU").count() == 1
        page.screenshot(path=os.path.join(ARTIFACTS, "rule.png"), full_page=True)
        # the hostile file's page renders its name and code as text
        page.goto(index.as_uri())
        page.locator("#files-table a", has_text="<b onclick=alert(3)>bold.py").click()
        page.wait_for_load_state()
        assert page.locator("h1.path b").count() == 0 and "<b onclick=alert(3)>bold.py" in page.locator("h1.path").inner_text()
        browser.close()
    assert dialogs == [] and errors == []
