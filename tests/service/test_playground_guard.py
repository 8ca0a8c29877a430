"""The playground's Guard tab in a real headless Chromium against a real server on loopback, forwarding to a scripted
OpenAI-compatible upstream on another loopback port (tests/service/_chat_upstream.py), on the demo tenant
(examples/rulebooks/banking-support.yaml): a failing then passing answer under ``repair`` shows "repaired", the
rules injected, two model calls and the final answer; ``block`` shows the fallback and the failing checks with
their evidence; an answer holding HTML is shown as text; a server without ``--upstream`` shows what to do.

The expected rules, verdicts and evidence are worked out by hand from the rulebook: "someone used my card without
my permission" is an example of ``fraud-suspected`` (checks: offers-freeze, error; hands-over-to-fraud-team,
warning) and ``never-ask-full-pin`` always applies through its ``when: always`` check no-card-number."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
from tests.service._chat_upstream import ChatUpstream

pytestmark = [pytest.mark.slow, needs_chromium]

FRAUD = "someone used my card without my permission"
FRAUD_BAD = "Payments can take a few days to show correctly. Please check again next week."
FRAUD_GOOD = (
    "I'm sorry. I have frozen your card so no more payments can go through, and I'm handing you over to our "
    "fraud team now. Never share your PIN with anyone, not even with us."
)
PIN = "my pin is 1234 can you check it"
ASKS_FOR_PIN = "Sure, please confirm your PIN and the full card number so I can check it."
FALLBACK = "I'm sorry, I can't give that answer. Please rephrase your request or ask for a person to help."
INJECTION = "<img src=x onerror=alert(1)>"
SYSTEM = "You are Northwind Bank's assistant."
FRAUD_RULE = "treat it as possible fraud, offer to freeze the card at once and hand over to the fraud team"
PIN_RULE_ALWAYS = (
    "if customer offers to share their PIN, password or full card number in the chat: "
    "tell them never to share it, not even with the bank, and do not repeat it back"
)
PIN_RULE = "tell them never to share it, not even with the bank, and do not repeat it back"
NO_MODEL = "No model is configured: start norma serve with --upstream URL (norma docs guard)"


@pytest.fixture(scope="module")
def upstream() -> Iterator[ChatUpstream]:
    with ChatUpstream() as up:
        yield up


@pytest.fixture(scope="module")
def site(store: RuleStore, examples: Path, demo: DemoTenant, upstream: ChatUpstream) -> Iterator[str]:
    with playground_site(store, examples, upstream=upstream.url) as url:
        yield url


@pytest.fixture
def page(browser: Any, site: str, demo: DemoTenant, upstream: ChatUpstream) -> Any:
    """The playground on the demo tenant, Guard tab open, the upstream's script and record empty."""
    upstream._steps.clear()
    open_playground(browser, site, demo.key, tenant="demo")
    browser.find_element("css selector", "button[data-tab=guard]").click()
    wait_for(browser, lambda d: _models(d) == ["scripted-model"])  # the tab asked the upstream's models
    upstream.requests.clear()
    return browser


def _send(driver: Any, message: str, policy: str, system: str = "") -> str:
    """Send the turn; the status line once the request answered."""
    set_value(driver, "guard-message", message)
    set_value(driver, "guard-system", system)
    set_value(driver, "guard-policy", policy)
    by_id(driver, "guard-run").click()
    return status_after(driver, "guard", "asking the model\u2026")


def _models(driver: Any) -> list[str]:
    """The model names the model field suggests."""
    return list(
        driver.execute_script('return [...document.querySelectorAll("#guard-models option")].map((o) => o.value)')
    )


def _text(driver: Any, element_id: str) -> str:
    return str(by_id(driver, element_id).get_attribute("textContent"))


def _rules(driver: Any) -> list[list[str]]:
    """The rules injected, in their order: id, text, why."""
    script = """return [...document.querySelectorAll("#guard-rules li")].map((li) => [
        li.querySelector("code").textContent, li.querySelector(".rule-text").textContent,
        li.querySelector(".badge").textContent])"""
    return list(driver.execute_script(script))


def test_repair_shows_repaired_the_rules_injected_two_calls_and_the_final_answer(
    page: Any, upstream: ChatUpstream
) -> None:
    upstream.reply(FRAUD_BAD).reply(FRAUD_GOOD)
    page.execute_script(
        "window.__sent = []; const real = window.fetch; window.fetch = (p, o) => {"
        " window.__sent.push([p, JSON.parse(o.body)]); return real(p, o); };"
    )
    status = _send(page, FRAUD, "repair", system=SYSTEM)
    assert status == "repaired, PASS (2 model calls, tenant demo)", status
    path, body = page.execute_script("return window.__sent")[-1]
    assert path == "/v1/tenants/demo/chat/completions"
    assert body["messages"] == [{"role": "system", "content": SYSTEM}, {"role": "user", "content": FRAUD}]
    assert body["norma"] == {"policy": "repair"}
    assert _text(page, "guard-action") == "repaired"
    assert "action-repaired" in by_id(page, "guard-action").get_attribute("class").split()
    assert _text(page, "guard-verdict") == "PASS"
    assert _text(page, "guard-answer") == FRAUD_GOOD
    assert not by_id(page, "guard-answer-note").is_displayed()
    assert _rules(page) == [
        ["fraud-suspected", FRAUD_RULE, "matched"],
        ["never-ask-full-pin", PIN_RULE_ALWAYS, "always"],
    ]
    attempts = table_rows(page, "#guard-attempts tbody tr")
    assert [row[:2] for row in attempts] == [["1", "fail"], ["2", "pass"]]
    for row in attempts:
        assert row[2].endswith(" ms")
        assert row[3].endswith(" ms")
        assert float(row[2].removesuffix(" ms")) >= 0
    assert _text(page, "guard-timings").startswith("prepare ")
    # the last answer passed: no failing check to show
    assert not by_id(page, "guard-checks").is_displayed()
    assert by_id(page, "guard-checks-none").is_displayed()
    # what the model was sent: the rules in the system message, then the failed checks as feedback
    assert len(upstream.requests) == 2
    first = upstream.requests[0].messages
    assert first[0]["role"] == "system"
    assert first[0]["content"].startswith(SYSTEM)
    assert f"1. [fraud-suspected] {FRAUD_RULE}" in first[0]["content"]
    assert "offers-freeze" in json.dumps(upstream.requests[1].messages)


