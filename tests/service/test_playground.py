"""The playground end to end in a real headless Chromium against a real server on loopback: each tab's flow, the
empty states, the 401 hint, the match tab's gate and its collapsed "why not" list, the audit report, Generate in
the names tab and number formatting. What the page shows is compared with what the API (or the library) answers
for the same request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.names import score_record
from norma.service import DemoTenant
from norma.store import RuleStore
from tests.service._browser import by_id, needs_chromium, open_playground, playground_site, status_after

pytestmark = [pytest.mark.slow, needs_chromium]

# Wraps window.fetch: records each request's path and JSON body in window.__sent; with window.__patch set, merges
# its keys into the (real) JSON answer. Used to see what the page sends, and to show fields today's server lacks.
SPY = """
window.__sent = [];
window.__patch = arguments[0];
const realFetch = window.fetch;
window.fetch = async (path, options) => {
  window.__sent.push({ path, body: options && options.body ? JSON.parse(options.body) : null });
  const response = await realFetch(path, options);
  if (!window.__patch || !response.ok) return response;
  const data = Object.assign(await response.json(), window.__patch);
  const headers = { "Content-Type": "application/json" };
  return new Response(JSON.stringify(data), { status: response.status, headers });
};
"""


@pytest.fixture(scope="module")
def site(store: RuleStore, examples: Path, demo: DemoTenant) -> Iterator[str]:
    with playground_site(store, examples) as url:
        yield url


def _post(site: str, key: str, path: str, body: dict[str, Any]) -> Any:
    response = httpx.post(f"{site}{path}", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=60)
    response.raise_for_status()
    return response.json()


def _css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def _type(driver: Any, element_id: str, text: str) -> None:
    box = by_id(driver, element_id)
    box.clear()
    box.send_keys(text)


def _match(driver: Any, message: str) -> str:
    _type(driver, "match-message", message)
    by_id(driver, "match-run").click()
    return status_after(driver, "match", "matching\u2026")


def _tab(driver: Any, name: str) -> None:
    _css(driver, f"button[data-tab={name}]")[0].click()


def _rows(driver: Any, selector: str) -> list[list[str]]:
    return [
        [cell.get_attribute("textContent") for cell in row.find_elements("css selector", "td")]
        for row in _css(driver, selector)
    ]


def test_key_from_the_url_fragment_is_kept_in_the_tab_only(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    assert by_id(browser, "api-key").get_attribute("value") == acme_key
    assert "#key" not in browser.current_url
    assert not by_id(browser, "key-banner").is_displayed()


def test_every_tab_starts_with_an_empty_state_and_no_results_header(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    expected = {
        "match": "press Match",
        "check": "press Check",
        "diff": "press Compare",
        "audit": "press Audit",
        "names": "Score",
    }
    for tab, words in expected.items():
        _tab(browser, tab)
        empty = by_id(browser, f"{tab}-empty")
        assert empty.is_displayed()
        assert words in empty.text
        assert not by_id(browser, f"{tab}-out").is_displayed()
        assert by_id(browser, f"{tab}-status").text == ""
        headers = [th for th in _css(browser, f"#tab-{tab} th") if th.is_displayed()]
        assert headers == []


def test_no_key_shows_where_to_get_one(browser: Any, site: str) -> None:
    open_playground(browser, site, "")
    banner = by_id(browser, "key-banner")
    assert banner.is_displayed()
    assert "norma keys create --tenant demo" in banner.text
    assert "norma serve --demo" in banner.text


def test_401_names_the_key_command_for_the_tenant(browser: Any, site: str) -> None:
    open_playground(browser, site, "nrm_notakey_0000", tenant="acme")
    status = _match(browser, "I lost my card")
    assert status.startswith("401 unauthorized")
    hint = by_id(browser, "match-hint")
    assert hint.is_displayed()
    assert "norma keys create --tenant acme" in hint.text
    assert "norma serve --demo" in hint.text
    _tab(browser, "audit")
    by_id(browser, "audit-run").click()
    assert status_after(browser, "audit", "auditing\u2026").startswith("401")
    assert "norma keys create --tenant acme" in by_id(browser, "audit-hint").text


def test_match_shows_the_score_breakdown(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    status = _match(browser, "help, my wallet with my card in it was stolen")
    assert status.startswith("1 rule matched"), status
    rows = _rows(browser, "#match-results tbody tr")
    assert rows[0][0] == "lost-card"
    assert rows[0][1] == "block the card at once"
    similarity, bm25, final = (float(c) for c in rows[0][2:5])
    assert 0 < similarity <= 1
    assert bm25 >= 0
    assert final > 0
    assert all(len(c.split(".")[1]) == 3 for c in rows[0][2:5])  # three decimals for scores
    word, _, shown = rows[0][5].partition(" \u00b7 ")  # the only match governs the turn: "governs · 0.94"
    assert (word, len(shown)) == ("governs", 4), rows[0][5]
    assert 0.7 <= float(shown) <= 1
    ((_, _, detail, _, neighbour),) = browser.execute_script(BADGES, "#match-results tbody tr")
    assert (detail, neighbour) == (f"confidence {shown} >= 0.7 that it governs the message", False)  # its title
    gate = next(part for part in rows[0][6].split("; ") if part.startswith("gate "))  # how the gate let it through
    passed, _, needed = gate.removeprefix("gate confidence ").partition(" \u2265 ")
    assert (float(passed), float(needed)) == (pytest.approx(float(shown), abs=0.005), 0.7)  # the default gate


def label(enforcement: dict[str, Any]) -> str:
    """The badge of an ``enforcement`` in the match and check tabs: its reason and its confidence."""
    return f"{enforcement['reason']} \u00b7 {enforcement['confidence']:.2f}"


BADGES = """return [...document.querySelectorAll(arguments[0])].map((row) => {
  const badge = row.querySelector("td.governs .badge");
  return [row.cells[0].textContent, badge ? badge.textContent : null, badge ? badge.title : null,
          badge ? getComputedStyle(badge).color : null, row.classList.contains("neighbour")];
});"""


def test_match_shows_whether_each_match_governs_the_turn(
    browser: Any, site: str, demo_neighbours: tuple[str, str]
) -> None:
    tenant, key = demo_neighbours  # calibrated to a similarity threshold: fraud-suspected passes it as a neighbour
    message = "here is my online banking password"  # never-ask-full-pin governs it
    answer = _post(site, key, f"/v1/tenants/{tenant}/match", {"message": message})
    open_playground(browser, site, key, tenant=tenant)
    _match(browser, message)
    shown = browser.execute_script(BADGES, "#match-results tbody tr")
    assert [row[:3] for row in shown] == [
        [m["rule"]["id"], label(m["enforcement"]), m["enforcement"]["detail"]] for m in answer["matches"]
    ]
    assert [row[4] for row in shown] == [not m["enforcement"]["enforced"] for m in answer["matches"]]
    reasons = {m["rule_id"]: m["enforcement"]["reason"] for m in answer["matches"]}
    assert (reasons["never-ask-full-pin"], reasons["fraud-suspected"]) == ("governs", "neighbour")
    confidence = {m["rule_id"]: m["enforcement"]["confidence"] for m in answer["matches"]}
    assert confidence["never-ask-full-pin"] >= 0.7 > confidence["fraud-suspected"]
    assert [row[2] for row in shown] == [
        f"confidence {c:.2f} {'>=' if c >= 0.7 else '<'} 0.7 that it governs the message"
        for c in (m["enforcement"]["confidence"] for m in answer["matches"])
    ]  # the badge's title: the confidence it was read from
    colours = {row[0]: row[3] for row in shown}
    assert colours["never-ask-full-pin"] != colours["fraud-suspected"]  # told apart by colour too, not by text alone


def test_an_enforcement_is_shown_as_text_and_an_answer_without_one_is_shown(
    browser: Any, site: str, acme_key: str
) -> None:
    injection = "<img src=x onerror=alert(1)>"
    plain = {"rule_id": "plain", "similarity_score": 0.5, "bm25_score": 0.1, "final_score": 0.4, "explanation": {}}
    odd = {
        **plain,
        "rule_id": "odd",
        "rule": {"id": "odd", "action_text": injection},
        "enforcement": {"enforced": False, "reason": injection, "detail": injection},
    }
    open_playground(browser, site, acme_key)
    browser.execute_script(SPY, {"matches": [odd, {**plain, "rule": {"id": "plain"}}]})
    _match(browser, "help, my wallet with my card in it was stolen")
    shown = browser.execute_script(BADGES, "#match-results tbody tr")
    assert [row[:3] for row in shown] == [["odd", "not enforced", injection], ["plain", None, None]]
    assert browser.execute_script("return document.querySelectorAll('#tab-match img').length") == 0
    assert _rows(browser, "#match-results tbody tr")[0][1] == injection


def test_match_error_is_shown_not_thrown(browser: Any, site: str, globex_key: str) -> None:
    open_playground(browser, site, globex_key, tenant="acme")
    status = _match(browser, "I lost my card")
    assert status.startswith("404")
    assert "tenant 'acme' not found" in status
    assert not by_id(browser, "match-results").is_displayed()


def test_dropped_rules_are_collapsed_and_closest_first(browser: Any, site: str, demo: DemoTenant) -> None:
    message = "there's a payment I don't recognise"
    answer = _post(site, demo.key, "/v1/tenants/demo/match", {"message": message, "explain": True})
    open_playground(browser, site, demo.key, tenant="demo")
    _match(browser, message)
    dropped = by_id(browser, "match-dropped")
    assert dropped.get_attribute("open") is None  # collapsed
    assert not _css(browser, "#match-dropped-list")[0].is_displayed()
    assert by_id(browser, "match-dropped-count").text == str(len(answer["dropped"]))
    rows = _rows(browser, "#match-dropped-list tbody tr")
    expected = sorted(answer["dropped"], key=lambda d: -d["similarity"])
    assert [r[0] for r in rows] == [d["rule_id"] for d in expected]
    assert [r[1] for r in rows] == [d["reason"] for d in expected]
    assert [float(r[2]) for r in rows] == [pytest.approx(d["similarity"], abs=5e-4) for d in expected]
    assert {r[1] for r in rows} >= {"scope", "threshold"}  # several reasons, one list
    _css(browser, "#match-dropped summary")[0].click()
    assert _css(browser, "#match-dropped-list")[0].is_displayed()
    # the matches stay first and separate: none of the dropped rules is in the results table
    matched = {r[0] for r in _rows(browser, "#match-results tbody tr")}
    assert matched.isdisjoint(r[0] for r in rows)


def _gate_terms(driver: Any) -> dict[str, str]:
    return {row[0]: row[1] for row in _rows(driver, "#match-gate-terms tr")}


def test_match_shows_the_applied_gate(browser: Any, site: str, demo: DemoTenant) -> None:
    message = "someone used my card without my permission"
    answer = _post(site, demo.key, "/v1/tenants/demo/match", {"message": message, "explain": True})
    assert answer["matches"], "the demo's fraud rule should match this message"
    open_playground(browser, site, demo.key, tenant="demo")
    _match(browser, message)
    gate = by_id(browser, "match-gate")
    assert gate.is_displayed()
    terms = _gate_terms(browser)
    reported = answer["gate"]  # the server names the gate it applied: the page shows that object
    assert by_id(browser, "match-gate-kind").text == f"{reported['kind']} \u00b7 {reported['score']}"
    assert by_id(browser, "match-gate-description").text == reported["description"]
    assert set(terms) >= set(reported["terms"])
    assert terms["threshold"] == f"{reported['threshold']:.3f}"


def test_a_gate_object_is_rendered_with_its_terms(browser: Any, site: str, acme_key: str) -> None:
    """Any gate object (kind, score, threshold, terms, description) is rendered with its terms as they come: a fixed
    object replaces the real one in the page, so that every kind of term is shown (counts stay counts)."""
    gate = {
        "kind": "calibrated",
        "score": "similarity",
        "threshold": 0.41372,
        "terms": {"shift": 0.15, "rules": 3, "examples": 6, "margin": 0.0251},
        "description": "calibrated on the rulebook's own examples",
    }
    open_playground(browser, site, acme_key)
    browser.execute_script(SPY, {"gate": gate})
    _match(browser, "help, my wallet with my card in it was stolen")
    assert by_id(browser, "match-gate-kind").text == "calibrated \u00b7 similarity"
    assert by_id(browser, "match-gate-description").text == gate["description"]
    assert _gate_terms(browser) == {
        "threshold": "0.414",
        "shift": "0.150",
        "rules": "3",  # counts stay counts: never "3.000"
        "examples": "6",
        "margin": "0.025",
    }
    assert by_id(browser, "match-gate-source").text == ""


def test_audit_fields_are_sent_as_one_request(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    browser.execute_script(SPY, None)
    _tab(browser, "audit")
    _type(browser, "audit-input", "How do I implement a retry policy?")
    _type(browser, "audit-output", "Use exponential backoff.\nCreate a RetryPolicy class.")
    _type(browser, "audit-documents", "Domain_Rules.md\n\nIA_Context_Rules.md\n")
    from selenium.webdriver.support.ui import Select

    Select(by_id(browser, "audit-context")).select_by_value("technical")
    _css(browser, "#tab-audit details.more summary")[0].click()
    _type(browser, "audit-extra", '{"document_versions": {"DR": "1.0"}}')
    by_id(browser, "audit-run").click()
    status_after(browser, "audit", "auditing\u2026")
    sent = browser.execute_script("return window.__sent")
    assert sent[-1]["path"] == "/v1/audit"
    assert sent[-1]["body"] == {
        "input": "How do I implement a retry policy?",
        "output": "Use exponential backoff.\nCreate a RetryPolicy class.",
        "active_documents": ["Domain_Rules.md", "IA_Context_Rules.md"],
        "context_type": "technical",
        "document_versions": {"DR": "1.0"},
    }
    answer = _post(site, acme_key, "/v1/audit", sent[-1]["body"])
    assert by_id(browser, "audit-verdict").text == answer["result"]
    assert len(_css(browser, "#audit-lines tbody tr")) == 2


def test_audit_shows_the_whole_report(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    _tab(browser, "audit")
    request = {
        "input": by_id(browser, "audit-input").get_attribute("value"),
        "output": by_id(browser, "audit-output").get_attribute("value"),
        "active_documents": [],
    }
    answer = _post(site, acme_key, "/v1/audit", request)
    by_id(browser, "audit-run").click()
    assert status_after(browser, "audit", "auditing\u2026") == f"FAIL: {len(answer['violations'])} violations"
    assert by_id(browser, "audit-verdict").text == "FAIL"
    lines = _rows(browser, "#audit-lines tbody tr")
    assert len(lines) == len(request["output"].split("\n")) == 8
    assert [int(row[0]) for row in lines] == list(range(1, 9))
    assert lines[0][1].startswith("Creo la clase")
    flagged = {int(row.find_elements("css selector", "td")[0].text) for row in _css(browser, "#audit-lines tr.flagged")}
    assert flagged == {v["line"] for v in answer["violations"] if v["line"]}
    for violation in answer["violations"]:  # each on its own line, in the line's row
        assert f"{violation['rule']} {violation['severity']}" in lines[violation["line"] - 1][2]
    metrics = {row[0]: row[1] for row in _rows(browser, "#audit-metrics tr")}
    assert set(metrics) == set(answer["metrics"])
    assert metrics["technical_decisions"] == str(answer["metrics"]["technical_decisions"])  # a count: no decimals
    assert metrics["coverage_ratio"] == f"{answer['metrics']['coverage_ratio']:.3f}"
    not_evaluated = [r for r in answer["rules"] if r["status"] not in ("passed", "failed")]
    assert not_evaluated, "the example leaves IR.6.02 unevaluated (no re-runs)"
    skipped = [item.text for item in _css(browser, "#audit-skipped li")]
    assert len(skipped) == len(not_evaluated)
    for item, rule in zip(skipped, not_evaluated, strict=True):
        assert item.startswith(rule["rule"])
        assert rule["reason"] in item
    info = [item.text for item in _css(browser, "#audit-info li")]
    assert [i.split(":")[0] for i in info] == [finding["rule"] for finding in answer["info"]]
    assert by_id(browser, "audit-notes").text == answer["notes"]
    assert by_id(browser, "audit-rules-box").get_attribute("open") is None
    assert by_id(browser, "audit-rules-count").text == str(len(answer["rules"]))
    assert not by_id(browser, "audit-extra-box").is_displayed()  # today's report: no field the page does not know
    assert by_id(browser, "audit-context-used").text.endswith(f"language {answer['lang']}")


def test_audit_shows_fields_it_does_not_know(browser: Any, site: str, acme_key: str) -> None:
    """A newer analyzer adds keys: the page lists them as they come rather than hiding them."""
    open_playground(browser, site, acme_key)
    browser.execute_script(SPY, {"trace": "es", "norms": {"set": "netshaper", "documents": 4}})
    _tab(browser, "audit")
    by_id(browser, "audit-run").click()
    status_after(browser, "audit", "auditing\u2026")
    box = by_id(browser, "audit-extra-box")
    assert box.is_displayed()
    terms = [dt.text for dt in _css(browser, "#audit-extra-fields dt")]
    values = [dd.text for dd in _css(browser, "#audit-extra-fields dd")]
    assert terms == ["norms", "trace"]  # in the order the server sends them (the spy appends to the report)
    assert json.loads(values[0]) == {"set": "netshaper", "documents": 4}
    assert values[1] == "es"


def test_names_score_equals_the_library(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    _tab(browser, "names")
    by_id(browser, "names-run").click()
    assert status_after(browser, "names", "scoring\u2026") == "scored 5 variations"
    labels = json.loads(by_id(browser, "names-labels").get_attribute("value"))
    variations = [v for v in by_id(browser, "names-variations").get_attribute("value").split("\n") if v.strip()]
    expected = score_record({"name": "John Smith", "variations": variations, "labels": labels}, hash_seed=0)
    assert float(by_id(browser, "names-final").text) == pytest.approx(expected["final"], abs=5e-4)
    details = {row[0]: row[1] for row in _rows(browser, "#names-details tr")}
    assert details["variations"] == "5"  # a count, never "5.000"
    assert details["rule_compliant"] == str(expected["rule_compliant"])
    assert details["base"] == f"{expected['base']:.3f}"


def test_names_generate_fills_and_scores_the_variations(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    _tab(browser, "names")
    _type(browser, "names-variations", "")
    by_id(browser, "names-generate").click()
    status = status_after(browser, "names", "generating\u2026")
    assert status == "generated and scored 5 variations", status
    variations = by_id(browser, "names-variations").get_attribute("value").split("\n")
    assert len(variations) == 5
    assert all(v.strip() and v != "John Smith" for v in variations)
    labels = json.loads(by_id(browser, "names-labels").get_attribute("value"))
    expected = score_record({"name": "John Smith", "variations": variations, "labels": labels}, hash_seed=0)
    assert float(by_id(browser, "names-final").text) == pytest.approx(expected["final"], abs=5e-4)


def test_no_console_errors_and_no_csp_violations(browser: Any, site: str, acme_key: str) -> None:
    open_playground(browser, site, acme_key)
    for tab in ("match", "check", "diff", "audit", "names"):
        _tab(browser, tab)
    _tab(browser, "match")
    _match(browser, "I lost my card")
    entries = browser.get_log("browser")
    severe = [e for e in entries if e["level"] == "SEVERE"]
    assert severe == []
