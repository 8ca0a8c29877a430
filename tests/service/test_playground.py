"""The playground end to end in a real headless Chromium (Debian's ``chromium`` + ``chromium-driver``, driven by
Selenium): match with the score breakdown, an audit with violations next to the output lines, a names score."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from norma.names import score_record
from norma.service import create_app
from norma.store import RuleStore
from tests.service._server import serve_app
from tests.service.conftest import make_settings

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()),
        reason="needs Debian's chromium and chromium-driver (make install installs them as root)",
    ),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def site(store: RuleStore, examples: Path) -> Iterator[str]:
    app = create_app(make_settings(audit_docs=examples / "audit" / "docs"), store=store)
    with serve_app(app) as url:
        yield url


def _wait(driver: Any, condition: Any, timeout: float = 30) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def _open(driver: Any, url: str, key: str, tenant: str = "acme") -> None:
    from selenium.webdriver.common.by import By

    driver.get("about:blank")
    driver.get_log("browser")  # start each test with an empty console
    driver.get(f"{url}/#key={key}")
    _wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    tenant_box = driver.find_element(By.ID, "tenant")
    tenant_box.clear()
    tenant_box.send_keys(tenant)


def test_key_from_the_url_fragment_is_kept_in_the_tab_only(browser: Any, site: str, acme_key: str) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, site, acme_key)
    assert browser.find_element(By.ID, "api-key").get_attribute("value") == acme_key
    assert "#key" not in browser.current_url


def test_match_shows_the_score_breakdown(browser: Any, site: str, acme_key: str) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, site, acme_key)
    message = browser.find_element(By.ID, "match-message")
    message.clear()
    message.send_keys("help, my wallet with my card in it was stolen")
    browser.find_element(By.ID, "match-run").click()
    rows = _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#match-results tbody tr"))
    cells = [c.text for c in rows[0].find_elements(By.TAG_NAME, "td")]
    assert cells[0] == "lost-card"
    assert cells[1] == "block the card at once"
    similarity, bm25, final = (float(c) for c in cells[2:5])
    assert 0 < similarity <= 1
    assert bm25 >= 0
    assert final > 0
    assert "matched" in browser.find_element(By.ID, "match-status").text


def test_match_error_is_shown_not_thrown(browser: Any, site: str, globex_key: str) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, site, globex_key, tenant="acme")
    browser.find_element(By.ID, "match-run").click()
    status = _wait(
        browser,
        lambda d: (
            d.find_element(By.ID, "match-status").text.startswith("404") and d.find_element(By.ID, "match-status")
        ),
    )
    assert "tenant 'acme' not found" in status.text


def test_audit_shows_violations_next_to_output_lines(browser: Any, site: str, acme_key: str) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, site, acme_key)
    browser.find_element(By.CSS_SELECTOR, "button[data-tab=audit]").click()
    browser.find_element(By.ID, "audit-run").click()
    verdict = _wait(
        browser,
        lambda d: (
            d.find_element(By.ID, "audit-verdict").text in ("PASS", "FAIL", "SKIP")
            and d.find_element(By.ID, "audit-verdict")
        ),
    )
    assert verdict.text == "FAIL"
    lines = browser.find_elements(By.CSS_SELECTOR, "#audit-lines tbody tr")
    assert len(lines) == 8  # the example output's lines, numbered
    assert lines[0].find_elements(By.TAG_NAME, "td")[1].text.startswith("Creo la clase")
    flagged = browser.find_elements(By.CSS_SELECTOR, "#audit-lines tbody tr.flagged")
    other = browser.find_elements(By.CSS_SELECTOR, "#audit-other li")
    texts = [row.text for row in flagged] + [item.text for item in other]
    assert any("IR.0.01" in text for text in texts), texts


def test_names_score_equals_the_library(browser: Any, site: str, acme_key: str) -> None:
    import json

    from selenium.webdriver.common.by import By

    _open(browser, site, acme_key)
    browser.find_element(By.CSS_SELECTOR, "button[data-tab=names]").click()
    browser.find_element(By.ID, "names-run").click()
    final = _wait(
        browser,
        lambda d: d.find_element(By.ID, "names-final").text not in ("-", "") and d.find_element(By.ID, "names-final"),
    )
    labels = json.loads(browser.find_element(By.ID, "names-labels").get_attribute("value"))
    variations = browser.find_element(By.ID, "names-variations").get_attribute("value").split("\n")
    expected = score_record(
        {"name": "John Smith", "variations": [v for v in variations if v.strip()], "labels": labels}, hash_seed=0
    )
    assert float(final.text) == pytest.approx(expected["final"], abs=5e-4)


def test_no_console_errors_and_no_csp_violations(browser: Any, site: str, acme_key: str) -> None:
    _open(browser, site, acme_key)
    entries = browser.get_log("browser")
    severe = [e for e in entries if e["level"] == "SEVERE" and "favicon" not in e["message"]]
    assert severe == []
