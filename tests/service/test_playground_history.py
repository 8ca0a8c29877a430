"""The playground's session history in a real headless Chromium: the last requests of each tab, newest first, kept
in the browser tab across reloads (never the key), a click restores the form and runs it again."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from norma.store import RuleStore
from tests.service._browser import by_id, needs_chromium, open_playground, playground_site, wait_for

pytestmark = [pytest.mark.slow, needs_chromium]


@pytest.fixture(scope="module")
def site(store: RuleStore, examples: Path) -> Iterator[str]:
    with playground_site(store, examples) as url:
        yield url


def _entries(driver: Any, tab: str, part: str = "label") -> list[str]:
    """The history's labels (or ``meta``) as shown, read in one go (the list is redrawn after each request)."""
    script = "return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent)"
    return list(driver.execute_script(script, f"#{tab}-history .history-{part}"))


def _history_buttons(driver: Any, tab: str) -> list[Any]:
    return list(driver.find_elements("css selector", f"#{tab}-history .history-entry"))


def _match(driver: Any, message: str) -> None:
    """Match ``message`` and wait until the request is done (the output no longer ``busy``) and the history shows it
    on top: a message repeated is already on top before its request ends."""
    box = by_id(driver, "match-message")
    box.clear()
    box.send_keys(message)
    by_id(driver, "match-run").click()
    wait_for(
        driver,
        lambda d: (
            "busy" not in (by_id(d, "match-out").get_attribute("class") or "").split()
            and _entries(d, "match")[:1] == [message]
        ),
    )


def test_each_tab_keeps_its_last_requests_newest_first(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    assert _entries(browser, "match") == []
    assert by_id(browser, "match-history-empty").is_displayed()
    _match(browser, "I lost my card")
    _match(browser, "good morning")
    assert _entries(browser, "match") == ["good morning", "I lost my card"]
    assert not by_id(browser, "match-history-empty").is_displayed()
    meta = _entries(browser, "match", "meta")
    assert meta[1].startswith("1 matched")
    assert _entries(browser, "audit") == []  # one history per tab
    stored = browser.execute_script("return sessionStorage.getItem('norma-history-match')")
    assert acme_key not in stored  # the form's values, never the key
    assert [entry["form"]["message"] for entry in json.loads(stored)] == ["good morning", "I lost my card"]


def test_history_survives_a_reload_and_a_click_runs_it_again(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    _match(browser, "I lost my card")
    _match(browser, "good morning")
    open_playground(browser, site, acme_key, fresh=False)  # a reload of the same browser tab
    assert _entries(browser, "match") == ["good morning", "I lost my card"]
    by_id(browser, "match-message").clear()
    _history_buttons(browser, "match")[1].click()
    rows = wait_for(browser, lambda d: d.find_elements("css selector", "#match-results tbody tr"))
    assert rows[0].find_element("css selector", "td").text == "lost-card"
    assert by_id(browser, "match-message").get_attribute("value") == "I lost my card"
    assert _entries(browser, "match") == ["I lost my card", "good morning"]  # re-run: on top, not twice


def test_the_same_request_twice_is_one_entry_and_clear_empties(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    _match(browser, "I lost my card")
    _match(browser, "I lost my card")
    assert _entries(browser, "match") == ["I lost my card"]
    by_id(browser, "match-history-clear").click()
    assert _entries(browser, "match") == []
    assert browser.execute_script("return sessionStorage.getItem('norma-history-match')") is None


def test_history_keeps_ten_entries(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    for index in range(12):
        _match(browser, f"hi there number {index}")
    assert _entries(browser, "match") == [f"hi there number {i}" for i in range(11, 1, -1)]


def test_audit_and_names_histories_restore_their_forms(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    browser.find_element("css selector", "button[data-tab=audit]").click()
    by_id(browser, "audit-run").click()
    wait_for(browser, lambda d: _entries(d, "audit"))
    assert _entries(browser, "audit") == ["Implementa la clase FlowShaper de NetShaper"]
    browser.find_element("css selector", "button[data-tab=names]").click()
    by_id(browser, "names-run").click()
    wait_for(browser, lambda d: _entries(d, "names"))
    assert _entries(browser, "names") == ["John Smith \u00d7 5"]
    name = by_id(browser, "names-name")
    name.clear()
    name.send_keys("Maria Lopez")
    _history_buttons(browser, "names")[0].click()
    wait_for(browser, lambda d: by_id(d, "names-name").get_attribute("value") == "John Smith")
    browser.find_element("css selector", "button[data-tab=audit]").click()
    by_id(browser, "audit-output").clear()
    _history_buttons(browser, "audit")[0].click()
    wait_for(browser, lambda d: by_id(d, "audit-output").get_attribute("value").startswith("Creo la clase"))
    wait_for(browser, lambda d: by_id(d, "audit-verdict").text == "FAIL")
