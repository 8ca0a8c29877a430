"""Durability end to end: ``norma serve`` SIGKILLed during a bulk import over HTTP loses no committed batch and
leaves no partial one (SQLite and PostgreSQL).

A client imports a tenant's rules in batches (``POST /v1/tenants/{t}/rules``). Then a large batch (new rules plus a
rewrite of every rule already stored) is sent, and the server is SIGKILLed while it works on it: inside the store's
write transaction (seen from outside: SQLite's write lock held, or a PostgreSQL transaction with an xid open), or
while it is still validating and embedding the batch. Restarted on the same store: every batch answered 2xx is
there, the batch in flight is there whole or not at all, and the version history tells the same story (each tenant
version is exactly one batch, each rule's versions are 1..n, the stored rule is its last version). Sent again, the
lost batch lands whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from norma.embeddings import DEFAULT_MODEL_ID
from norma.store import RuleStore, open_store
from tests._pgserver import fresh_database
from tests.service._server import serve_process
from tests.service.conftest import ADMIN_KEY, bearer

pytestmark = pytest.mark.slow

TENANT = "bulk"
BATCH = 100
"""New rules per batch."""
COMMITTED = 3
"""Batches imported (and answered 200) before the kill."""
NOTES = "a note long enough to make the rewrite's write transaction last a while. " * 25
"""Bulky metadata: the batch in flight rewrites every stored rule with it, so its write takes tens of ms."""
BACKENDS = ["sqlite", "postgres"]


@dataclass(frozen=True)
class Batch:
    number: int
    rules: list[dict[str, Any]]
    """New rules ``b<number>-<i>``, then (for the batches sent in flight) a rewrite of earlier batches' rules."""

    @property
    def body(self) -> dict[str, Any]:
        return {"format": "norma.rulebook/v1", "tenant": TENANT, "rules": self.rules}

    @property
    def ids(self) -> set[str]:
        return {r["id"] for r in self.rules}


def _rule(rule_id: str, batch: int) -> dict[str, Any]:
    return {
        "id": rule_id,
        "condition_text": f"question {rule_id}",
        "priority": batch,
        "tags": [f"batch-{batch}"],
        "metadata": {"batch": batch, "notes": NOTES},
    }


def _batch(number: int, rewrite: int = 0) -> Batch:
    """``BATCH`` new rules, plus the rules of batches ``0..rewrite-1`` rewritten (same texts: no new vectors, so
    the write transaction is long and the embedding short)."""
    rules = [_rule(f"b{number}-{i:04d}", number) for i in range(BATCH)]
    rules += [_rule(f"b{k}-{i:04d}", number) for k in range(rewrite) for i in range(BATCH)]
    return Batch(number, rules)


# -- the store, seen from outside the server ------------------------------------------------------------------


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'norma.db'}"
    return fresh_database(request.getfixturevalue("pg_server_url"), prefix="norma_kill")


@contextlib.contextmanager
def _write_probe(url: str) -> Iterator[Callable[[], bool]]:
    """A function telling whether some connection has a write transaction open on the store at ``url``."""
    if url.startswith("sqlite:///"):
        conn = sqlite3.connect(url.removeprefix("sqlite:///"), timeout=0, isolation_level=None)

        def sqlite_writing() -> bool:
            try:
                conn.execute("BEGIN IMMEDIATE")  # the lock every writer of the file takes first
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) or "busy" in str(exc):
                    return True
                raise
            conn.execute("ROLLBACK")
            return False

        try:
            yield sqlite_writing
        finally:
            conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as pg:

        def postgres_writing() -> bool:
            # a transaction gets an xid once it writes or locks a row (the store locks the tenant's row first)
            row = pg.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND backend_xid IS NOT NULL"
            ).fetchone()
            return bool(row and row[0])

        yield postgres_writing


# -- the server -------------------------------------------------------------------------------------------------


@dataclass
class InFlight:
    """A batch POSTed from a thread; ``sent`` is set once the whole body is on the wire."""

    thread: threading.Thread
    sent: threading.Event
    outcome: list[Any]


def _post_in_thread(url: str, key: str, batch: Batch) -> InFlight:
    data = json.dumps(batch.body).encode()
    sent = threading.Event()
    outcome: list[Any] = []

    def body() -> Iterator[bytes]:
        yield data
        sent.set()  # httpx asks for the next chunk only after writing this one

    def post() -> None:
        headers = {**bearer(key), "content-type": "application/json", "content-length": str(len(data))}
        try:
            outcome.append(httpx.post(f"{url}/v1/tenants/{TENANT}/rules", content=body(), headers=headers, timeout=60))
        except httpx.HTTPError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=post, daemon=True)
    thread.start()
    return InFlight(thread, sent, outcome)


def _kill(proc: Any, flight: InFlight) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=20) == -signal.SIGKILL
    flight.thread.join(timeout=20)
    assert len(flight.outcome) == 1
    assert isinstance(flight.outcome[0], httpx.HTTPError), f"the batch was answered before the kill: {flight.outcome}"


