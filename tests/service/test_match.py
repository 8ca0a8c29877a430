"""``POST /v1/tenants/{tenant}/match``: the library's matches with the score breakdown; writes are picked up."""

from __future__ import annotations

import time

import httpx
import pytest

from norma.matching import SessionState, tenant_matcher
from norma.store import RuleStore
from tests.service.conftest import ADMIN_KEY, bearer

pytestmark = pytest.mark.anyio


async def test_match_equals_the_library(client: httpx.AsyncClient, store: RuleStore, acme_key: str) -> None:
    message = "my wallet was stolen with my card in it"
    response = await client.post("/v1/tenants/acme/match", json={"message": message}, headers=bearer(acme_key))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["tenant_id"] == "acme"
    matches = body["matches"]
    assert matches[0]["rule"]["id"] == "lost-card"
    for match in matches:
        assert {"similarity_score", "bm25_score", "final_score", "explanation"} <= set(match)
    finals = [m["final_score"] for m in matches]
    assert finals == sorted(finals, reverse=True)
    expected = tenant_matcher(store, "acme").match(message)
    assert [m["rule"]["id"] for m in matches] == [m.rule.id for m in expected]
    assert [m["final_score"] for m in matches] == pytest.approx([m.final_score for m in expected])


async def test_match_with_session_and_tags(client: httpx.AsyncClient, store: RuleStore, acme_key: str) -> None:
    session = {"turn": 2, "fire_counts": {"refund": 1}, "last_fired_turn": {"refund": 1}}
    body = {"message": "I want my money back", "session": session, "tags": ["billing"], "explain": True}
    response = await client.post("/v1/tenants/acme/match", json=body, headers=bearer(acme_key))
    assert response.status_code == 200, response.text
    got = [m["rule"]["id"] for m in response.json()["matches"]]
    expected = tenant_matcher(store, "acme").match(
        "I want my money back", SessionState.model_validate(session), explain=True, tags=["billing"]
    )
    assert got == [m.rule.id for m in expected]
    assert set(got) <= {"refund"}
    dropped = response.json()["dropped"]
    assert [(d["rule_id"], d["reason"]) for d in dropped] == [(d.rule_id, d.reason) for d in expected.dropped]
    assert ("lost-card", "tags") in [(d["rule_id"], d["reason"]) for d in dropped]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"message": "x", "session": {"turn": -1}}, "body.session.turn"),
        ({"message": "x", "session": {"nope": 1}}, "body.session.nope"),
        ({"message": "x" * 20_001}, "body.message"),
        ({"message": ""}, "body.message"),
        ({}, "body.message"),
        ({"message": "x", "extra": True}, "body.extra"),
    ],
)
async def test_bad_match_requests_are_422_naming_the_field(
    client: httpx.AsyncClient, acme_key: str, body: dict[str, object], field: str
) -> None:
    response = await client.post("/v1/tenants/acme/match", json=body, headers=bearer(acme_key))
    assert response.status_code == 422
    assert response.json()["field"] == field


async def test_a_rule_written_through_the_api_is_matched_within_a_second(
    client: httpx.AsyncClient, acme_key: str
) -> None:
    message = {"message": "the parcel never arrived, where is my order"}
    before = await client.post("/v1/tenants/acme/match", json=message, headers=bearer(acme_key))
    assert "missing-parcel" not in [m["rule"]["id"] for m in before.json()["matches"]]
    rule = {"condition_text": "customer says their order never arrived", "examples": ["where is my parcel"]}
    assert (
        await client.put("/v1/tenants/acme/rules/missing-parcel", json=rule, headers=bearer(acme_key))
    ).status_code == 200
    written = time.monotonic()
    found = False
    while time.monotonic() - written < 1.0 and not found:
        after = await client.post("/v1/tenants/acme/match", json=message, headers=bearer(acme_key))
        found = "missing-parcel" in [m["rule"]["id"] for m in after.json()["matches"]]
    assert found
    assert (await client.delete("/v1/tenants/acme/rules/missing-parcel", headers=bearer(acme_key))).status_code == 200


async def test_a_rule_repeating_a_tag_can_be_rewritten_then_matched(client: httpx.AsyncClient) -> None:
    """Regression (tests/fuzz/test_fuzz_service.py): rewriting a rule whose tags repeat one broke the tenant's
    cached matcher, and every later match of the tenant was a 500."""
    admin = bearer(ADMIN_KEY)
    url = "/v1/tenants/dup-tags/rules/r1"
    assert (await client.put(url, json={"condition_text": "hello there", "tags": ["x", "x"]}, headers=admin)).is_success
    match = {"message": "hello"}
    assert (await client.post("/v1/tenants/dup-tags/match", json=match, headers=admin)).status_code == 200
    rewritten = {"condition_text": "hello again", "tags": ["x", "x"]}
    assert (await client.put(url, json=rewritten, headers=admin)).is_success
    response = await client.post("/v1/tenants/dup-tags/match", json=match, headers=admin)
    assert response.status_code == 200, response.text


async def test_an_answer_names_the_rules_version_it_reflects(client: httpx.AsyncClient, acme_key: str) -> None:
    before = (await client.get("/v1/tenants/acme", headers=bearer(acme_key))).json()["version"]
    rule = {"condition_text": "customer asks about opening hours", "examples": ["when are you open"]}
    assert (await client.put("/v1/tenants/acme/rules/hours", json=rule, headers=bearer(acme_key))).status_code == 200
    assert (await client.delete("/v1/tenants/acme/rules/hours", headers=bearer(acme_key))).status_code == 200
    current = (await client.get("/v1/tenants/acme", headers=bearer(acme_key))).json()["version"]
    assert current == before + 2
    time.sleep(0.6)  # past the matcher's refresh interval
    answer = await client.post("/v1/tenants/acme/match", json={"message": "hello"}, headers=bearer(acme_key))
    assert answer.json()["rules_version"] == current
    assert "matcher_version" not in answer.json()


async def test_a_body_that_is_not_declared_json_names_the_header(client: httpx.AsyncClient, acme_key: str) -> None:
    headers = {**bearer(acme_key), "Content-Type": "application/x-www-form-urlencoded"}
    response = await client.post("/v1/tenants/acme/match", content=b'{"message": "hello"}', headers=headers)
    assert response.status_code == 400
    problem = response.json()
    assert problem["detail"] == "the body is not read as JSON: its Content-Type is 'application/x-www-form-urlencoded'"
    assert problem["field"] == "headers.content-type"
    assert (
        problem["hint"] == "send the header Content-Type: application/json (curl: -H 'Content-Type: application/json')"
    )
