"""Tenant rule routes: bulk import (all or nothing), get, put, delete, history, filters; errors name the field."""

from __future__ import annotations

import httpx
import pytest

from norma.store import RuleStore
from tests.service.conftest import ADMIN_KEY, bearer

pytestmark = pytest.mark.anyio


async def test_import_then_list_get_history_delete(client: httpx.AsyncClient, store: RuleStore) -> None:
    admin = bearer(ADMIN_KEY)
    book = {
        "format": "norma.rulebook/v1",
        "rules": [
            {"id": "a", "condition_text": "customer asks about opening hours", "tags": ["info"]},
            {"id": "b", "condition_text": "customer is angry", "priority": 5, "enabled": False},
        ],
    }
    written = await client.post("/v1/tenants/rules-t1/rules", json=book, headers=admin)
    assert written.status_code == 200, written.text
    assert written.json() == {"tenant_id": "rules-t1", "version": 1, "count": 2}
    listed = (await client.get("/v1/tenants/rules-t1/rules", headers=admin)).json()
    assert [r["id"] for r in listed["rules"]] == ["a", "b"]
    assert listed["version"] == 1
    only_enabled = (await client.get("/v1/tenants/rules-t1/rules?enabled=true", headers=admin)).json()
    assert [r["id"] for r in only_enabled["rules"]] == ["a"]
    tagged = (await client.get("/v1/tenants/rules-t1/rules?tag=info", headers=admin)).json()
    assert [r["id"] for r in tagged["rules"]] == ["a"]
    rule = (await client.get("/v1/tenants/rules-t1/rules/b", headers=admin)).json()
    assert rule["priority"] == 5
    assert rule["tenant_id"] == "rules-t1"

    put = await client.put(
        "/v1/tenants/rules-t1/rules/b", json={"condition_text": "customer is very angry", "priority": 7}, headers=admin
    )
    assert put.status_code == 200
    assert put.json()["version"] == 2
    assert store.get_rule("rules-t1", "b").condition_text == "customer is very angry"

    deleted = await client.delete("/v1/tenants/rules-t1/rules/a", headers=admin)
    assert deleted.json() == {"tenant_id": "rules-t1", "version": 3, "count": 1}
    assert (await client.get("/v1/tenants/rules-t1/rules/a", headers=admin)).status_code == 404

    history = (await client.get("/v1/tenants/rules-t1/rules/a/history", headers=admin)).json()["history"]
    assert [(h["version"], h["tenant_version"], h["rule"] is None) for h in history] == [(1, 1, False), (2, 3, True)]
    info = (await client.get("/v1/tenants/rules-t1", headers=admin)).json()
    assert info == {"tenant_id": "rules-t1", "version": 3, "rules": 1}


async def test_bad_rulebook_reports_every_rule_and_writes_nothing(
    client: httpx.AsyncClient, store: RuleStore, acme_key: str
) -> None:
    before = store.version("acme")
    book = {
        "rules": [
            {"id": "ok-rule", "condition_text": "fine"},
            {"id": "bad-priority", "condition_text": "x", "priority": "high"},
            {"id": "no-condition"},
            {"id": "ok-rule", "condition_text": "duplicate"},
        ]
    }
    response = await client.post("/v1/tenants/acme/rules", json=book, headers=bearer(acme_key))
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/problem+json"
    problem = response.json()
    fields = [e["field"] for e in problem["errors"]]
    assert fields == ["rules[1].priority", "rules[2].condition_text", "rules[3].id"]
    assert problem["field"] == "rules[1].priority"
    assert store.version("acme") == before
    assert "ok-rule" not in {r.id for r in store.list_rules("acme")}


async def test_rulebook_for_another_tenant_is_rejected(client: httpx.AsyncClient, acme_key: str) -> None:
    book = {"tenant": "globex", "rules": [{"id": "x", "condition_text": "y"}]}
    response = await client.post("/v1/tenants/acme/rules", json=book, headers=bearer(acme_key))
    assert response.status_code == 400
    assert response.json()["field"] == "tenant"


async def test_body_schema_errors_are_422_naming_the_field(client: httpx.AsyncClient, acme_key: str) -> None:
    response = await client.post("/v1/tenants/acme/rules", json={"rulez": []}, headers=bearer(acme_key))
    assert response.status_code == 422
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"body.rules", "body.rulez"}
    malformed = await client.post(
        "/v1/tenants/acme/rules", content=b"{not json", headers={**bearer(acme_key), "content-type": "application/json"}
    )
    assert malformed.status_code == 422
    assert malformed.json()["field"].startswith("body")


async def test_put_with_mismatched_id_is_409(client: httpx.AsyncClient, acme_key: str) -> None:
    response = await client.put(
        "/v1/tenants/acme/rules/refund", json={"id": "other", "condition_text": "x"}, headers=bearer(acme_key)
    )
    assert response.status_code == 409
    assert response.json()["field"] == "id"


async def test_put_invalid_rule_is_400_naming_the_field(client: httpx.AsyncClient, acme_key: str) -> None:
    response = await client.put(
        "/v1/tenants/acme/rules/new-rule", json={"condition_text": "x", "scope": "step"}, headers=bearer(acme_key)
    )
    assert response.status_code == 400
    assert "step_id" in response.json()["detail"]


async def test_missing_rule_is_404(client: httpx.AsyncClient, acme_key: str) -> None:
    for method, url in [
        ("GET", "/v1/tenants/acme/rules/nope"),
        ("DELETE", "/v1/tenants/acme/rules/nope"),
        ("GET", "/v1/tenants/acme/rules/nope/history"),
    ]:
        response = await client.request(method, url, headers=bearer(acme_key))
        assert response.status_code == 404, (method, url)
        assert response.json()["title"] == "not found"


async def test_unknown_route_and_method_are_problems(client: httpx.AsyncClient, acme_key: str) -> None:
    missing = await client.get("/v1/nothing-here", headers=bearer(acme_key))
    assert missing.status_code == 404
    assert missing.headers["content-type"] == "application/problem+json"
    wrong = await client.patch("/v1/tenants/acme/rules", headers=bearer(acme_key))
    assert wrong.status_code == 405
