"""The service through a database outage, on a real PostgreSQL that the test stops, SIGKILLs and freezes under load:
matches keep being answered from memory (with ``Norma-Stale-Since``), every 503 carries ``Retry-After``, no write
is acknowledged and lost or failed and committed, the service recovers without a restart, and a frozen database
fails a write within its deadline without committing it later."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import psycopg
import pytest

from norma.service import ServiceSettings, create_app
from norma.service._auth import Principal
from norma.service._outage import KeyCache
from tests._pgserver import ControlledServer, controlled_postgres, fresh_database
from tests.service._outage_load import Answer, OutageLoad
from tests.service._server import serve_app
from tests.service.conftest import ADMIN_KEY, RULES, bearer

pytestmark = pytest.mark.slow

MESSAGE = {"message": "I lost my card, someone stole my wallet"}


@pytest.fixture(scope="module")
def server() -> Iterator[ControlledServer]:
    with controlled_postgres() as controlled:
        yield controlled


def _settings(url: str, **extra: Any) -> ServiceSettings:
    fields: dict[str, Any] = {
        "db_url": url,
        "admin_key": ADMIN_KEY,
        "rate_limit": 0,
        "store_connect_timeout": 2.0,
        "store_read_timeout": 1.0,
        "store_write_timeout": 2.0,
        "playground": False,
    }
    return ServiceSettings(**{**fields, **extra})


def _until(done: Callable[[], bool], what: str, limit: float = 120.0) -> None:
    """Wait for an event (``done()`` true); the limit only guards a hang, it is no speed requirement."""
    deadline = time.monotonic() + limit
    while not done():
        assert time.monotonic() < deadline, f"not {what} within {limit:g} s"
        time.sleep(0.05)


def _written_since(load: OutageLoad, moment: float) -> list[float]:
    """When the writes acknowledged after ``moment`` were answered."""
    return [w.answered for w in load.writes if w.answered > moment and w.status == 200]


def _stored_rule_ids(url: str) -> set[str]:
    with psycopg.connect(url, connect_timeout=5) as conn:
        return {r[0] for r in conn.execute("SELECT rule_id FROM rules WHERE tenant_id = 'shop'").fetchall()}


def _tenant_key(http: httpx.Client, base: str) -> dict[str, str]:
    key = http.post(f"{base}/v1/tenants/shop/keys", json={"name": "bot"}, headers=bearer(ADMIN_KEY))
    assert key.status_code == 201, key.text
    auth = bearer(key.json()["secret"])
    imported = http.post(f"{base}/v1/tenants/shop/rules", json={"rules": RULES}, headers=auth)
    assert imported.status_code == 200, imported.text
    return auth


def test_matches_answer_from_memory_through_a_stop_and_a_kill(
    server: ControlledServer, caplog: pytest.LogCaptureFixture
) -> None:
    url = fresh_database(server.url, prefix="norma_outage")
    caplog.set_level(logging.INFO, logger="norma.service")
    # a stopped or killed server refuses at once; long deadlines keep a loaded machine's slow query from being
    # taken for an outage (the deadlines are the frozen-database test's subject)
    app = create_app(_settings(url, store_connect_timeout=10.0, store_read_timeout=10.0, store_write_timeout=10.0))
    with serve_app(app) as base, httpx.Client(timeout=30) as http:
        auth = _tenant_key(http, base)
        unused = http.post(f"{base}/v1/tenants/shop/keys", json={"name": "idle"}, headers=bearer(ADMIN_KEY)).json()
        assert http.post(f"{base}/v1/tenants/shop/match", json=MESSAGE, headers=auth).status_code == 200
        outages: list[tuple[float, float]] = []
        fresh: list[Answer] = []
        with OutageLoad(base, auth, MESSAGE, match_pause=0.01, write_pause=0.05, timeout=30) as load:
            _until(lambda: sum(m.status == 200 for m in load.matches) >= 20, "20 matches answered")
            for breaker in (server.stop, server.kill):
                breaker()  # returns once PostgreSQL is down (a stop can take seconds on a loaded machine)
                _until(lambda: http.get(f"{base}/v1/ready").status_code == 503, "the store said unreachable")
                down = time.monotonic()  # the service knows: every match sent from now on is answered from memory
                # a key the store never verified before the outage cannot be checked: 503, not 401 and not 200
                idle = http.post(f"{base}/v1/tenants/shop/match", json=MESSAGE, headers=bearer(unused["secret"]))
                assert idle.status_code == 503, idle.text
                assert idle.headers["retry-after"] == "1"
                ready = http.get(f"{base}/v1/ready")
                assert ready.status_code == 503
                assert "retry-after" in ready.headers
                assert ready.json()["checks"]["store"].startswith("unreachable since ")
                _until(lambda d=down: sum(m.stale for m in load.matches if m.sent > d) >= 30, "30 matches from memory")
                server.start()
                up = time.monotonic()
                outages.append((down, up))
                _until(lambda u=up: bool(_written_since(load, u)), "a write acknowledged after the restart")
                _until(lambda: http.get(f"{base}/v1/ready").status_code == 200, "ready again")
                again = time.monotonic()
                _until(lambda a=again: sum(m.sent > a for m in load.matches) >= 10, "10 matches after recovering")
                fresh = [m for m in load.matches if m.sent > again]
                assert all(m.status == 200 and not m.stale for m in fresh)

    for down, up in outages:
        during = [m for m in load.matches if m.sent > down and m.answered < up]
        answered = [m for m in during if m.status == 200]
        assert len(during) >= 30
        assert len(answered) / len(during) >= 0.95, f"{len(answered)} of {len(during)} matches answered"
        assert all(m.stale for m in answered)
    assert all(m.status in (200, 503) for m in load.matches)
    every_503 = [a for a in (*load.matches, *load.writes) if a.status == 503]
    assert all(a.retry_after for a in every_503)
    assert fresh

    stored = _stored_rule_ids(url)
    acknowledged = {w.rule_id for w in load.writes if w.status == 200}
    failed = {w.rule_id for w in load.writes if w.status != 200}
    # a write whose COMMIT the outage cut may be stored if the server was not back by its deadline to say: its 503
    # says so (tests/store/test_commit_outcome.py); every other failed write must not be
    in_doubt = {w.rule_id for w in load.writes if w.status == 503 and "may be stored" in w.detail}
    assert acknowledged
    assert failed
    assert acknowledged <= stored, f"acknowledged and lost: {sorted(acknowledged - stored)}"
    assert not (failed - in_doubt) & stored, f"failed and committed: {sorted((failed - in_doubt) & stored)}"
    assert all(w.status in (200, 503) for w in load.writes)

    store_lines = [r.getMessage() for r in caplog.records if r.name == "norma.service"]
    assert sum("rule store unreachable" in line for line in store_lines) == 2
    assert sum("rule store reachable again" in line for line in store_lines) == 2
    assert not [line for line in store_lines if line.startswith("request failed")]


def test_a_frozen_database_fails_a_write_within_its_deadline_and_never_commits_it(server: ControlledServer) -> None:
    url = fresh_database(server.url, prefix="norma_frozen")
    app = create_app(_settings(url))
    with serve_app(app) as base, httpx.Client(timeout=60) as http:
        auth = _tenant_key(http, base)
        assert http.post(f"{base}/v1/tenants/shop/match", json=MESSAGE, headers=auth).status_code == 200
        server.freeze()
        try:
            started = time.monotonic()
            body = {"condition_text": "customer asks about the weather"}
            written = http.put(f"{base}/v1/tenants/shop/rules/weather", json=body, headers=auth)
            waited = time.monotonic() - started
            assert written.status_code == 503, written.text
            assert written.json()["detail"] == "the rule store is unreachable; nothing was written"
            assert "retry-after" in written.headers
            # a key check (1 s), then the write: a connection (2 s) and its deadline (2 s + 0.5 s)
            assert waited < 7.0, f"the write waited {waited:.1f} s"
            matched = http.post(f"{base}/v1/tenants/shop/match", json=MESSAGE, headers=auth)
            assert matched.status_code == 200
            assert "norma-stale-since" in matched.headers
            assert matched.json()["matches"][0]["rule"]["id"] == "lost-card"
        finally:
            server.thaw()
        time.sleep(1.5)
        assert "weather" not in _stored_rule_ids(url)
        deadline = time.monotonic() + 5
        while http.get(f"{base}/v1/tenants/shop/rules/greeting", headers=auth).status_code != 200:
            assert time.monotonic() < deadline, "the service did not recover after the database woke"
            time.sleep(0.2)
        again = http.put(f"{base}/v1/tenants/shop/rules/weather", json=body, headers=auth)
        assert again.status_code == 200
        assert "weather" in _stored_rule_ids(url)


def test_a_key_is_accepted_from_memory_only_within_stale_for() -> None:
    cache = KeyCache(stale_for=0.3)
    principal = Principal(key_id="abc", tenant_id="shop", admin=False)
    cache.verified("nrm_abc_secret", principal)
    known = cache.recent("nrm_abc_secret")
    assert known is not None
    assert known.key_id == "abc"
    assert known.stale_since is not None
    assert cache.recent("nrm_abc_other") is None
    time.sleep(0.35)
    assert cache.recent("nrm_abc_secret") is None  # verified too long ago
    cache.verified("nrm_abc_secret", principal)
    cache.rejected("nrm_abc_secret")  # the store said no (revoked): forgotten at once
    assert cache.recent("nrm_abc_secret") is None
