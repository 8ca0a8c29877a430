"""The edge: security headers, CORS off by default, request ids, structured access logs that never hold a secret."""

from __future__ import annotations

import json
import logging

import httpx
import pytest

from norma.service import SETTINGS_ENV, ServiceSettings, create_app
from norma.service._logging import JsonFormatter
from norma.service._middleware import PAGE_CSP
from norma.store import RuleStore
from tests.service.conftest import ADMIN_KEY, bearer, make_settings

pytestmark = pytest.mark.anyio


async def test_playground_page_has_security_headers(client: httpx.AsyncClient) -> None:
    page = await client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == PAGE_CSP
    assert "'unsafe-inline'" not in PAGE_CSP
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert page.headers["referrer-policy"] == "no-referrer"
    assert "<script" in page.text
    assert 'src="/static/app.js"' in page.text
    script = await client.get("/static/app.js")
    assert script.status_code == 200
    assert script.headers["content-security-policy"] == PAGE_CSP


async def test_api_responses_are_not_documents(client: httpx.AsyncClient) -> None:
    response = await client.get("/v1/health")
    assert response.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"
    assert response.headers["cache-control"] == "no-store"


async def test_cors_is_off_by_default_and_on_when_configured(store: RuleStore) -> None:
    preflight = {
        "Origin": "https://app.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization",
    }
    off = create_app(make_settings(), store=store)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=off), base_url="http://t") as client:
        response = await client.options("/v1/tenants/acme/match", headers=preflight)
        assert "access-control-allow-origin" not in response.headers
        plain = await client.get("/v1/health", headers={"Origin": "https://app.example"})
        assert "access-control-allow-origin" not in plain.headers
    on = create_app(make_settings(cors_origins=["https://app.example"]), store=store)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=on), base_url="http://t") as client:
        response = await client.options("/v1/tenants/acme/match", headers=preflight)
        assert response.headers["access-control-allow-origin"] == "https://app.example"
        other = await client.options("/v1/tenants/acme/match", headers={**preflight, "Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in other.headers


async def test_request_id_is_echoed_or_made(client: httpx.AsyncClient) -> None:
    given = await client.get("/v1/health", headers={"X-Request-ID": "abc-123"})
    assert given.headers["x-request-id"] == "abc-123"
    hostile = await client.get("/v1/health", headers={"X-Request-ID": "a b\tc" * 30})
    assert len(hostile.headers["x-request-id"]) == 32


async def test_access_log_is_structured_and_never_holds_a_key(
    client: httpx.AsyncClient, acme_key: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="norma")
    await client.get("/v1/tenants/acme/rules?tag=billing", headers=bearer(acme_key))
    await client.get("/v1/tenants/acme/rules", headers=bearer("nrm_000000000000_wrongsecretvalue"))
    await client.post("/v1/tenants/acme/match", json={"message": "x"}, headers={"X-API-Key": ADMIN_KEY})
    records = [r for r in caplog.records if r.name == "norma.access"]
    assert len(records) == 3
    lines = [json.loads(JsonFormatter().format(r)) for r in records]
    assert lines[0]["status"] == 200
    assert lines[0]["key_id"] == acme_key.split("_")[1]
    assert lines[0]["path"] == "/v1/tenants/acme/rules"  # no query string
    assert lines[1]["status"] == 401
    assert lines[1]["key_id"] is None
    assert lines[2]["key_id"] == "admin"
    assert {"request_id", "method", "duration_ms", "bytes_in", "bytes_out", "client"} <= set(lines[0])
    everything = caplog.text + "".join(JsonFormatter().format(r) for r in caplog.records)
    for secret in (acme_key, "wrongsecretvalue", ADMIN_KEY):
        assert secret not in everything


def test_settings_from_env_and_back() -> None:
    settings = ServiceSettings(admin_key="s3cret", rate_limit=5, cors_origins=("https://a.example",))
    assert "s3cret" not in repr(settings)
    again = ServiceSettings.from_env({SETTINGS_ENV: settings.to_env()})
    assert again == settings
    assert again.admin_key is not None
    assert again.admin_key.get_secret_value() == "s3cret"
    plain = ServiceSettings.from_env(
        {"NORMA_DB_URL": "sqlite:///x.db", "NORMA_RATE_LIMIT": "7", "NORMA_CORS_ORIGINS": "https://a, https://b"}
    )
    assert (plain.db_url, plain.rate_limit, plain.cors_origins) == ("sqlite:///x.db", 7.0, ("https://a", "https://b"))
    assert ServiceSettings.from_env({}).cors_origins == ()
    limits = ServiceSettings.from_env(
        {
            "NORMA_MAX_HEADER_BYTES": "2048",
            "NORMA_MAX_HEAD_BYTES": "16384",
            "NORMA_HEADER_TIMEOUT": "2.5",
            "NORMA_BODY_TIMEOUT": "7",
            "NORMA_MAX_CONNECTIONS": "64",
            "NORMA_AUTH_FAILURE_RATE": "0.5",
            "NORMA_AUTH_FAILURE_BURST": "3",
        }
    )
    assert (limits.max_header_bytes, limits.max_head_bytes, limits.max_connections) == (2048, 16384, 64)
    assert (limits.header_timeout, limits.body_timeout) == (2.5, 7.0)
    assert (limits.auth_failure_rate, limits.auth_failure_burst) == (0.5, 3)


@pytest.mark.parametrize(
    "environ",
    [
        {SETTINGS_ENV: "{nope"},
        {SETTINGS_ENV: "[1]"},
        {"NORMA_RATE_LIMIT": "-1"},
        {"NORMA_MAX_BODY_BYTES": "big"},
        {"NORMA_HEADER_TIMEOUT": "0"},
        {"NORMA_MAX_HEADER_BYTES": "65536", "NORMA_MAX_HEAD_BYTES": "32768"},
    ],
)
def test_bad_settings_are_config_errors(environ: dict[str, str]) -> None:
    from norma.errors import ConfigError

    with pytest.raises(ConfigError):
        ServiceSettings.from_env(environ)
