"""Every wait on PostgreSQL is bounded: a frozen server (SIGSTOP) fails a read within its read deadline and a write
within its write deadline, a write whose COMMIT reached the frozen server is refused when the server wakes (the
commit guard), and reconnecting does not keep the dead connections."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from norma.errors import StoreUnavailableError
from norma.rules import Rule
from norma.store import PostgresRuleStore
from tests._pgserver import ControlledServer, controlled_postgres, fresh_database

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server() -> Iterator[ControlledServer]:
    with controlled_postgres() as controlled:
        yield controlled


@pytest.fixture
def url(server: ControlledServer) -> str:
    return fresh_database(server.url, prefix="norma_deadline")


def _tenant_exists(url: str, tenant: str) -> bool:
    with psycopg.connect(url, connect_timeout=5) as conn:
        return conn.execute("SELECT count(*) FROM tenants WHERE tenant_id = %s", (tenant,)).fetchone() == (1,)


def test_a_commit_sent_to_a_frozen_backend_fails_at_the_deadline_and_is_refused_when_it_wakes(url: str) -> None:
    store = PostgresRuleStore(url, read_timeout=1.0, write_timeout=2.0)
    frozen: list[int] = []

    def work(cur: Any) -> None:  # the write is done; its backend freezes just before the client sends COMMIT
        cur.execute("INSERT INTO tenants (tenant_id, version) VALUES ('frozen-commit', 1)")
        cur.execute("SELECT pg_backend_pid()")
        frozen.append(int(cur.fetchone()[0]))
        os.kill(frozen[0], signal.SIGSTOP)

    started = time.monotonic()
    try:
        with pytest.raises(StoreUnavailableError, match=r"did not answer within 2 s; the write was not committed"):
            store._write(work)
        waited = time.monotonic() - started
        assert 2.0 <= waited < 4.0, f"the write gave up after {waited:.2f} s (deadline 2 s + 0.5 s margin)"
    finally:
        for pid in frozen:
            os.kill(pid, signal.SIGCONT)
    time.sleep(1.0)  # the backend wakes, reads the COMMIT waiting in its socket: the guard must refuse it
    assert not _tenant_exists(url, "frozen-commit")
    assert store.version("after") == 0  # the store reconnects on its own
    store.close()


def test_a_frozen_server_fails_reads_and_writes_within_their_deadlines(server: ControlledServer, url: str) -> None:
    store = PostgresRuleStore(url, connect_timeout=2.0, read_timeout=1.0, write_timeout=2.0)
    store.upsert_rules("shop", [Rule(id="a", condition_text="the user says hello")])
    server.freeze()
    try:
        started = time.monotonic()
        with pytest.raises(StoreUnavailableError, match="did not answer within 1 s"):
            store.version("shop")
        assert time.monotonic() - started < 2.5
        started = time.monotonic()
        with pytest.raises(StoreUnavailableError):
            store.upsert_rules("shop", [Rule(id="b", condition_text="the user says goodbye")])
        # the write reconnects first (its connection was cut): connect_timeout, then its own deadline at most
        assert time.monotonic() - started < 2.0 + 2.0 + 1.5
    finally:
        server.thaw()
    time.sleep(0.5)
    assert [r.id for r in store.list_rules("shop")] == ["a"]  # the failed write never committed
    assert store.version("shop") == 1
    store.close()


def test_reconnecting_keeps_one_connection_per_thread(server: ControlledServer, url: str) -> None:
    store = PostgresRuleStore(url, connect_timeout=2.0, read_timeout=2.0)
    assert store.version("shop") == 0
    for _ in range(3):
        server.kill()
        with pytest.raises(StoreUnavailableError):
            store.version("shop")
        server.start()
        assert store.version("shop") == 0
    assert len(store._connections) == 1
    worker = threading.Thread(target=store.version, args=("shop",))
    worker.start()
    worker.join()
    assert len(store._connections) == 2  # one more thread, one more connection
    store.close()
