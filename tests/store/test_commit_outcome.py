"""A write whose connection is lost during its COMMIT: the store asks PostgreSQL (``txid_status``) whether the commit
happened before doing anything else. Committed: the write succeeds once (not twice); aborted: it is retried; no
answer by the deadline: StoreUnavailableError with ``in_doubt``, the one failed write that may be stored.

The connection is cut by a byte-forwarding proxy on a Unix socket between the store and a real PostgreSQL, at the
exact protocol message: after the server's reply to COMMIT (the commit happened, the client never hears of it), or
before the COMMIT reaches the server (it cannot happen)."""

from __future__ import annotations

import contextlib
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import psycopg
import pytest

from norma.errors import StoreUnavailableError
from norma.service import create_app
from norma.store import PostgresRuleStore
from tests._pgserver import fresh_database

pytestmark = pytest.mark.slow

_COMMIT = b"COMMIT\x00"
"""The COMMIT query (client to server) and its CommandComplete tag (server to client) both end so."""
_WRITE = b"INSERT INTO pg_temp.norma_commit_guard"
"""What the store's every write transaction starts with (its commit guard)."""


class CommitCutter:
    """Forwards PostgreSQL connections from its own Unix socket to the server's. Armed with ``cut("after")``, the
    next COMMIT of a write transaction is forwarded and the connection is closed when the server's reply comes,
    which is not passed on; with ``cut("before")`` the COMMIT is never forwarded. After the cut, ``refuse`` new
    connections are closed at once (-1: all, until :meth:`serve` is called)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.folder = tempfile.mkdtemp(prefix="norma-cut-")
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(Path(self.folder) / ".s.PGSQL.5432"))
        self.listener.listen(16)
        self.mode = ""
        self.refuse = 0
        self.pending_refusals = 0
        self.cuts = 0
        self.writing: set[tuple[socket.socket, ...]] = set()
        self.refused = 0
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self, mode: str, *, refuse: int = 0) -> None:
        with self.lock:
            self.mode, self.pending_refusals = mode, refuse

    def serve(self) -> None:
        with self.lock:
            self.refuse = 0

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                refused = self.refuse != 0
                if refused:
                    self.refuse -= 1 if self.refuse > 0 else 0  # -1 stays: refuse all
                    self.refused += 1
            if refused:
                client.close()
                continue
            server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            server.connect(self.target)
            pair = (client, server)
            threading.Thread(target=self._pump, args=(client, server, pair, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, pair, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, pair: tuple[socket.socket, ...], up: bool) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                with self.lock:
                    mode = self.mode
                    if up and _WRITE in data:  # reads end in COMMIT too: only a write's is cut
                        self.writing.add(pair)
                    cut = _COMMIT in data and pair in self.writing and mode == ("before" if up else "after")
                    if _COMMIT in data and not up:
                        self.writing.discard(pair)
                # "before": the COMMIT is dropped; "after": the server committed, its reply is dropped
                if cut:
                    self._cut(pair)
                    return
                sink.sendall(data)
        self._close(pair)

    def _cut(self, pair: tuple[socket.socket, ...]) -> None:
        with self.lock:
            self.cuts += 1
            self.mode, self.refuse = "", self.pending_refusals
        self._close(pair)

    @staticmethod
    def _close(pair: tuple[socket.socket, ...]) -> None:
        for sock in pair:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def url(self, url: str) -> str:
        """``url`` with its host replaced by this proxy's socket folder."""
        parts = urlsplit(url)
        query = [(k, v) for k, v in parse_qsl(parts.query) if k != "host"] + [("host", self.folder)]
        return urlunsplit(parts._replace(query=urlencode(query)))

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def database(pg_server_url: str) -> str:
    return fresh_database(pg_server_url, prefix="norma_commit")


@pytest.fixture
def cutter(pg_server_url: str) -> Iterator[CommitCutter]:
    host = dict(parse_qsl(urlsplit(pg_server_url).query))["host"]
    proxy = CommitCutter(str(Path(host) / ".s.PGSQL.5432"))
    yield proxy
    proxy.close()


