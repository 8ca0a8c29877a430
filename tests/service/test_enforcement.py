"""Whether each match governs the turn (issue #47), over HTTP: ``/match`` and ``/check`` answer it, the OpenAPI
schema documents it, and the answers are valid against the schema they document."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from norma.store import RuleStore, import_rulebook, open_store
from tests.service.conftest import ADMIN_KEY, app_client, bearer

pytestmark = [pytest.mark.anyio, pytest.mark.model]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PASSWORD = "here is my online banking password"
"""examples/turns/banking.jsonl's good-pin turn: never-ask-full-pin governs it; fraud-suspected, whose two checks
are ``contains`` requirements, matches only as a neighbour under a similarity threshold of 0.4."""
ANSWER = (
    "Please never share your password or PIN in the chat, not even with the bank. I have not stored it. "
    "You can reset your password in the app."
)
TWO_INTENTS = "my card was stolen and I want a refund"
"""examples/matching/support_rules.yaml: lost-card governs it; refund-request matches only as a neighbour under a
similarity threshold of 0.4."""
LOW = {"kind": "calibrated", "score": "similarity", "threshold": 0.4, "terms": {"target": "best_f1", "messages": 0}}
"""A stored calibration with a target: a similarity threshold, the gate alone (what makes neighbours over HTTP)."""


@pytest.fixture(scope="module")
def bank_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuleStore]:
    store = open_store(f"sqlite:///{tmp_path_factory.mktemp('enforce') / 'norma.db'}")
    import_rulebook(store, EXAMPLES / "rulebooks" / "banking-support.yaml", tenant_id="northwind-bank")
    import_rulebook(store, EXAMPLES / "matching" / "support_rules.yaml", tenant_id="shop")
    for source, tenant in (("northwind-bank", "northwind-low"), ("shop", "shop-low")):
        rules = [rule.model_copy(update={"tenant_id": tenant}) for rule in store.list_rules(source)]
        store.upsert_rules(tenant, rules)
        store.save_gate(tenant, LOW)  # type: ignore[attr-defined]
    yield store
    store.close()


@pytest.fixture
async def http(bank_store: RuleStore) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(bank_store) as client:
        yield client


async def _validator(http: httpx.AsyncClient, model: str) -> Draft202012Validator:
    """The OpenAPI schema of ``model``, as the service documents it (its references resolved in the document)."""
    document = (await http.get("/openapi.json")).json()
    return Draft202012Validator({"$ref": f"#/components/schemas/{model}", "components": document["components"]})


async def test_the_schema_documents_the_enforcement(http: httpx.AsyncClient) -> None:
    schemas = (await http.get("/openapi.json")).json()["components"]["schemas"]
    match_items = schemas["MatchResponse"]["properties"]["matches"]["items"]
    assert match_items == {"$ref": "#/components/schemas/MatchedRuleData"}
    assert schemas["MatchedRuleData"]["properties"]["enforcement"]["$ref"] == "#/components/schemas/EnforcementData"
    enforcement = schemas["EnforcementData"]
    fields = {"enforced", "reason", "confidence", "detail"}
    assert set(enforcement["properties"]) == set(enforcement["required"]) == fields
    assert schemas["EnforcementReason"]["enum"] == ["governs", "neighbour"]
    enforced = enforcement["properties"]["enforced"]["description"]
    assert "0.7" in enforced  # enforced from a confidence of 0.7
    assert "skip" in enforced  # a match that does not govern: its requirements skipped
    assert "neighbour" in enforcement["properties"]["reason"]["description"]
    assert enforcement["properties"]["confidence"]["type"] == "number"
    check = schemas["CheckResponse"]["properties"]
    assert check["matches"]["items"] == {"$ref": "#/components/schemas/MatchedRuleSummary"}
    assert check["rules"]["items"] == {"$ref": "#/components/schemas/CheckedRule"}
    checks = schemas["CheckedRule"]["properties"]["checks"]["items"]
    assert checks == {"$ref": "#/components/schemas/CheckResult"}
    assert {"enforced", "enforcement"} <= set(schemas["MatchedRuleSummary"]["required"])
    assert "enforced" in schemas["CheckedRule"]["required"]
    assert "neighbour" in schemas["CheckResult"]["properties"]["enforced"]["description"]


async def test_match_answers_which_matches_govern_the_turn(http: httpx.AsyncClient) -> None:
    body = {"message": TWO_INTENTS, "explain": True}
    default = (await http.post("/v1/tenants/shop/match", json=body, headers=bearer(ADMIN_KEY))).json()
    assert [(m["rule_id"], m["enforcement"]["reason"]) for m in default["matches"]] == [("lost-card", "governs")]
    assert default["gate"]["kind"] == "confidence"
    response = await http.post("/v1/tenants/shop-low/match", json=body, headers=bearer(ADMIN_KEY))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    (await _validator(http, "MatchResponse")).validate(answer)
    top, neighbour = answer["matches"]
    governs = top["enforcement"]["confidence"]
    assert (top["rule_id"], top["enforcement"]) == (
        "lost-card",
        {
            "enforced": True,
            "reason": "governs",
            "confidence": governs,
            "detail": f"confidence {governs:.2f} >= 0.7 that it governs the message",
        },
    )
    assert 0.7 <= governs <= 1
    assert (neighbour["rule_id"], neighbour["enforcement"]["enforced"]) == ("refund-request", False)
    assert neighbour["enforcement"]["reason"] == "neighbour"
    relevant = neighbour["enforcement"]["confidence"]
    assert 0 <= relevant < 0.7
    assert neighbour["enforcement"]["detail"] == f"confidence {relevant:.2f} < 0.7 that it governs the message"


async def test_check_skips_a_neighbours_requirements_and_passes_the_turn(http: httpx.AsyncClient) -> None:
    body = {"message": PASSWORD, "output": ANSWER}
    default = (await http.post("/v1/tenants/northwind-bank/check", json=body, headers=bearer(ADMIN_KEY))).json()
    assert [(m["rule_id"], m["enforced"]) for m in default["matches"]] == [("never-ask-full-pin", True)]
    assert (default["verdict"], default["counts"]) == ("pass", {"pass": 3, "fail": 0, "skip": 0})
    response = await http.post("/v1/tenants/northwind-low/check", json=body, headers=bearer(ADMIN_KEY))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    (await _validator(http, "CheckResponse")).validate(answer)
    matches = {m["rule_id"]: m for m in answer["matches"]}
    assert (matches["never-ask-full-pin"]["enforced"], matches["fraud-suspected"]["enforced"]) == (True, False)
    assert matches["fraud-suspected"]["enforcement"]["reason"] == "neighbour"
    rules = {r["rule_id"]: r for r in answer["rules"]}
    fraud = rules["fraud-suspected"]
    assert (fraud["matched"], fraud["enforced"], fraud["verdict"], fraud["weight"]) == (True, False, "skip", 0)
    assert [(c["check_id"], c["status"], c["enforced"]) for c in fraud["checks"]] == [
        ("offers-freeze", "skip", False),
        ("hands-over-to-fraud-team", "skip", False),
    ]
    detail = matches["fraud-suspected"]["enforcement"]["detail"]
    assert fraud["checks"][0]["message"].startswith(f"the rule matched only as a neighbour ({detail})")
    assert rules["never-ask-full-pin"]["enforced"] is True
    assert (answer["verdict"], answer["reward"], answer["counts"]) == ("pass", 1.0, {"pass": 3, "fail": 0, "skip": 2})


async def test_a_failed_check_with_its_evidence_is_valid_against_the_schema(http: httpx.AsyncClient) -> None:
    body = {"message": "what is the balance on my account", "output": "Card 4111 1111 1111 1111 has 12 GBP."}
    response = await http.post("/v1/tenants/northwind-bank/check", json=body, headers=bearer(ADMIN_KEY))
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    (await _validator(http, "CheckResponse")).validate(answer)
    evidence = [span for r in answer["rules"] for c in r["checks"] if c["status"] == "fail" for span in c["evidence"]]
    assert [(span["line"], span["column"], span["text"]) for span in evidence] == [(1, 6, "**** **** **** 1111")]


async def test_an_answer_that_breaks_the_schema_is_caught(http: httpx.AsyncClient) -> None:
    """The control of the validations above: the schema rejects a match without its enforcement, or with a reason
    it does not know."""
    body = {"message": TWO_INTENTS}
    answer = (await http.post("/v1/tenants/shop/match", json=body, headers=bearer(ADMIN_KEY))).json()
    validator = await _validator(http, "MatchResponse")
    assert validator.is_valid(answer)
    without = {**answer, "matches": [{k: v for k, v in m.items() if k != "enforcement"} for m in answer["matches"]]}
    assert not validator.is_valid(without)
    odd = {**answer["matches"][0], "enforcement": {**answer["matches"][0]["enforcement"], "reason": "second"}}
    assert not validator.is_valid({**answer, "matches": [odd]})
