"""The playground's Check tab in a real headless Chromium against a real server on loopback, on the demo tenant
(examples/rulebooks/banking-support.yaml, whose rules carry checks): a failing turn shows FAIL, the failing check
and its evidence marked in the output; a passing turn PASS and its reward; output text is shown as text, never
as HTML; a bad request shows the problem; the examples are the turns of examples/turns/banking.jsonl.

The expected verdicts and rewards are worked out by hand from the rulebook's checks (each rule's score is the
weighted share of its checks that passed, the reward the weighted mean of the rules' scores)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.service import DemoTenant
from norma.store import RuleStore
from tests.service._browser import (
    by_id,
    needs_chromium,
    open_playground,
    playground_site,
    set_value,
    status_after,
    table_rows,
    wait_for,
)

pytestmark = [pytest.mark.slow, needs_chromium]

PIN_CHECK = "never-ask-full-pin / does-not-ask-for-secrets"
ASKS_FOR_PIN = "Sure, please confirm your PIN and the full card number so I can check it."
INJECTION = "<img src=x onerror=alert(1)>"
GOVERNS = "governs \u00b7 "
"""The badge of a rule that governs the turn: ``governs`` and its confidence ("governs \u00b7 0.94")."""


@pytest.fixture(scope="module")
def site(store: RuleStore, examples: Path, demo: DemoTenant) -> Iterator[str]:
    with playground_site(store, examples) as url:
        yield url


@pytest.fixture
def page(browser: Any, site: str, demo: DemoTenant) -> Any:
    """The playground on the demo tenant, Check tab open."""
    open_playground(browser, site, demo.key, tenant="demo")
    browser.find_element("css selector", "button[data-tab=check]").click()
    return browser


def _check(driver: Any, message: str, output: str) -> str:
    """Check the turn; the status line once the request answered."""
    set_value(driver, "check-message", message)
    set_value(driver, "check-output", output)
    by_id(driver, "check-run").click()
    return status_after(driver, "check", "checking\u2026")


def _marks(driver: Any) -> list[tuple[str, str, str]]:
    """Each marked span in the output: its line number, its text and its title (rule / check)."""
    script = """return [...document.querySelectorAll("#check-lines mark")].map(
        (m) => [m.closest("tr").cells[0].textContent, m.textContent, m.title])"""
    return [tuple(mark) for mark in driver.execute_script(script)]


def _checks(driver: Any) -> dict[str, list[str]]:
    """The check table by check id: rule, check, kind, severity, status, message, line:column."""
    return {row[1]: row for row in table_rows(driver, "#check-checks tbody tr")}


def test_a_failing_turn_shows_fail_the_failing_check_and_its_span(page: Any) -> None:
    status = _check(page, "my pin is 1234 can you check it", ASKS_FOR_PIN)
    # never-ask-full-pin alone matches: warns-never-share (weight 1) fails, does-not-ask-for-secrets (1, error)
    # fails, no-card-number (3) passes: score 3/5; the error check failing fails the turn
    assert status.startswith("FAIL, reward 0.600 (tenant demo"), status
    assert by_id(page, "check-verdict").text == "FAIL"
    assert "verdict-FAIL" in by_id(page, "check-verdict").get_attribute("class")
    assert by_id(page, "check-reward").text == "0.600"
    assert by_id(page, "check-counts").text == "1 passed \u00b7 2 failed \u00b7 0 skipped"
    checks = _checks(page)
    assert set(checks) == {"warns-never-share", "does-not-ask-for-secrets", "no-card-number"}
    failing = checks["does-not-ask-for-secrets"]
    assert failing[:5] == ["never-ask-full-pin", "does-not-ask-for-secrets", "not_regex", "error", "fail"]
    assert failing[5].startswith("matches ")
    assert failing[6] == "1:14"  # "Sure, please " is 13 characters
    assert checks["warns-never-share"][3:5] == ["warning", "fail"]
    assert checks["no-card-number"][4] == "pass"
    assert _marks(page) == [("1", "confirm your PIN and the full card number", PIN_CHECK)]
    lines = table_rows(page, "#check-lines tbody tr")
    assert lines == [["1", ASKS_FOR_PIN, PIN_CHECK]]  # the text unchanged
    rules = table_rows(page, "#check-rules tbody tr")
    assert [(r[0], r[2][: len(GOVERNS)], r[3], r[4], r[5], r[6]) for r in rules] == [
        ("never-ask-full-pin", GOVERNS, "fail", "0.600", "5.000", "yes")
    ]
    assert 0.7 <= float(rules[0][2].removeprefix(GOVERNS)) <= 1


def test_the_span_is_on_its_line_after_a_wide_character(page: Any) -> None:
    """Evidence offsets count characters: an emoji (two UTF-16 units) before the span does not shift it."""
    output = "Thanks for waiting \U0001f642\nThe account linked to card 4111 1111 1111 1111 is in credit."
    _check(page, "what is the balance on my account", output)
    assert by_id(page, "check-verdict").text == "FAIL"
    assert _marks(page) == [("2", "4111 1111 1111 1111", "never-ask-full-pin / no-card-number")]
    assert _checks(page)["no-card-number"][4:] == ["fail", "personal data found: card number (once)", "2:28"]
    flagged = table_rows(page, "#check-lines tr.flagged")
    assert [row[0] for row in flagged] == ["2"]
    assert [row[1] for row in table_rows(page, "#check-lines tbody tr")] == output.split("\n")


def test_a_passing_turn_shows_pass_and_reward_one(page: Any) -> None:
    status = _check(
        page,
        "I want to make a complaint",
        "I've logged your complaint under reference CMP-482913. We will send our final response within eight weeks.",
    )
    # complaint: gives-deadline and gives-reference pass; never-ask-full-pin's always-on no-card-number passes
    assert status.startswith("PASS, reward 1.000"), status
    assert by_id(page, "check-verdict").text == "PASS"
    assert by_id(page, "check-reward").text == "1.000"
    assert {row[1]: row[4] for row in table_rows(page, "#check-checks tbody tr")} == {
        "gives-deadline": "pass",
        "gives-reference": "pass",
        "no-card-number": "pass",
    }
    assert _marks(page) == []
    assert table_rows(page, "#check-lines tr.flagged") == []
    rules = table_rows(page, "#check-rules tbody tr")
    assert [(r[0], r[2][: len(GOVERNS)], r[3], r[4]) for r in rules] == [
        ("complaint", GOVERNS, "pass", "1.000"),
        ("never-ask-full-pin", "\u2014", "pass", "1.000"),  # not matched: it governs nothing
    ]
    assert 0.7 <= float(rules[0][2].removeprefix(GOVERNS)) <= 1
    assert float(rules[0][1]) > 0  # matched: its final score
    assert rules[1][1] == "always"  # applied through its when: always check only


def test_a_neighbours_requirements_are_shown_skipped_as_a_neighbours(
    browser: Any, site: str, demo_neighbours: tuple[str, str]
) -> None:
    """examples/turns/banking.jsonl's good-pin turn: never-ask-full-pin governs it; under the tenant's similarity
    threshold fraud-suspected matches only as a neighbour, and its two requirements are skipped for that, which is
    no problem: the turn passes."""
    tenant, key = demo_neighbours
    open_playground(browser, site, key, tenant=tenant)
    browser.find_element("css selector", "button[data-tab=check]").click()
    page = browser
    message = "here is my online banking password"
    output = (
        "Please never share your password or PIN in the chat, not even with the bank. I have not stored it. "
        "You can reset your password in the app."
    )
    headers = {"Authorization": f"Bearer {key}"}
    answer = httpx.post(
        f"{site}/v1/tenants/{tenant}/check", json={"message": message, "output": output}, headers=headers, timeout=60
    ).json()
    status = _check(page, message, output)
    assert status.startswith("PASS, reward 1.000"), status
    assert by_id(page, "check-counts").text == "3 passed \u00b7 0 failed \u00b7 2 skipped"
    checks = _checks(page)
    assert {check: row[4] for check, row in checks.items()} == {
        "warns-never-share": "pass",
        "does-not-ask-for-secrets": "pass",
        "no-card-number": "pass",
        "offers-freeze": "skip neighbour",
        "hands-over-to-fraud-team": "skip neighbour",
    }
    assert checks["offers-freeze"][5].startswith("the rule matched only as a neighbour (")
    marked = page.execute_script(
        "return [...document.querySelectorAll('#check-checks tr.check-neighbour')].map((r) => r.cells[1].textContent)"
    )
    assert marked == ["offers-freeze", "hands-over-to-fraud-team"]
    rules = page.execute_script(
        """return [...document.querySelectorAll("#check-rules tbody tr")].map((row) => {
          const badge = row.querySelector("td.governs .badge");
          return [row.cells[0].textContent, row.cells[3].textContent, badge ? badge.textContent : null,
                  badge ? badge.title : null];
        });"""
    )
    details = {m["rule_id"]: m["enforcement"]["detail"] for m in answer["matches"]}
    by_rule = {row[0]: row[1:] for row in rules}
    confidence = {m["rule_id"]: m["enforcement"]["confidence"] for m in answer["matches"]}
    assert by_rule["never-ask-full-pin"] == [
        "pass",
        f"governs \u00b7 {confidence['never-ask-full-pin']:.2f}",
        details["never-ask-full-pin"],
    ]
    assert by_rule["fraud-suspected"] == [
        "skip",
        f"neighbour \u00b7 {confidence['fraud-suspected']:.2f}",
        details["fraud-suspected"],
    ]
    assert confidence["never-ask-full-pin"] >= 0.7 > confidence["fraud-suspected"]
    assert details == {
        rule: f"confidence {c:.2f} {'>=' if c >= 0.7 else '<'} 0.7 that it governs the message"
        for rule, c in confidence.items()
    }
    assert checks["offers-freeze"][5].startswith(f"the rule matched only as a neighbour ({details['fraud-suspected']})")


def test_html_in_the_output_is_shown_as_text(page: Any) -> None:
    output = f"{INJECTION} please confirm {INJECTION} pin\n<script>alert(2)</script>"
    _check(page, "my pin is 1234 can you check it", output)
    assert by_id(page, "check-verdict").text == "FAIL"
    assert page.execute_script("return document.querySelectorAll('#tab-check img, #tab-check script').length") == 0
    assert [row[1] for row in table_rows(page, "#check-lines tbody tr")] == output.split("\n")
    assert _marks(page) == [("1", f"confirm {INJECTION} pin", PIN_CHECK)]
    page.execute_script("window.scrollTo(0, 0)")
    history = page.execute_script("return document.querySelector('#check-history .history-label').textContent")
    assert history == "my pin is 1234 can you check it"
    severe = [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []  # no image was requested, nothing ran


def test_an_empty_message_shows_the_problem(page: Any) -> None:
    _check(page, "I want to make a complaint", "We will answer within eight weeks.")  # a report first
    assert by_id(page, "check-report").is_displayed()
    status = _check(page, "", "some output")
    assert status.startswith("422 "), status
    assert "[body.message]" in status
    assert "error" in by_id(page, "check-status").get_attribute("class").split()
    assert not by_id(page, "check-report").is_displayed()  # the last report does not stay, as if it answered


def test_an_unknown_tenant_shows_the_problem(browser: Any, site: str, demo: DemoTenant) -> None:
    open_playground(browser, site, demo.key, tenant="nobody")
    browser.find_element("css selector", "button[data-tab=check]").click()
    status = _check(browser, "I want to make a complaint", "ok")
    assert status.startswith(("403", "404")), status


def test_the_examples_are_the_banking_turns(page: Any, examples: Path) -> None:
    turns = {}
    for line in (examples / "turns" / "banking.jsonl").read_text(encoding="utf-8").splitlines():
        turn = json.loads(line)
        turns[turn["id"]] = turn
    shown = page.execute_async_script(
        "const done = arguments[0]; import('/static/check.js').then((m) => done(m.CHECK_EXAMPLES));"
    )
    assert len(shown) >= 3
    for example in shown:
        source = turns[example["id"]]
        assert (example["message"], example["output"]) == (source["message"], source["output"])
    # the form starts with the first, and a chip fills the form and checks its turn
    assert by_id(page, "check-message").get_attribute("value") == shown[0]["message"]
    assert by_id(page, "check-output").get_attribute("value") == shown[0]["output"]
    chips = page.find_elements("css selector", "#check-examples button")
    assert [chip.text for chip in chips] == [example["id"] for example in shown]
    chip = next(chip for chip in chips if chip.text == "good-fraud")
    chip.click()
    assert status_after(page, "check", "checking\u2026").startswith("PASS, reward 1.000")
    assert by_id(page, "check-message").get_attribute("value") == turns["good-fraud"]["message"]


def test_ctrl_enter_checks_and_history_runs_it_again(page: Any) -> None:
    from selenium.webdriver.common.keys import Keys

    set_value(page, "check-message", "my pin is 1234 can you check it")
    set_value(page, "check-output", ASKS_FOR_PIN)
    by_id(page, "check-output").send_keys(Keys.CONTROL, Keys.ENTER)
    assert status_after(page, "check", "checking\u2026").startswith("FAIL, reward 0.600")
    _check(page, "I want to make a complaint", "We will answer within eight weeks, reference CMP-482913.")
    labels = page.execute_script(
        "return [...document.querySelectorAll('#check-history .history-entry')].map((e) => e.textContent)"
    )
    assert labels[0].startswith("I want to make a complaint")
    assert "PASS 1.000" in labels[0]
    assert labels[1].startswith("my pin is 1234 can you check it")
    assert "FAIL 0.600" in labels[1]
    stored = page.execute_script("return sessionStorage.getItem('norma-history-check')")
    assert [entry["form"]["message"] for entry in json.loads(stored)][:2] == [
        "I want to make a complaint",
        "my pin is 1234 can you check it",
    ]
    set_value(page, "check-output", "")
    page.find_elements("css selector", "#check-history .history-entry")[1].click()
    wait_for(page, lambda d: by_id(d, "check-verdict").text == "FAIL")
    assert by_id(page, "check-output").get_attribute("value") == ASKS_FOR_PIN


def test_the_audit_toggle_adds_the_audit(page: Any, site: str, demo: DemoTenant) -> None:
    message = "Implementa la clase FlowShaper de NetShaper"  # the audit tab's example: it fails the audit
    output = "Creo la clase `FlowShaper`.\n\n```csharp\npublic sealed class FlowShaper\n{\n}\n```"
    body = {"message": message, "output": output, "audit": True}
    headers = {"Authorization": f"Bearer {demo.key}"}
    answer = httpx.post(f"{site}/v1/tenants/demo/check", json=body, headers=headers, timeout=60).json()["audit"]
    assert answer["result"] == "FAIL"
    assert answer["violations"]
    page.execute_script(
        "window.__sent = []; const real = window.fetch; window.fetch = (p, o) => {"
        " window.__sent.push(JSON.parse(o.body)); return real(p, o); };"
    )
    by_id(page, "check-audit").click()
    _check(page, message, output)
    sent = page.execute_script("return window.__sent")
    assert sent[-1] == body
    assert by_id(page, "check-audit-box").is_displayed()
    assert by_id(page, "check-audit-verdict").text == answer["result"]
    shown = [item.text for item in page.find_elements("css selector", "#check-audit-violations li")]
    assert [item.split(" ")[0] for item in shown] == [v["rule"] for v in answer["violations"]]
    assert by_id(page, "check-verdict").text == "FAIL"  # the audit's FAIL fails the turn
    by_id(page, "check-audit").click()
    _check(page, message, output)
    assert by_id(page, "check-verdict").text == "PASS"  # no rule matched; the always-on card check passed
    assert page.execute_script("return window.__sent")[-1]["audit"] is False
    assert not by_id(page, "check-audit-box").is_displayed()