def _count_writes(store: PostgresRuleStore) -> Any:
    def work(cur: Any) -> int:  # not idempotent: a second run of the same write would show
        cur.execute("INSERT INTO tenants (tenant_id, version) VALUES ('counted', 0) ON CONFLICT DO NOTHING")
        cur.execute("UPDATE tenants SET version = version + 1 WHERE tenant_id = 'counted' RETURNING version")
        return int(cur.fetchone()[0])

    return store._write(work)


def _stored(database: str) -> int:
    with psycopg.connect(database) as conn:
        row = conn.execute("SELECT version FROM tenants WHERE tenant_id = 'counted'").fetchone()
    return 0 if row is None else int(row[0])


def test_a_commit_whose_reply_is_lost_succeeds_once_after_the_server_answers_again(
    database: str, cutter: CommitCutter
) -> None:
    store = PostgresRuleStore(cutter.url(database), connect_timeout=2.0, write_timeout=10.0)
    cutter.cut("after", refuse=3)  # the commit's reply is lost, and the next three connections are refused
    assert _count_writes(store) == 1
    assert (cutter.cuts, cutter.refused) == (1, 3)
    assert _stored(database) == 1  # committed once: the write was not run again
    assert _count_writes(store) == 2  # the store goes on as before
    store.close()


def test_a_commit_that_never_reached_the_server_is_retried(database: str, cutter: CommitCutter) -> None:
    store = PostgresRuleStore(cutter.url(database), connect_timeout=2.0, write_timeout=10.0)
    cutter.cut("before", refuse=1)
    assert _count_writes(store) == 1
    assert cutter.cuts == 1
    assert _stored(database) == 1
    store.close()


def test_a_commit_whose_outcome_stays_unknown_past_the_deadline_says_it_may_be_stored(
    database: str, cutter: CommitCutter
) -> None:
    store = PostgresRuleStore(cutter.url(database), connect_timeout=2.0, write_timeout=2.0)
    cutter.cut("after", refuse=-1)  # the server is not heard of again before the deadline
    with pytest.raises(StoreUnavailableError, match="may be stored") as caught:
        _count_writes(store)
    assert caught.value.in_doubt  # a 503 with Retry-After in the service, saying the write may be stored
    assert cutter.refused >= 1
    assert _stored(database) == 1  # it was: the error said it may be
    cutter.serve()
    assert _count_writes(store) == 2
    store.close()


def test_the_service_answers_a_write_in_doubt_503_saying_it_may_be_stored(
    database: str, cutter: CommitCutter, caplog: pytest.LogCaptureFixture
) -> None:
    from tests.service._server import serve_app
    from tests.service.conftest import ADMIN_KEY, bearer, make_settings

    settings = make_settings(
        db_url=cutter.url(database), store_connect_timeout=2.0, store_read_timeout=1.0, store_write_timeout=2.0
    )
    body = {"condition_text": "the customer asks for a refund", "examples": ["I want my money back"]}
    with serve_app(create_app(settings)) as base, httpx.Client(base_url=base, timeout=30) as http:
        first = http.put("/v1/tenants/shop/rules/refund", json=body, headers=bearer(ADMIN_KEY))
        assert first.status_code == 200, first.text
        cutter.cut("after", refuse=-1)
        cut = http.put("/v1/tenants/shop/rules/late", json=body, headers=bearer(ADMIN_KEY))
        assert cut.status_code == 503, cut.text
        assert cut.headers["retry-after"] == "1"
        assert "may be stored" in cut.json()["detail"]
    with psycopg.connect(database) as conn:
        stored = {r[0] for r in conn.execute("SELECT rule_id FROM rules WHERE tenant_id = 'shop'").fetchall()}
    assert stored == {"refund", "late"}
    assert any("a write answered 503 may be stored" in r.getMessage() for r in caplog.records)