def test_block_shows_blocked_the_fallback_and_the_failing_checks_with_their_evidence(
    page: Any, upstream: ChatUpstream
) -> None:
    upstream.reply(ASKS_FOR_PIN)
    status = _send(page, PIN, "block")
    assert status == "blocked, FAIL (1 model call, tenant demo)", status
    assert _text(page, "guard-action") == "blocked"
    assert "action-blocked" in by_id(page, "guard-action").get_attribute("class").split()
    assert _text(page, "guard-verdict") == "FAIL"
    assert _text(page, "guard-answer") == FALLBACK
    assert by_id(page, "guard-answer-note").is_displayed()
    assert _rules(page) == [["never-ask-full-pin", PIN_RULE, "matched"]]
    assert [row[:2] for row in table_rows(page, "#guard-attempts tbody tr")] == [["1", "fail"]]
    assert len(upstream.requests) == 1  # block never asks again
    # the failing checks only (no-card-number passed), with their evidence: "Sure, please " is 13 characters
    checks = {row[1]: row for row in table_rows(page, "#guard-checks tbody tr")}
    assert set(checks) == {"warns-never-share", "does-not-ask-for-secrets"}
    secrets = checks["does-not-ask-for-secrets"]
    assert secrets[:5] == ["never-ask-full-pin", "does-not-ask-for-secrets", "not_regex", "error", "fail"]
    assert secrets[6] == "1:14 \u201cconfirm your PIN and the full card number\u201d"
    assert checks["warns-never-share"][3:5] == ["warning", "fail"]
    assert checks["warns-never-share"][6] == ""  # a missing warning has no span
    history = page.execute_script("return document.querySelector('#guard-history .history-entry').textContent")
    assert history.startswith(PIN)
    assert "blocked" in history


def test_html_in_the_answer_is_shown_as_text(page: Any, upstream: ChatUpstream) -> None:
    answer = f"{INJECTION} we will look into it\n<script>alert(2)</script>"
    upstream.reply(answer)
    status = _send(page, FRAUD, "flag")
    assert status == "flagged, FAIL (1 model call, tenant demo)", status
    assert _text(page, "guard-action") == "flagged"
    assert _text(page, "guard-answer") == answer
    assert page.execute_script("return document.querySelectorAll('#tab-guard img, #tab-guard script').length") == 0
    failing = {row[1] for row in table_rows(page, "#guard-checks tbody tr")}
    assert failing == {"offers-freeze", "hands-over-to-fraud-team"}
    severe = [e for e in page.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == []  # no image was requested, nothing ran


def test_the_examples_are_banking_messages_and_a_chip_sends_one(page: Any, upstream: ChatUpstream) -> None:
    chips = page.find_elements("css selector", "#guard-examples button")
    assert [chip.text for chip in chips] == [FRAUD, "I want to make a complaint"]
    assert by_id(page, "guard-message").get_attribute("value") == FRAUD  # the form starts with the first
    upstream.reply("I've logged your complaint under reference CMP-482913. We will answer within eight weeks.")
    chips[1].click()
    assert status_after(page, "guard", "asking the model\u2026") == "passed, PASS (1 model call, tenant demo)"
    assert upstream.requests[-1].messages[-1] == {"role": "user", "content": "I want to make a complaint"}
    assert _rules(page)[0][:2] == [
        "complaint",
        "log the complaint, give the reference number and the eight-week response deadline",
    ]


def test_without_an_upstream_the_tab_says_how_to_configure_one(
    browser: Any, store: RuleStore, examples: Path, demo: DemoTenant
) -> None:
    with playground_site(store, examples) as url:
        open_playground(browser, url, demo.key, tenant="demo")
        browser.find_element("css selector", "button[data-tab=guard]").click()
        wait_for(browser, lambda d: by_id(d, "guard-hint").is_displayed())  # said when the tab opens
        assert _text(browser, "guard-hint") == NO_MODEL
        assert _text(browser, "guard-status") == "No model is configured"
        assert _models(browser) == []
        status = _send(browser, FRAUD, "repair")
        assert status == "No model is configured"
        assert _text(browser, "guard-hint") == NO_MODEL
        assert by_id(browser, "guard-hint").is_displayed()
        assert "error" in by_id(browser, "guard-status").get_attribute("class").split()
        assert not by_id(browser, "guard-report").is_displayed()
        codes = [c.text for c in browser.find_elements("css selector", "#guard-hint code")]
        assert codes == ["norma serve", "--upstream URL", "norma docs guard"]


def test_opening_the_tab_offers_the_upstreams_models(page: Any, upstream: ChatUpstream) -> None:
    assert _models(page) == ["scripted-model"]  # tests/service/_chat_upstream.py MODELS
    assert by_id(page, "guard-model").get_attribute("value") == "scripted-model"  # the default was not offered
    assert not by_id(page, "guard-hint").is_displayed()
    _send(page, "I want to make a complaint", "flag")
    assert upstream.requests[-1].body["model"] == "scripted-model"
