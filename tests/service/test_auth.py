"""Authentication and tenant isolation: 401 without a valid key, 404 on another tenant's routes, 403 on admin routes."""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest

from norma.store import RuleStore
from tests.service.conftest import ADMIN_KEY, bearer

pytestmark = pytest.mark.anyio

TENANT_ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/v1/tenants/{t}", None),
    ("GET", "/v1/tenants/{t}/rules", None),
    ("POST", "/v1/tenants/{t}/rules", {"rules": [{"id": "x", "condition_text": "anything"}]}),
    ("GET", "/v1/tenants/{t}/rules/refund", None),
    ("PUT", "/v1/tenants/{t}/rules/refund", {"condition_text": "overwritten"}),
    ("DELETE", "/v1/tenants/{t}/rules/refund", None),
    ("GET", "/v1/tenants/{t}/rules/refund/history", None),
    ("POST", "/v1/tenants/{t}/match", {"message": "I want a refund"}),
]
ADMIN_ROUTES: list[tuple[str, str, Any]] = [
    ("GET", "/v1/tenants", None),
    ("POST", "/v1/tenants/acme/keys", {"name": "x"}),
    ("GET", "/v1/tenants/acme/keys", None),
    ("DELETE", "/v1/keys/000000000000", None),
]
TOOL_ROUTES: list[tuple[str, str, Any]] = [
    ("POST", "/v1/rubrics/validate", {"rubric": {}}),
    ("POST", "/v1/names/query", {"seed": 1}),
]


async def _call(
    client: httpx.AsyncClient, method: str, url: str, body: object, headers: dict[str, str]
) -> httpx.Response:
    return await client.request(method, url, json=body, headers=headers)


@pytest.mark.parametrize(("method", "url", "body"), TENANT_ROUTES + ADMIN_ROUTES + TOOL_ROUTES)
async def test_no_key_is_401_problem(client: httpx.AsyncClient, method: str, url: str, body: object) -> None:
    response = await _call(client, method, url.format(t="acme"), body, {})
    assert response.status_code == 401
    assert response.headers["content-type"] == "application/problem+json"
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["status"] == 401


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer nrm_000000000000_notarealsecret"},
        {"Authorization": "Bearer garbage"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"X-API-Key": "nrm_zzzzzzzzzzzz_x"},
        {"Authorization": "Bearer " + "a" * 600},
    ],
)
async def test_bad_key_is_401(client: httpx.AsyncClient, headers: dict[str, str]) -> None:
    response = await client.get("/v1/tenants/acme/rules", headers=headers)
    assert response.status_code == 401


async def test_key_in_x_api_key_header_works(client: httpx.AsyncClient, acme_key: str) -> None:
    response = await client.get("/v1/tenants/acme", headers={"X-API-Key": acme_key})
    assert response.status_code == 200
    assert response.json()["tenant_id"] == "acme"


@pytest.mark.parametrize(("method", "url", "body"), TENANT_ROUTES)
async def test_other_tenants_routes_are_404_and_change_nothing(
    client: httpx.AsyncClient, store: RuleStore, globex_key: str, method: str, url: str, body: object
) -> None:
    before = (store.version("acme"), [r.to_dict() for r in store.list_rules("acme")])
    response = await _call(client, method, url.format(t="acme"), body, bearer(globex_key))
    assert response.status_code == 404
    assert response.json()["detail"] == "tenant 'acme' not found"
    assert (store.version("acme"), [r.to_dict() for r in store.list_rules("acme")]) == before
    # the same answer as a tenant that does not exist at all: no existence leak
    missing = await _call(client, method, url.format(t="no-such-tenant"), body, bearer(globex_key))
    assert missing.status_code == 404
    assert missing.json()["detail"] == "tenant 'no-such-tenant' not found"


async def test_randomised_cross_tenant_attempts_never_succeed(
    client: httpx.AsyncClient, store: RuleStore, acme_key: str, globex_key: str
) -> None:
    rng = random.Random(20261122)
    keys = {"acme": acme_key, "globex": globex_key}
    for _ in range(60):
        method, url, body = rng.choice(TENANT_ROUTES)
        owner = rng.choice(["acme", "globex"])
        target = "globex" if owner == "acme" else rng.choice(["acme", "initech", "ACME", "acme "])
        response = await _call(client, method, url.format(t=target), body, bearer(keys[owner]))
        assert response.status_code == 404, (method, url, owner, target)


@pytest.mark.parametrize(("method", "url", "body"), ADMIN_ROUTES)
async def test_admin_routes_refuse_tenant_keys(
    client: httpx.AsyncClient, acme_key: str, method: str, url: str, body: object
) -> None:
    response = await _call(client, method, url, body, bearer(acme_key))
    assert response.status_code == 403


async def test_admin_key_manages_keys_end_to_end(client: httpx.AsyncClient) -> None:
    admin = bearer(ADMIN_KEY)
    created = await client.post("/v1/tenants/initech/keys", json={"name": "bot"}, headers=admin)
    assert created.status_code == 201
    secret, key_id = created.json()["secret"], created.json()["key_id"]
    assert secret.startswith(f"nrm_{key_id}_")
    assert (await client.get("/v1/tenants/initech", headers=bearer(secret))).status_code == 200
    listed = await client.get("/v1/tenants/initech/keys", headers=admin)
    assert [k["key_id"] for k in listed.json()["keys"]] == [key_id]
    assert secret not in listed.text
    assert (await client.delete(f"/v1/keys/{key_id}", headers=admin)).status_code == 204
    assert (await client.get("/v1/tenants/initech", headers=bearer(secret))).status_code == 401
    assert (await client.delete("/v1/keys/ffffffffffff", headers=admin)).status_code == 404


async def test_stored_admin_key_works_on_every_tenant(client: httpx.AsyncClient, store: RuleStore) -> None:
    secret = store.create_api_key(None, admin=True, name="ops")
    tenants = await client.get("/v1/tenants", headers=bearer(secret))
    assert tenants.status_code == 200
    assert {"acme", "globex"} <= set(tenants.json()["tenants"])
    for tenant in ("acme", "globex"):
        assert (await client.get(f"/v1/tenants/{tenant}/rules", headers=bearer(secret))).status_code == 200


async def test_tool_routes_take_any_valid_key(client: httpx.AsyncClient, acme_key: str) -> None:
    response = await client.post("/v1/names/query", json={"seed": 1, "name": "John Smith"}, headers=bearer(acme_key))
    assert response.status_code == 200
