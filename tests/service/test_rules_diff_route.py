"""``POST /v1/tenants/{tenant}/diff``: recorded turns checked against two stored versions of a tenant's rules
(a real SQLite store: the rules imported, then imported again with one rule edited), answered as the library's
``RulebookDiff.to_dict()``; tenants are isolated; the limits and bad bodies are problems naming the field.

The change and its effect are those of tests/turns/test_rules_diff.py (examples added to the ``hours`` rule bring
"do you close at christmas" under it, and its answer "we are open 24/7" breaks its check), written here by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.rules import Rule
from norma.service._routes_diff import RulesDiffResponse
from norma.store import RuleStore, open_store
from norma.turns import diff_turns
from norma.turns import open as open_rules
from tests.service.conftest import ADMIN_KEY, app_client, bearer

pytestmark = [pytest.mark.anyio, pytest.mark.model]

REFUND = {
    "id": "refund",
    "condition_text": "customer asks for a refund of an order",
    "examples": ["I want my money back", "can I get a refund for my order"],
    "checks": [{"id": "policy", "kind": "contains", "terms": ["refund policy"]}],
}
CARDS = {
    "id": "cards",
    "condition_text": "customer reports a lost or stolen card",
    "examples": ["I lost my card", "my card was stolen"],
    "checks": [{"id": "blocked", "kind": "contains", "terms": ["blocked"]}],
}
HOURS = {
    "id": "hours",
    "condition_text": "customer asks about the opening hours of the branches",
    "examples": ["when are you open", "opening hours on saturday"],
    "checks": [{"id": "no-always-open", "kind": "not_contains", "terms": ["24/7"]}],
}
MORE_EXAMPLES = {
    **HOURS,
    "examples": [*HOURS["examples"], "are you open on bank holidays", "is the branch open at lunchtime"],
}
TURNS: list[dict[str, Any]] = [
    {"id": "refund-good", "message": "I want a refund for my order", "output": "Our refund policy: 30 days."},
    {"id": "card-bad", "message": "someone stole my card", "output": "Please call us."},
    {"id": "hours", "message": "what time do you open on sunday", "output": "We are open 24/7."},
    {"id": "weather", "message": "will it rain tomorrow", "output": "No idea."},
    {"message": "do you close at christmas", "output": "No, we are open 24/7."},
]
CHRISTMAS = 4
URL = "/v1/tenants/acme/diff"


def _rules(tenant: str, *rules: dict[str, Any]) -> list[Rule]:
    return [Rule.from_mapping({**rule, "tenant_id": tenant}) for rule in rules]


@pytest.fixture(scope="module")
def diff_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RuleStore]:
    """Tenant acme at version 1 (refund, cards, hours) and 2 (hours with two more examples); globex at 1."""
    path: Path = tmp_path_factory.mktemp("diff") / "norma.db"
    store = open_store(f"sqlite:///{path}")
    assert store.upsert_rules("acme", _rules("acme", REFUND, CARDS, HOURS)) == 1
    assert store.upsert_rules("acme", _rules("acme", REFUND, CARDS, MORE_EXAMPLES)) == 2
    store.upsert_rules("globex", _rules("globex", REFUND))
    yield store
    store.close()


@pytest.fixture(scope="module")
def acme_key(diff_store: RuleStore) -> str:
    return diff_store.create_api_key("acme", name="diff")


@pytest.fixture
async def http(diff_store: RuleStore) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(diff_store) as client:
        yield client


async def test_the_turns_a_change_moves_with_their_evidence(http: httpx.AsyncClient, acme_key: str) -> None:
    response = await http.post(URL, json={"old_version": 1, "new_version": 2, "turns": TURNS}, headers=bearer(acme_key))
    assert response.status_code == 200, response.text
    got = response.json()
    assert got["old"] == {"source": None, "tenant": "acme", "version": 1, "rules": 3}
    assert got["new"] == {"source": None, "tenant": "acme", "version": 2, "rules": 3}
    assert got["summary"] == "1 of 5 turns change verdict: 1 newly fail, 0 newly pass; 4 unchanged."
    assert got["counts"] == {
        "turns": 5,
        "changed": 1,
        "verdict_changed": 1,
        "newly_failing": 1,
        "newly_passing": 0,
        "newly_skipped": 0,
        "same_verdict": 0,
        "unchanged": 4,
    }
    assert got["edits"] == [{"rule_id": "hours", "edit": "changed", "fields": ["examples"], "turns": 1}]
    assert [(r["rule_id"], r["edit"], r["governs_gained"], r["failing_gained"]) for r in got["rules"]] == [
        ("hours", "changed", 1, 1)
    ]
    (change,) = got["changes"]
    # christmas matched nothing before; the new examples bring it under hours, whose check finds "24/7"
    assert (change["index"], change["id"], change["message"]) == (CHRISTMAS, None, "do you close at christmas")
    assert (change["change"], change["verdict"]) == ("newly_failing", {"old": "skip", "new": "fail"})
    assert change["reward"] == {"old": None, "new": 0.0}
    assert change["governs"] == {"added": ["hours"], "removed": []}
    (failure,) = change["failures"]["added"]
    assert (failure["rule_id"], failure["check_id"], failure["status"]) == ("hours", "no-always-open", "fail")
    assert [span["text"] for span in failure["evidence"]] == ["24/7"]
    assert change["failures"]["removed"] == []
    assert RulesDiffResponse.model_validate(got).model_dump(mode="json") == got  # the documented schema, exactly


async def test_the_answer_is_the_librarys_and_new_version_defaults_to_the_current(
    http: httpx.AsyncClient, acme_key: str, diff_store: RuleStore
) -> None:
    response = await http.post(URL, json={"old_version": 1, "turns": TURNS}, headers=bearer(acme_key))
    assert response.status_code == 200, response.text
    got = response.json()
    assert got["new"]["version"] == 2
    first, latest = (open_rules(tenant="acme", version=v, store=diff_store, judge=None) for v in (1, 2))
    assert got == diff_turns(first, latest, TURNS).to_dict()


async def test_the_same_version_twice_changes_nothing(http: httpx.AsyncClient, acme_key: str) -> None:
    body = {"old_version": 2, "new_version": 2, "turns": TURNS[:2]}
    response = await http.post(URL, json=body, headers=bearer(acme_key))
    assert response.status_code == 200, response.text
    got = response.json()
    assert (got["summary"], got["changes"], got["edits"]) == (
        "0 of 2 turns change verdict: 0 newly fail, 0 newly pass; 2 unchanged.",
        [],
        [],
    )


async def test_another_tenants_key_gets_404_and_no_key_401(
    http: httpx.AsyncClient, diff_store: RuleStore, acme_key: str
) -> None:
    globex = diff_store.create_api_key("globex", name="diff")
    body = {"old_version": 1, "turns": TURNS}
    refused = await http.post(URL, json=body, headers=bearer(globex))
    assert refused.status_code == 404
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["detail"] == "tenant 'acme' not found"
    assert "refund" not in refused.text
    assert (await http.post(URL, json=body)).status_code == 401
    own = await http.post("/v1/tenants/globex/diff", json=body, headers=bearer(globex))
    assert own.status_code == 200, own.text
    assert own.json()["new"] == {"source": None, "tenant": "globex", "version": 1, "rules": 1}
    admin = await http.post(URL, json={**body, "turns": TURNS[:1]}, headers=bearer(ADMIN_KEY))
    assert admin.status_code == 200, admin.text


@pytest.mark.parametrize(
    ("versions", "field", "detail"),
    [
        ({"old_version": 3}, "old_version", "tenant 'acme' has no version 3: its versions are 1 to 2"),
        (
            {"old_version": 1, "new_version": 7},
            "new_version",
            "tenant 'acme' has no version 7: its versions are 1 to 2",
        ),
    ],
)
async def test_a_version_the_tenant_does_not_have_is_404_naming_it(
    http: httpx.AsyncClient, acme_key: str, versions: dict[str, int], field: str, detail: str
) -> None:
    response = await http.post(URL, json={**versions, "turns": TURNS}, headers=bearer(acme_key))
    assert response.status_code == 404, response.text
    problem = response.json()
    assert (problem["field"], problem["detail"]) == (field, detail)


async def test_more_than_1000_turns_is_413_naming_the_cli(http: httpx.AsyncClient, acme_key: str) -> None:
    turns = [{"message": f"question {n}", "output": "an answer"} for n in range(1001)]
    response = await http.post(URL, json={"old_version": 1, "turns": turns}, headers=bearer(acme_key))
    assert response.status_code == 413, response.text
    problem = response.json()
    assert (problem["field"], problem["detail"]) == ("turns", "1,001 turns in one request, over the limit of 1,000")
    assert problem["hint"] == (
        "send at most 1,000 turns a request, or compare any number with the CLI: norma rules diff acme@OLD acme@NEW "
        "--turns FILE --db URL"
    )


@pytest.mark.parametrize(
    ("turns", "field", "message"),
    [
        (
            [TURNS[0], {"message": "", "output": "x"}],
            "body.turns[1].message",
            "String should have at least 1 character",
        ),
        ([{"message": "  \n", "output": "x"}], "body.turns[0].message", "the message is empty (only whitespace)"),
        ([{"message": "hello"}], "body.turns[0].output", "Field required"),
        ([{"message": "hello", "output": "x", "reply": "y"}], "body.turns[0].reply", "Extra inputs are not permitted"),
    ],
)
async def test_a_bad_turn_is_422_naming_it(
    http: httpx.AsyncClient, acme_key: str, turns: list[dict[str, str]], field: str, message: str
) -> None:
    response = await http.post(URL, json={"old_version": 1, "turns": turns}, headers=bearer(acme_key))
    assert response.status_code == 422, response.text
    problem = response.json()
    assert problem["field"] == field
    assert problem["detail"].startswith(f"{field}: {message}"), problem
