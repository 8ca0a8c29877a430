"""The service's own errors (401, 403, a request timeout) are NormaErrors answered through the one error table,
with the problem bodies and headers they always had."""

from __future__ import annotations

import time

import httpx
import pytest

from norma.service import create_app
from norma.store import RuleStore
from tests.service.conftest import asgi_client, bearer, make_settings

pytestmark = pytest.mark.anyio

HINT_401 = "send `Authorization: Bearer <key>` (create one with `norma keys create --tenant T`)"


async def test_401_body_and_header(client: httpx.AsyncClient) -> None:
    missing = await client.get("/v1/tenants/acme")
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == 'Bearer realm="norma"'
    assert missing.headers["content-type"] == "application/problem+json"
    assert missing.json() == {
        "type": "urn:norma:problem:unauthorized",
        "title": "unauthorized",
        "status": 401,
        "detail": "an API key is required",
        "hint": HINT_401,
    }
    basic = await client.get("/v1/tenants/acme", headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert basic.json()["detail"] == "the Authorization header must use the Bearer scheme"
    unknown = await client.get("/v1/tenants/acme", headers=bearer("nrm_000000000000_notarealsecret"))
    assert unknown.json()["detail"] == "the API key is not valid"
    assert unknown.json()["hint"] == HINT_401


async def test_403_body(client: httpx.AsyncClient, acme_key: str) -> None:
    response = await client.get("/v1/tenants", headers=bearer(acme_key))
    assert response.status_code == 403
    assert response.headers["content-type"] == "application/problem+json"
    assert "www-authenticate" not in response.headers
    assert response.json() == {
        "type": "urn:norma:problem:forbidden",
        "title": "forbidden",
        "status": 403,
        "detail": "this route needs an admin key",
    }


async def test_timeout_body(store: RuleStore, acme_key: str, caplog: pytest.LogCaptureFixture) -> None:
    app = create_app(make_settings(request_timeout=0.05), store=store)

    @app.get("/v1/slow")
    async def slow() -> None:
        await app.state.norma.run(time.sleep, 0.5)

    async with asgi_client(app) as client:
        response = await client.get("/v1/slow")
    assert response.status_code == 503
    assert response.json() == {
        "type": "urn:norma:problem:service-unavailable",
        "title": "service unavailable",
        "status": 503,
        "detail": "the request took longer than 0.05 s",
        "hint": "retry later, or send less work per request",
    }
    assert not [r for r in caplog.records if r.name == "norma.service"]  # a timeout is load, not a fault
