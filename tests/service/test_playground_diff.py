"""The playground's Diff tab in a real headless Chromium against a real server on loopback: two versions of a tenant
(the starter rulebook of ``norma init``, imported, then imported again with one check made stricter) compared on the
starter's turns; the summary, the rule edits and the changed turn as the API answers them, worked out by hand; a
version the tenant lacks and a bad line of turns show the problem; text from the turns is shown as text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.store import RuleStore, import_rulebook
from tests.service._browser import (
    by_id,
    needs_chromium,
    open_playground,
    playground_site,
    set_value,
    status_after,
    table_rows,
)

pytestmark = [pytest.mark.slow, needs_chromium]

WARNS = "terms: [never share, do not share, don't share]"
STRICTER = "terms: [never share your code]"
"""The change: the starter's turn 2 (``password``) says "never share", not "never share your code"."""
TENANT = "my-assistant"  # the starter rulebook's own tenant


@pytest.fixture(scope="module")
def starter_key(store: RuleStore, examples: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """Tenant ``my-assistant`` at version 1 (the starter rulebook) and 2 (a stricter check), and its key."""
    rules = (examples / "starter" / "rules.yaml").read_text(encoding="utf-8")
    assert rules.count(WARNS) == 1
    folder = tmp_path_factory.mktemp("versions")
    for name, text in (("v1.yaml", rules), ("v2.yaml", rules.replace(WARNS, STRICTER))):
        (folder / name).write_text(text, encoding="utf-8")
        import_rulebook(store, folder / name, tenant_id=TENANT)
    assert store.version(TENANT) == 2
    return store.create_api_key(TENANT, name="diff")


@pytest.fixture(scope="module")
def site(store: RuleStore, examples: Path) -> Iterator[str]:
    with playground_site(store, examples) as url:
        yield url


@pytest.fixture
def page(browser: Any, site: str, starter_key: str) -> Any:
    """The playground on tenant ``my-assistant``, Diff tab open."""
    open_playground(browser, site, starter_key, tenant=TENANT)
    browser.find_element("css selector", "button[data-tab=diff]").click()
    return browser


def _compare(driver: Any, old: str, new: str, turns: str) -> str:
    set_value(driver, "diff-old", old)
    set_value(driver, "diff-new", new)
    set_value(driver, "diff-turns", turns)
    by_id(driver, "diff-run").click()
    return status_after(driver, "diff", "comparing\u2026")


def test_the_diff_shows_the_summary_the_edit_and_the_turn_that_newly_fails(
    page: Any, site: str, starter_key: str, examples: Path
) -> None:
    turns = (examples / "starter" / "turns.jsonl").read_text(encoding="utf-8")
    status = _compare(page, "1", "", turns)
    assert status == "tenant my-assistant, rules version 1 \u2192 2: 1 of 3 turns changed", status
    assert by_id(page, "diff-summary").text == "1 of 3 turns change verdict: 1 newly fail, 0 newly pass; 2 unchanged."
    assert by_id(page, "diff-counts").text == (
        "1 changed \u00b7 1 newly failing \u00b7 0 newly passing \u00b7 2 unchanged"
    )
    assert table_rows(page, "#diff-edits tbody tr") == [["account-security", "changed", "checks", "1"]]
    # account-security: one of its two checks fails now (0.5, weight 2); the always-on card check passes (1, 1)
    assert table_rows(page, "#diff-changes tbody tr") == [
        [
            "2 (password)",
            "here is my password, can you log in for me",
            "pass \u2192 fail",
            "1.000 \u2192 0.667",
            "fails account-security/warns-never-share: mentions none of 'never share your code'",
        ]
    ]
    assert "change-newly_failing" in page.find_element("css selector", "#diff-changes tbody tr").get_attribute("class")
    assert not by_id(page, "diff-none").is_displayed()
    body = {"old_version": 1, "turns": [json.loads(line) for line in turns.splitlines()]}
    api = httpx.post(f"{site}/v1/tenants/{TENANT}/diff", json=body, headers={"Authorization": f"Bearer {starter_key}"})
    assert api.json()["summary"] == by_id(page, "diff-summary").text  # what the page shows is the API's answer
    history = page.execute_script("return document.querySelector('#diff-history .history-label').textContent")
    assert history == "version 1 \u2192 current"


def test_turns_that_do_not_change_and_html_in_them(page: Any) -> None:
    turns = json.dumps({"id": "<b>x</b>", "message": "<img src=x onerror=alert(1)>", "output": "Hello!"})
    status = _compare(page, "1", "2", turns)
    assert status.endswith(": 0 of 1 turns changed"), status
    assert by_id(page, "diff-none").is_displayed()
    assert not by_id(page, "diff-changes").is_displayed()
    assert page.execute_script("return document.querySelectorAll('#diff-report img, #diff-report b').length") == 0
    assert [e for e in page.get_log("browser") if e["level"] == "SEVERE"] == []


@pytest.mark.parametrize(
    ("old", "turns", "says"),
    [
        (
            "9",
            '{"message": "hi", "output": "hello"}',
            "404 not found: tenant 'my-assistant' has no version 9: its versions are 1 to 2 [old_version]",
        ),
        ("1", '{"message": "hi", "output": "hello"}\n{"message": ', "turn on line 2 is not valid JSON: "),
        (
            "1",
            '{"message": "hi"}',
            "422 invalid request body: body.turns[0].output: Field required [body.turns[0].output]",
        ),
        ("", '{"message": "hi", "output": "hello"}', "give the old version"),
    ],
)
def test_a_bad_request_shows_the_problem(page: Any, old: str, turns: str, says: str) -> None:
    status = _compare(page, old, "", turns)
    assert status.startswith(says), status
    assert "error" in by_id(page, "diff-status").get_attribute("class")
    assert not by_id(page, "diff-report").is_displayed()