def _import(http: httpx.Client, batch: Batch) -> int:
    response = http.post(f"/v1/tenants/{TENANT}/rules", json=batch.body)
    assert response.status_code == 200, response.text
    assert response.json()["count"] == len(batch.rules)
    return int(response.json()["version"])


# -- what the store must hold -----------------------------------------------------------------------------------


def _check_store(url: str, committed: list[Batch], in_flight: Batch, server: httpx.Client) -> bool:
    """Assert the store holds exactly ``committed`` in order, plus ``in_flight`` whole or not at all (which one is
    returned) and a consistent history; the restarted server must agree."""
    store = open_store(url)
    try:
        if url.startswith("sqlite:///"):
            with contextlib.closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as conn:
                assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        version = store.version(TENANT)
        assert version in (len(committed), len(committed) + 1), version
        present = version == len(committed) + 1
        applied = [*committed, in_flight] if present else committed
        expected: dict[str, dict[str, Any]] = {}
        for batch in applied:
            expected.update({r["id"]: r for r in batch.rules})
        rules = {r.id: r for r in store.list_rules(TENANT)}
        assert set(rules) == set(expected)
        for rule_id, rule in rules.items():
            want = expected[rule_id]
            assert (rule.priority, list(rule.tags), rule.metadata) == (want["priority"], want["tags"], want["metadata"])
        _check_history(store, applied, rules)
        vectors = store.load_vectors(TENANT, DEFAULT_MODEL_ID)
        assert set(vectors) == set(rules), "every stored rule has its vectors (written in the same transaction)"
    finally:
        store.close()
    info = server.get(f"/v1/tenants/{TENANT}").json()
    assert (info["version"], info["rules"]) == (version, len(expected))
    listed = server.get(f"/v1/tenants/{TENANT}/rules").json()["rules"]
    assert [r["id"] for r in listed] == sorted(expected)
    return present


def _check_history(store: RuleStore, applied: list[Batch], rules: dict[str, Any]) -> None:
    """Tenant version v is the v-th batch applied, exactly; each rule's versions are 1..n; its last version is the
    stored rule."""
    written_in: dict[int, set[str]] = {}
    for rule_id, rule in rules.items():
        history = store.history(TENANT, rule_id)
        assert [h.version for h in history] == list(range(1, len(history) + 1))
        assert [h.tenant_version for h in history] == sorted({h.tenant_version for h in history})
        assert history[-1].rule == rule
        for entry in history:
            assert entry.rule is not None
            assert entry.rule.metadata["batch"] == applied[entry.tenant_version - 1].number
            written_in.setdefault(entry.tenant_version, set()).add(rule_id)
    assert written_in == {index + 1: batch.ids for index, batch in enumerate(applied)}


# -- the test ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("moment", ["writing", "embedding"])
def test_sigkill_during_a_bulk_import_loses_no_committed_batch_and_leaves_no_partial_one(
    store_url: str, moment: str, tmp_path: Path
) -> None:
    env = {"NORMA_ADMIN_KEY": ADMIN_KEY}
    args = ["--db", store_url, "--max-body-bytes", str(16 * 1024 * 1024)]
    committed: list[Batch] = []
    in_flight = _batch(COMMITTED, rewrite=COMMITTED)

    with serve_process(args, log=tmp_path / "killed.log", env=env, cwd=tmp_path) as (url, proc):
        with httpx.Client(base_url=url, headers=bearer(ADMIN_KEY), timeout=60) as admin:
            key = admin.post(f"/v1/tenants/{TENANT}/keys", json={"name": "importer"}).json()["secret"]
        with httpx.Client(base_url=url, headers=bearer(key), timeout=60) as http:
            for number in range(COMMITTED):
                batch = _batch(number)
                assert _import(http, batch) == number + 1
                committed.append(batch)
        with _write_probe(store_url) as writing:
            flight = _post_in_thread(url, key, in_flight)
            if moment == "writing":  # inside the store's write transaction
                deadline = time.monotonic() + 30
                while not writing():
                    assert flight.thread.is_alive(), f"the batch finished before its write was seen: {flight.outcome}"
                    assert time.monotonic() < deadline, "the server never started writing the batch"
                    time.sleep(0.001)
            else:  # the server has the body and is validating it and embedding the new rules: no write yet
                assert flight.sent.wait(timeout=30)
                time.sleep(0.05)
                assert not writing()
        _kill(proc, flight)

    with (
        serve_process(args, log=tmp_path / "restarted.log", env=env, cwd=tmp_path) as (url, _),
        httpx.Client(base_url=url, headers=bearer(key), timeout=60) as http,
    ):
        present = _check_store(store_url, committed, in_flight, http)
        if moment == "embedding":
            assert not present
        if not present:  # sent again, the lost batch lands whole
            assert _import(http, in_flight) == COMMITTED + 1
            assert _check_store(store_url, committed, in_flight, http)
    for log in ("killed.log", "restarted.log"):
        text = (tmp_path / log).read_text(encoding="utf-8")
        assert key not in text
        assert '"level": "error"' not in text, text[-2000:]
