"""The embedded store: one SQLite file in WAL mode, safe for many threads and processes at once.

* WAL: readers never wait for the writer and see one consistent snapshot per call; ``synchronous=FULL``: a
  committed change survives the process being killed (and the machine losing power).
* Writers take the write lock up front (``BEGIN IMMEDIATE``), so a transaction never fails half-way on a lock
  upgrade; contention waits in SQLite's busy handler (``busy_timeout``) and then in a retry loop with backoff, up to
  ``lock_timeout`` seconds. Only then does a :class:`~norma.errors.StoreError` reach the caller: a busy database is
  never reported as ``database is locked``.
* One connection per thread (sqlite3 connections must not be shared between concurrent threads).
"""

from __future__ import annotations

import contextlib
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import numpy as np

from norma.errors import ConfigError, StoreError
from norma.store._base import SqlRuleStore
from norma.store._schema import MIGRATIONS_TABLE, SQLITE_MIGRATIONS
from norma.store._sql import Cursor

__all__ = ["SQLiteRuleStore"]

T = TypeVar("T")

BUSY_TIMEOUT_MS = 5_000


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class SQLiteRuleStore(SqlRuleStore):
    """A :class:`~norma.store.RuleStore` in one SQLite file (created with its folder when missing)."""

    def __init__(self, path: str | Path, *, lock_timeout: float = 60.0) -> None:
        super().__init__()
        if str(path) in {"", ":memory:"} or str(path).startswith("file:"):
            raise ConfigError(
                f"the SQLite store needs a file path, not {str(path)!r}",
                hint="use sqlite:///path/to/norma.db (a temporary directory works for throw-away stores)",
            )
        self.path = Path(path)
        explicit = self.path.is_absolute() or self.path.parts[:1] == ("..",)
        self.url = f"sqlite:///{self.path if explicit else f'./{self.path}'}"  # a URL open_store reads back as is
        self.lock_timeout = lock_timeout
        """Longest wait for another writer before a write gives up with StoreError (seconds)."""
        self._busy_ms = int(min(BUSY_TIMEOUT_MS, lock_timeout * 1000))
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._connections_lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the folder of {self.path}: {exc.strerror}", source=self.url) from exc
        self._migrate()

    # -- connections and transactions ----------------------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError("the store is closed", source=self.url, hint="open it again with open_store()")
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            conn = sqlite3.connect(
                self.path, timeout=self._busy_ms / 1000, isolation_level=None, check_same_thread=False
            )
            conn.execute(f"PRAGMA busy_timeout = {self._busy_ms}")
            opened = conn
            self._retry(lambda: opened.execute("PRAGMA journal_mode = WAL"))
            conn.execute("PRAGMA synchronous = FULL")
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"cannot open the SQLite database: {exc}", source=self.url) from exc
        self._local.conn = conn
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    def _retry(self, action: Callable[[], T]) -> T:
        deadline = time.monotonic() + self.lock_timeout
        delay = 0.002
        while True:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise StoreError(f"SQLite failed: {exc}", source=self.url) from exc
                if time.monotonic() > deadline:
                    raise StoreError(
                        f"the database stayed busy for {self.lock_timeout:.0f} s",
                        source=self.url,
                        hint="another process holds a long write transaction; retry later",
                    ) from exc
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.1)
            except sqlite3.DatabaseError as exc:
                raise StoreError(f"SQLite failed: {exc}", source=self.url) from exc

    @contextmanager
    def _read(self, *, bulk: bool = False) -> Iterator[Cursor]:
        conn = self._connection()

        def begin() -> sqlite3.Cursor:
            cur = conn.cursor()
            cur.execute("BEGIN")
            try:
                cur.execute("SELECT version FROM schema_migrations LIMIT 1").fetchall()  # takes the read snapshot
            except BaseException:
                conn.rollback()
                raise
            return cur

        cur = self._retry(begin)
        try:
            yield cur
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"SQLite failed: {exc}", source=self.url) from exc
        finally:
            if conn.in_transaction:
                conn.rollback()

    def _write(self, work: Callable[[Cursor], T]) -> T:
        conn = self._connection()

        def attempt() -> T:
            cur = conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                result = work(cur)
                cur.execute("COMMIT")
                return result
            finally:
                if conn.in_transaction:
                    conn.rollback()

        return self._retry(attempt)

    def _lock_tenant(self, cur: Cursor, tenant_id: str) -> int:
        # BEGIN IMMEDIATE already serialises every writer of the file
        cur.execute("INSERT INTO tenants (tenant_id, version) VALUES (?, 0) ON CONFLICT DO NOTHING", (tenant_id,))
        cur.execute("SELECT version FROM tenants WHERE tenant_id = ?", (tenant_id,))
        return int(cur.fetchone()[0])

    def _migrate(self) -> None:
        def work(cur: Cursor) -> None:
            cur.execute(MIGRATIONS_TABLE)
            cur.execute("SELECT version FROM schema_migrations")
            done = {int(r[0]) for r in cur.fetchall()}
            for version, name, statements in SQLITE_MIGRATIONS:
                if version in done:
                    continue
                for statement in statements:
                    cur.execute(statement)
                cur.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                    (version, name, datetime.now(UTC).isoformat()),
                )

        self._write(work)

    def migrations(self) -> list[int]:
        """Versions of the schema migrations recorded as applied."""
        with self._read() as cur:
            cur.execute("SELECT version FROM schema_migrations ORDER BY version")
            return [int(r[0]) for r in cur.fetchall()]

    # -- vectors: one float32 blob per rule and model ------------------------------------------------------------

    def _put_vectors(
        self, cur: Cursor, tenant_id: str, model_id: str, items: list[tuple[str, str, np.ndarray]]
    ) -> None:
        rows = []
        for rule_id, fingerprint, matrix in items:
            array = np.ascontiguousarray(matrix, dtype="<f4")
            rows.append((tenant_id, rule_id, model_id, fingerprint, array.shape[0], array.shape[1], array.tobytes()))
        cur.executemany(
            "INSERT INTO rule_vectors (tenant_id, rule_id, model_id, fingerprint, n_rows, dim, data)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, rule_id, model_id) DO UPDATE SET"
            " fingerprint = excluded.fingerprint, n_rows = excluded.n_rows, dim = excluded.dim, data = excluded.data",
            rows,
        )

    def _get_vectors(
        self, cur: Cursor, tenant_id: str, model_id: str, rule_ids: Sequence[str] | None = None
    ) -> dict[str, np.ndarray]:
        sql = (
            "SELECT v.rule_id, v.n_rows, v.dim, v.data FROM rule_vectors v JOIN rules r"
            " ON r.tenant_id = v.tenant_id AND r.rule_id = v.rule_id AND r.fingerprint = v.fingerprint"
            " WHERE v.tenant_id = ? AND v.model_id = ?"
        )
        if rule_ids is None:
            cur.execute(sql, (tenant_id, model_id))
            rows = cur.fetchall()
        else:
            rows = self._select_in(cur, sql + " AND v.rule_id IN {ids}", (tenant_id, model_id), rule_ids)
        return {
            rule_id: np.frombuffer(data, dtype="<f4").reshape(n_rows, dim).astype(np.float32)
            for rule_id, n_rows, dim, data in rows
        }

    def _backend_close(self) -> None:
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            with contextlib.suppress(sqlite3.Error):  # a connection another thread is using
                conn.close()
