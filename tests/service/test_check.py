"""``POST /v1/tenants/{tenant}/check``: a turn checked against the tenant's rules, as the library checks it; tenants
are isolated; bad bodies are 422 problems."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.rules import Rule
from norma.store import RuleStore, open_store
from norma.turns import open as open_rules
from tests.service.conftest import app_client, bearer
from tests.turns._fixed import assert_same_json

pytestmark = [pytest.mark.anyio, pytest.mark.model]

REFUND = {
    "id": "refund",
    "condition_text": "customer asks for a refund of an order",
    "action_text": "explain the refund policy and give the form reference",
    "examples": ["I want my money back", "can I get a refund for my order"],
    "checks": [
        {"id": "policy", "kind": "contains", "terms": ["refund policy"]},
        {"id": "reference", "kind": "regex", "pattern": "REF-[0-9]{4}"},
    ],
}
CARDS = {
    "id": "card-safety",
    "condition_text": "customer asks about branch opening hours",
    "checks": [{"id": "no-card", "kind": "no_pii", "kinds": ["card"], "when": "always"}],
}


@pytest.fixture(scope="module")
def check_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuleStore]:
    path: Path = tmp_path_factory.mktemp("check") / "norma.db"
    store = open_store(f"sqlite:///{path}")
    store.upsert_rules("acme", [Rule.from_mapping({**r, "tenant_id": "acme"}) for r in (REFUND, CARDS)])
    # globex's refund rule demands something else: a check from the wrong tenant would show
    other = {**REFUND, "checks": [{"id": "apology", "kind": "contains", "terms": ["we apologise"]}]}
    store.upsert_rules("globex", [Rule.from_mapping({**other, "tenant_id": "globex"})])
    yield store
    store.close()


@pytest.fixture
async def http(check_store: RuleStore) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(check_store) as client:
        yield client


async def test_check_equals_the_library(http: httpx.AsyncClient, check_store: RuleStore) -> None:
    key = check_store.create_api_key("acme", name="check")
    body = {"message": "can I get a refund for my order", "output": "See our refund policy. Card 4111111111111111."}
    response = await http.post("/v1/tenants/acme/check", json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    got = response.json()
    assert got["tenant_id"] == "acme"
    assert got["verdict"] == "fail"
    failed = sorted((c["rule_id"], c["check_id"]) for r in got["rules"] for c in r["checks"] if c["status"] == "fail")
    assert failed == [("card-safety", "no-card"), ("refund", "reference")]
    # refund: 1 of 2 (weight 2, score 0.5); card-safety: 0 of 1 (weight 1): (0.5 x 2 + 0) / 3
    assert got["reward"] == pytest.approx(1 / 3)
    expected = open_rules(_matcher(check_store, "acme"), judge=None).check(body["message"], body["output"])
    assert got["reward"] == pytest.approx(expected.reward)
    assert got["counts"] == {"pass": 1, "fail": 2, "skip": 0}
    [card] = [c for r in got["rules"] for c in r["checks"] if c["check_id"] == "no-card"]
    assert card["evidence"][0]["text"] == "************1111"
    assert got["rules_version"] == check_store.version("acme")


def _matcher(store: RuleStore, tenant: str):  # type: ignore[no-untyped-def]
    from norma.matching import tenant_matcher

    return tenant_matcher(store, tenant)


async def test_tenants_are_isolated(http: httpx.AsyncClient, check_store: RuleStore) -> None:
    acme = check_store.create_api_key("acme", name="iso-a")
    globex = check_store.create_api_key("globex", name="iso-g")
    body = {"message": "I want my money back", "output": "Our refund policy: form REF-1234."}
    mine = await http.post("/v1/tenants/acme/check", json=body, headers=bearer(acme))
    theirs = await http.post("/v1/tenants/globex/check", json=body, headers=bearer(globex))
    assert mine.json()["verdict"] == "pass"
    assert theirs.json()["verdict"] == "fail"  # globex's own check (an apology), never acme's
    assert [c["check_id"] for r in theirs.json()["rules"] for c in r["checks"]] == ["apology"]
    crossed = await http.post("/v1/tenants/globex/check", json=body, headers=bearer(acme))
    assert crossed.status_code in (403, 404)
    assert crossed.headers["content-type"].startswith("application/problem+json")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"message": "x"}, "body.output"),
        ({"message": "", "output": "y"}, "body.message"),
        ({"message": "x", "output": "y" * 200_001}, "body.output"),
        ({"message": "x", "output": 3}, "body.output"),
        ({"message": "x", "output": "y", "extra": 1}, "body.extra"),
    ],
)
async def test_bad_bodies_are_422_problems(
    http: httpx.AsyncClient, check_store: RuleStore, body: dict[str, object], field: str
) -> None:
    key = check_store.create_api_key("acme", name=f"bad-{field}")
    response = await http.post("/v1/tenants/acme/check", json=body, headers=bearer(key))
    assert response.status_code == 422, response.text
    assert field in response.text


async def test_a_long_output_is_checked(http: httpx.AsyncClient, check_store: RuleStore) -> None:
    key = check_store.create_api_key("acme", name="long")
    output = "Our refund policy REF-0042. " + "fine words " * 9_000  # about 100,000 characters
    response = await http.post(
        "/v1/tenants/acme/check", json={"message": "I want a refund", "output": output}, headers=bearer(key)
    )
    assert response.status_code == 200
    assert response.json()["verdict"] == "pass"


@pytest.mark.parametrize(
    ("route", "body", "hint"),
    [
        ("check", {"message": "  ", "output": "y"}, "give the user's message"),
        ("match", {"message": " \n "}, "give the text to match"),
    ],
)
async def test_a_blank_message_is_refused_as_the_library_refuses_it(
    http: httpx.AsyncClient, check_store: RuleStore, route: str, body: dict[str, str], hint: str
) -> None:
    # "" is the schema's 422 (test_bad_bodies_are_422_problems); only spaces: the library's InvalidInputError, a 400
    key = check_store.create_api_key("acme", name=f"blank-{route}")
    response = await http.post(f"/v1/tenants/acme/{route}", json=body, headers=bearer(key))
    assert response.status_code == 400, response.text
    problem = response.json()
    assert (problem["detail"], problem["field"], problem["hint"]) == ("the message is empty", "message", hint)


CHECKED: dict[str, Any] = {
    "tenant_id": "acme",
    "verdict": "fail",
    "reward": 0.3333333333333333,
    "rules_version": 1,
    "matches": [
        {
            "rule_id": "refund",
            "final_score": 0.5640927794122264,
            "enforced": True,
            "enforcement": {
                "enforced": True,
                "reason": "governs",
                "confidence": 0.9997504086079316,
                "detail": "confidence 1.00 >= 0.7 that it governs the message",
            },
            "explanation": {
                "similarity": 0.9999999230150496,
                "vector_score": 0.9149147322571345,
                "matched_text": "can I get a refund for my order",
                "matched_example": 1,
                "bm25_raw": 1.5370267605211538,
                "bm25_normalized": 0.4434921770234994,
                "bm25_normalization": "query",
                "matched_terms": ["can", "get", "my", "order", "refund"],
                "hybrid": 0.7734879656870439,
                "priority_normalized": 0.0,
                "scope_weight": 1.0,
                "final": 0.5640927794122264,
                "threshold": 0.7,
                "threshold_on": "confidence",
                "weights": {"vector": 0.7, "bm25": 0.3, "hybrid": 0.6, "priority": 0.3, "scope": 0.1},
                "example_centroid": 0.8784496505037422,
            },
        }
    ],
    "rules": [
        {
            "rule_id": "refund",
            "description": "explain the refund policy and give the form reference",
            "matched": True,
            "enforced": True,
            "verdict": "fail",
            "score": 0.5,
            "weight": 2.0,
            "required": True,
            "checks": [
                {
                    "rule_id": "refund",
                    "check_id": "policy",
                    "kind": "contains",
                    "severity": "error",
                    "weight": 1.0,
                    "status": "pass",
                    "message": "mentions 'refund policy' (once)",
                    "evidence": [],
                    "enforced": True,
                },
                {
                    "rule_id": "refund",
                    "check_id": "reference",
                    "kind": "regex",
                    "severity": "error",
                    "weight": 1.0,
                    "status": "fail",
                    "message": "nothing matches 'REF-[0-9]{4}'",
                    "evidence": [],
                    "enforced": True,
                },
            ],
        },
        {
            "rule_id": "card-safety",
            "description": "customer asks about branch opening hours",
            "matched": False,
            "enforced": False,
            "verdict": "fail",
            "score": 0.0,
            "weight": 1.0,
            "required": True,
            "checks": [
                {
                    "rule_id": "card-safety",
                    "check_id": "no-card",
                    "kind": "no_pii",
                    "severity": "error",
                    "weight": 1.0,
                    "status": "fail",
                    "message": "personal data found: card number (once)",
                    "evidence": [{"start": 28, "end": 44, "line": 1, "column": 29, "text": "************1111"}],
                    "enforced": True,
                }
            ],
        },
    ],
    "counts": {"pass": 1, "fail": 2, "skip": 0},
    "audit": None,
}
"""What ``/check`` answered for the turn of :func:`test_the_answer_is_the_json_it_was` before issue #57's typed report
(captured from that code, then written here). The model's scores are compared within 1e-6 (their last digits depend
on the CPU); tests/service/test_response_models.py pins the bytes of a fixed report."""


async def test_the_answer_is_the_json_it_was(http: httpx.AsyncClient, check_store: RuleStore) -> None:
    key = check_store.create_api_key("acme", name="pinned")
    body = {"message": "can I get a refund for my order", "output": "See our refund policy. Card 4111111111111111."}
    response = await http.post("/v1/tenants/acme/check", json=body, headers=bearer(key))
    assert response.status_code == 200, response.text
    assert_same_json(response.json(), CHECKED)
