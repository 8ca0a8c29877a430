"""Limits and the error table: 413 body cap, 429 + Retry-After, 503 on timeouts and store failures, every status."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from norma.errors import (
    AuthenticationError,
    BackendError,
    ConfigError,
    ConflictError,
    ForbiddenError,
    InvalidInputError,
    LimitExceededError,
    MissingDependencyError,
    NormaError,
    NotFoundError,
    RateLimitedError,
    RubricError,
    StoreError,
)
from norma.service import ERROR_STATUS, RequestTimeoutError, UnauthorizedError, create_app, status_for
from norma.service._auth import FailedAuthLimiter, RateLimiter, key_id_of
from norma.store import RuleStore
from tests.service.conftest import ADMIN_KEY, asgi_client, bearer, make_settings

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (InvalidInputError("x"), 400),
        (RubricError("x"), 400),
        (LimitExceededError("x"), 413),
        (NotFoundError("x"), 404),
        (ConflictError("x"), 409),
        (RateLimitedError("x", retry_after=2), 429),
        (StoreError("x"), 503),
        (BackendError("x"), 503),
        (MissingDependencyError("x", install="pip install x"), 503),
        (ConfigError("x"), 503),
        (AuthenticationError("x"), 401),
        (UnauthorizedError("x"), 401),
        (ForbiddenError("x"), 403),
        (RequestTimeoutError(1.0), 503),
        (NormaError("x"), 500),
        (RuntimeError("x"), 500),
    ],
)
def test_error_table(error: BaseException, status: int) -> None:
    assert status_for(error) == status


def test_error_table_covers_every_error_class() -> None:
    import norma.errors

    classes = {getattr(norma.errors, name) for name in norma.errors.__all__} | {UnauthorizedError, RequestTimeoutError}
    assert set(ERROR_STATUS) <= classes
    for cls in classes - {norma.errors.NormaError}:  # every error raised on purpose has a non-500 status
        assert status_for(cls.__new__(cls)) in {400, 401, 403, 404, 409, 413, 429, 503}, cls


async def test_body_over_the_cap_is_413_before_any_work(store: RuleStore, acme_key: str) -> None:
    app = create_app(make_settings(max_body_bytes=2048), store=store)
    before = store.version("acme")
    big = {"rules": [{"id": f"r{i}", "condition_text": "x" * 100} for i in range(40)]}
    async with asgi_client(app) as client:
        response = await client.post("/v1/tenants/acme/rules", json=big, headers=bearer(acme_key))
        assert response.status_code == 413
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["field"] == "body"

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the cap counts streamed bytes
            for _ in range(10):
                yield b" " * 1000

        streamed = await client.post(
            "/v1/tenants/acme/match", content=chunks(), headers={**bearer(acme_key), "content-type": "application/json"}
        )
        assert streamed.status_code == 413
        small = await client.post("/v1/rubrics/validate", json={"rubric": {}}, headers=bearer(acme_key))
        assert small.status_code == 200
    assert store.version("acme") == before


async def test_rate_limit_is_429_with_retry_after(store: RuleStore, acme_key: str, globex_key: str) -> None:
    app = create_app(make_settings(rate_limit=0.5, rate_burst=3), store=store)
    # a clock that stands still: no token comes back however slowly a loaded machine runs the requests
    app.state.norma.limiter = RateLimiter(0.5, 3, clock=lambda: 100.0)
    async with asgi_client(app) as client:
        statuses = [(await client.get("/v1/tenants/acme", headers=bearer(acme_key))).status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        limited = await client.get("/v1/tenants/acme", headers=bearer(acme_key))
        assert limited.status_code == 429
        assert limited.headers["retry-after"] == "2"
        assert limited.json()["title"] == "too many requests"
        # per key: another key still has its whole burst
        assert (await client.get("/v1/tenants/globex", headers=bearer(globex_key))).status_code == 200


def test_rate_limiter_refills_at_its_rate() -> None:
    now = [100.0]
    limiter = RateLimiter(rate=2.0, burst=2, clock=lambda: now[0])
    limiter.check("k")
    limiter.check("k")
    with pytest.raises(RateLimitedError) as info:
        limiter.check("k")
    assert info.value.retry_after == 1.0
    now[0] += 0.5  # one token back
    limiter.check("k")
    with pytest.raises(RateLimitedError):
        limiter.check("k")
    RateLimiter(rate=0, burst=1).check("k")  # 0 turns the limit off
    for _ in range(5):
        RateLimiter(rate=0, burst=1).check("k")


async def test_slow_request_is_503_after_the_timeout(store: RuleStore, acme_key: str) -> None:
    app = create_app(make_settings(request_timeout=0.001), store=store)
    body = {"name": "Maximilian Alexander Richardson", "count": 40, "seed": 1}
    async with asgi_client(app) as client:
        response = await client.post("/v1/names/generate", json=body, headers=bearer(acme_key))
    assert response.status_code == 503
    assert "longer than 0.001 s" in response.json()["detail"]


async def test_store_down_is_503_and_not_ready() -> None:
    app = create_app(make_settings(db_url="postgresql://nobody@127.0.0.1:1/none?connect_timeout=2"))
    async with asgi_client(app) as client:
        rules = await client.get("/v1/tenants/acme/rules", headers=bearer(ADMIN_KEY))
        assert rules.status_code == 503
        assert rules.json()["title"] == "service unavailable"
        assert "nobody" not in rules.text or "***" in rules.text
        ready = await client.get("/v1/ready")
        assert ready.status_code == 503
        assert ready.json()["checks"]["store"].startswith("unreachable since ")
        assert ready.headers["retry-after"] == "1"


async def test_health_and_ready(client: httpx.AsyncClient) -> None:
    health = await client.get("/v1/health")
    assert health.status_code == 200
    assert health.json()["status"] == "ok"
    ready = await client.get("/v1/ready")
    assert ready.json() == {
        "status": "ready",
        "version": health.json()["version"],
        "checks": {"store": "ok", "embedder": "ok"},
    }


def test_failed_authentications_are_limited_per_address_and_key_id() -> None:
    now = [0.0]
    limiter = FailedAuthLimiter(rate=0.5, burst=2, clock=lambda: now[0])
    limiter.check_address("10.0.0.1")
    limiter.failed("10.0.0.1", None)
    limiter.failed("10.0.0.1", None)
    with pytest.raises(RateLimitedError) as refused:  # the address is stopped before its key is looked at
        limiter.check_address("10.0.0.1")
    assert refused.value.retry_after == 2
    assert "client address" in refused.value.message
    with pytest.raises(RateLimitedError):
        limiter.failed("10.0.0.1", None)
    limiter.check_address("10.0.0.2")  # other addresses are not affected
    now[0] = 2.0  # one failure's worth refilled
    limiter.check_address("10.0.0.1")
    # a key id: failures from many addresses add up; its right secret is never asked about (no check_key_id)
    limiter.failed("10.1.0.1", "0123456789ab")
    limiter.failed("10.1.0.2", "0123456789ab")
    with pytest.raises(RateLimitedError) as by_key:
        limiter.failed("10.1.0.3", "0123456789ab")
    assert "0123456789ab" in by_key.value.message
    FailedAuthLimiter(rate=0, burst=1).failed("a", "b")  # 0 turns it off
    FailedAuthLimiter(rate=0, burst=1).failed("a", "b")


def test_key_ids_are_read_from_stored_key_secrets(acme_key: str) -> None:
    assert key_id_of(acme_key) == acme_key.split("_")[1]
    assert key_id_of("nrm_0123456789ab_token") == "0123456789ab"
    for secret in ("bogus", "nrm_0123456789AB_token", "nrm_0123456789ab_", "nrm_012345_token", "xyz_0123456789ab_t"):
        assert key_id_of(secret) is None
