"""The service through a database outage, on a real PostgreSQL that the test stops, SIGKILLs and freezes under load:
matches keep being answered from memory (with ``Norma-Stale-Since``), every 503 carries ``Retry-After``, no write
is acknowledged and lost or failed and committed, the service recovers without a restart, and a frozen database
fails a write within its deadline without committing it later."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import psycopg
import pytest

from norma.service import ServiceSettings, create_app
from norma.service._auth import Principal
from norma.service._outage import KeyCache
from tests._pgserver import ControlledServer, controlled_postgres, fresh_database
from tests.service._server import serve_app
from tests.service.conftest import ADMIN_KEY, RULES, bearer

pytestmark = pytest.mark.slow

MESSAGE = {"message": "I lost my card, someone stole my wallet"}


@pytest.fixture(scope="module")
def server() -> Iterator[ControlledServer]:
    with controlled_postgres() as controlled:
        yield controlled


def _settings(url: str, **extra: Any) -> ServiceSettings:
    return ServiceSettings(
        db_url=url,
        admin_key=ADMIN_KEY,
        rate_limit=0,
        store_connect_timeout=2.0,
        store_read_timeout=1.0,
        store_write_timeout=2.0,
        playground=False,
        **extra,
    )


@dataclass
class _Load:
    """Four clients matching and one writing, each answer recorded with the time it came."""

    base: str
    auth: dict[str, str]
    matches: list[tuple[float, int, httpx.Headers]] = field(default_factory=list)
    writes: list[tuple[float, str, int, httpx.Headers]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def matcher(self) -> None:
        with httpx.Client(timeout=30) as http:
            while not self.stop.is_set():
                r = http.post(f"{self.base}/v1/tenants/shop/match", json=MESSAGE, headers=self.auth)
                self.matches.append((time.monotonic(), r.status_code, r.headers))
                time.sleep(0.01)

    def writer(self) -> None:
        with httpx.Client(timeout=30) as http:
            n = 0
            while not self.stop.is_set():
                n += 1
                rule_id = f"w-{n:04d}"
                body = {"condition_text": f"customer mentions order number {n}", "examples": [f"order {n}"]}
                r = http.put(f"{self.base}/v1/tenants/shop/rules/{rule_id}", json=body, headers=self.auth)
                self.writes.append((time.monotonic(), rule_id, r.status_code, r.headers))
                time.sleep(0.05)

    def __enter__(self) -> _Load:
        self.threads = [threading.Thread(target=self.matcher) for _ in range(4)]
        self.threads.append(threading.Thread(target=self.writer))
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def between(self, start: float, end: float) -> list[tuple[float, int, httpx.Headers]]:
        return [m for m in self.matches if start <= m[0] <= end]


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
    app = create_app(_settings(url))
    with serve_app(app) as base, httpx.Client(timeout=30) as http:
        auth = _tenant_key(http, base)
        unused = http.post(f"{base}/v1/tenants/shop/keys", json={"name": "idle"}, headers=bearer(ADMIN_KEY)).json()
        assert http.post(f"{base}/v1/tenants/shop/match", json=MESSAGE, headers=auth).status_code == 200
        outages: list[tuple[float, float]] = []
        recoveries: list[float] = []
        with _Load(base, auth) as load:
            time.sleep(1.5)
            for breaker in (server.stop, server.kill):
                down = time.monotonic()
                breaker()
                time.sleep(3.0)
                # a key the store never verified before the outage cannot be checked: 503, not 401 and not 200
                idle = http.post(f"{base}/v1/tenants/shop/match", json=MESSAGE, headers=bearer(unused["secret"]))
                assert idle.status_code == 503, idle.text
                assert idle.headers["retry-after"] == "1"
                ready = http.get(f"{base}/v1/ready")
                assert ready.status_code == 503
                assert "retry-after" in ready.headers
                assert ready.json()["checks"]["store"].startswith("unreachable since ")
                server.start()
                up = time.monotonic()
                outages.append((down, up))
                while time.monotonic() - up < 10 and not any(t > up and s == 200 for t, _, s, _ in load.writes):
                    time.sleep(0.05)
                recoveries.append(min((t for t, _, s, _ in load.writes if t > up and s == 200), default=999) - up)
                time.sleep(2.0)
        assert http.get(f"{base}/v1/ready").status_code == 200

    for down, up in outages:
        during = load.between(down + 0.2, up)  # the answers in flight when it went down aside
        answered = [m for m in during if m[1] == 200]
        assert len(during) > 20
        assert len(answered) / len(during) >= 0.95, f"{len(answered)} of {len(during)} matches answered"
        assert all("norma-stale-since" in h for _, _, h in answered[5:])
    assert all(s in (200, 503) for _, s, _ in load.matches)
    every_503 = [h for _, s, h in load.matches if s == 503] + [h for _, _, s, h in load.writes if s == 503]
    assert all("retry-after" in h for h in every_503)
    assert max(recoveries) < 3.0, f"writes came back {recoveries} s after PostgreSQL did"
    fresh = [m for m in load.matches if m[0] > outages[-1][1] + recoveries[-1] + 0.5]
    assert fresh
    assert all(s == 200 and "norma-stale-since" not in h for _, s, h in fresh)

    stored = _stored_rule_ids(url)
    acknowledged = {rule for _, rule, s, _ in load.writes if s == 200}
    failed = {rule for _, rule, s, _ in load.writes if s != 200}
    assert acknowledged
    assert failed
    assert acknowledged <= stored, f"acknowledged and lost: {sorted(acknowledged - stored)}"
    assert not failed & stored, f"failed and committed: {sorted(failed & stored)}"
    assert all(s in (200, 503) for _, _, s, _ in load.writes)

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
