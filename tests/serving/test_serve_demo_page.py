"""The demo page at ``/``, driven by a real headless Chromium (Debian's ``chromium``, installed by
scripts/setup.sh, through Playwright's ``executable_path``: nothing downloads a browser)."""

from __future__ import annotations

import json
from pathlib import Path

from support.serving import ServerProcess, predict_file

CHROMIUM = Path("/usr/bin/chromium")


def test_the_demo_page_shows_the_prediction_and_the_servers_error(drug_archive, tmp_path):
    from playwright.sync_api import sync_playwright

    assert CHROMIUM.exists(), f"{CHROMIUM} is missing: run scripts/setup.sh --tests as root (apt-get install chromium)"
    review = json.loads(drug_archive.validation.read_text().splitlines()[3])
    expected = predict_file(drug_archive.archive, [{"text": review["text"]}], tmp_path / "predict")[0]
    with ServerProcess(drug_archive.archive, tmp_path / "server") as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            page = browser.new_page()
            page.goto(server.url + "/")
            page.wait_for_selector("body[data-ready=true]", timeout=30_000)
            assert page.locator("#fields textarea").count() == 1  # one input per field of the reader

            page.fill("#field-text", review["text"])
            page.click("#submit")
            page.wait_for_selector("#result:not([hidden])", timeout=30_000)
            assert page.inner_text("#label") == expected["label"]
            assert page.locator("#probs tbody tr").count() == len(expected["probs"])
            assert page.locator("#error").is_hidden()

            page.fill("#field-text", "")
            page.click("#submit")
            page.wait_for_selector("#error:not([hidden])", timeout=30_000)
            message = page.inner_text("#error")
            assert "422" in message and '"text" is empty' in message, message
            assert page.locator("#result").is_hidden()
        finally:
            browser.close()
        assert server.stop() == 0
