"""The shared store: PostgreSQL with pgvector, for several stateless service replicas on one database.

* psycopg 3, one connection per thread, reconnected when broken; reads run in a REPEATABLE READ transaction (one
  snapshot per call), writes lock the tenant's row first (``SELECT … FOR UPDATE``), so writers of one tenant are
  serialised and writers of different tenants are not; serialisation failures and deadlocks are retried.
* Migrations (``_schema.POSTGRES_MIGRATIONS``) run under a transaction-level advisory lock: replicas starting
  together apply each one once.
* Vectors: one ``vector`` row per rule text. :meth:`PostgresRuleStore.search` pushes candidate search down to the
  database for tenants too large to load; an HNSW index (cosine, one per vector dimension, created by
  :meth:`PostgresRuleStore.create_vector_index` or, with ``?vector_index=hnsw`` in the URL, before the first write)
  makes it fast. The index is not built by default: keeping it current costs milliseconds per vector written (see
  docs/design/050-store.md for the figures and for when push-down pays).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from norma.embeddings import Embedder
from norma.errors import ConfigError, MissingDependencyError, StoreError, StoreUnavailableError
from norma.rules import Rule, validate_tenant_id
from norma.store._base import SqlRuleStore, _embedder
from norma.store._schema import MIGRATIONS_TABLE, POSTGRES_MIGRATIONS
from norma.store._sql import Cursor

if TYPE_CHECKING:
    import psycopg


__all__ = ["CONNECT_TIMEOUT", "READ_TIMEOUT", "WRITE_TIMEOUT", "PostgresRuleStore", "redact_url"]

T = TypeVar("T")

_MIGRATION_LOCK = 0x6E6F726D61  # "norma": the advisory lock key migrations and index creation take
_RETRIES = 8
CONNECT_TIMEOUT = 3.0
"""Default seconds to open a connection."""
READ_TIMEOUT = 5.0
"""Default seconds for a read of a few rows (a version, a key, one rule)."""
WRITE_TIMEOUT = 20.0
"""Default seconds for a write, and for a read of a whole tenant (its snapshot, its rules)."""
_GUARD_MARGIN = 0.5
"""Seconds the client waits for a write past the server's commit deadline (clocks of one host, or NTP-close)."""


class _Late(Exception):
    """A transaction cut at its deadline (internal: turned into StoreUnavailableError)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(seconds)
        self.seconds = seconds


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***``."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit((parts.scheme, f"{user}:***@{host}{port}", parts.path, parts.query, parts.fragment))


def _split_options(url: str) -> tuple[str, bool]:
    """The libpq URL without norma's own ``vector_index=hnsw`` option, and whether it was given."""
    parts = urlsplit(url)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    ours = [v for k, v in pairs if k == "vector_index"]
    if not ours:
        return url, False
    if ours[-1] not in ("hnsw", "none"):
        raise ConfigError(f"vector_index={ours[-1]!r} in the store URL: use hnsw or none", source="store URL")
    rest = urlencode([(k, v) for k, v in pairs if k != "vector_index"])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, rest, parts.fragment)), ours[-1] == "hnsw"


def _psycopg() -> Any:
    try:
        import pgvector.psycopg
        import psycopg
    except ImportError:
        raise MissingDependencyError(
            "the PostgreSQL rule store", extra="postgres", install="pip install 'norma-rules[postgres]'"
        ) from None
    return psycopg, pgvector.psycopg


def _raw_vector_loader() -> Any:
    from psycopg.adapt import Loader
    from psycopg.pq import Format

    class RawVector(Loader):
        """pgvector's binary form as bytes: int16 dim, int16 unused, dim big-endian float32 (decoded in bulk)."""

        format = Format.BINARY

        def load(self, data: Any) -> bytes:
            return bytes(data)

    return RawVector


class _Deadlines:
    """One thread that cuts the connection of a transaction still running at its deadline.

    libpq waits on its socket without a limit, and a frozen server (or a dead peer whose packets vanish) never
    answers: :meth:`arm` gives a transaction's wait a deadline; past it the socket is shut down, the blocked call
    fails at once with a connection error, and the server, when it wakes, finds the connection gone and rolls the
    transaction back (a COMMIT already sent is refused by the commit guard, see :class:`PostgresRuleStore`).
    """

    def __init__(self) -> None:
        self._due: dict[int, tuple[float, int]] = {}
        self._expired: set[int] = set()
        self._tokens = itertools.count(1)
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def arm(self, fileno: int, seconds: float) -> int:
        """Watch the socket ``fileno`` for ``seconds``; returns the token :meth:`rearm` and :meth:`disarm` take."""
        token = next(self._tokens)
        with self._cond:
            self._due[token] = (time.monotonic() + seconds, fileno)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="norma-pg-deadlines", daemon=True)
                self._thread.start()
            self._cond.notify()
        return token

    def rearm(self, token: int, seconds: float) -> None:
        with self._cond:
            if token in self._due:
                self._due[token] = (time.monotonic() + seconds, self._due[token][1])

    def disarm(self, token: int) -> bool:
        """Stop watching; True when the deadline had passed (the connection was cut)."""
        with self._cond:
            self._due.pop(token, None)
            if token in self._expired:
                self._expired.discard(token)
                return True
            return False

    def _watch(self) -> None:
        while True:
            with self._cond:
                now = time.monotonic()
                late = [token for token, (due, _) in self._due.items() if due <= now]
                for token in late:
                    _, fileno = self._due.pop(token)
                    self._expired.add(token)
                    _cut(fileno)
                upcoming = min((due for due, _ in self._due.values()), default=now + 60.0)
                self._cond.wait(timeout=max(0.005, upcoming - now))


def _cut(fileno: int) -> None:
    """Shut the socket down (both ways) so a call blocked on it returns; the descriptor stays libpq's to close."""
    with contextlib.suppress(OSError):
        sock = socket.socket(fileno=os.dup(fileno))
        try:
            sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.close()


_DEADLINES = _Deadlines()


class PostgresRuleStore(SqlRuleStore):
    """A :class:`~norma.store.RuleStore` in a PostgreSQL database with the pgvector extension.

    Every wait is bounded. ``connect_timeout`` bounds opening a connection; ``read_timeout`` a read of a few rows
    (a version, a key, one rule); ``write_timeout`` a write and a read of a whole tenant (its snapshot, its rules).
    Past its deadline a call fails with :class:`~norma.errors.StoreUnavailableError`. A write past its deadline is
    never committed later: its transaction holds a commit guard (a deferred constraint trigger) that refuses a
    COMMIT the server reaches after the deadline, measured on the server's clock from the write's first statement,
    and the client gives up only after that instant. The server also ends statements after ``write_timeout``
    (``statement_timeout``) and sessions idle in a transaction (``idle_in_transaction_session_timeout``), and TCP
    keepalives notice a vanished server. A URL that sets ``connect_timeout`` or ``options`` keeps its own.
    """

    def __init__(
        self,
        url: str,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        read_timeout: float = READ_TIMEOUT,
        write_timeout: float = WRITE_TIMEOUT,
        vector_index: bool | None = None,
    ) -> None:
        """Open (and migrate) the database at ``url``."""
        super().__init__()
        self._psycopg, self._pgvector = _psycopg()
        self._dsn, from_url = _split_options(url)
        self.vector_index = from_url if vector_index is None else vector_index
        """Create the HNSW index before the first vectors are written (see :meth:`create_vector_index`)."""
        self.url = redact_url(url)
        for name, value in (
            ("connect_timeout", connect_timeout),
            ("read_timeout", read_timeout),
            ("write_timeout", write_timeout),
        ):
            if not value > 0:
                raise ConfigError(f"{name} must be a positive number of seconds, not {value!r}", source=self.url)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.write_timeout = write_timeout
        self._local = threading.local()
        self._connections: list[psycopg.Connection[Any]] = []
        self._connections_lock = threading.Lock()
        self._generation = 0  # bumped when a connection is lost: every thread's older connection is replaced
        self._indexed_dims: set[int] = set()
        self._migrate()
        self._vector_oid: int = self._guard(self._vector_type_oid, deadline=self.read_timeout)

    # -- connections and transactions ----------------------------------------------------------------------------

    def _connect(self, *, register: bool = True) -> psycopg.Connection[Any]:
        options: dict[str, Any] = {}
        if "connect_timeout=" not in self._dsn:
            options["connect_timeout"] = max(2, math.ceil(self.connect_timeout))  # libpq's floor is 2 s
        if "options=" not in self._dsn:
            statement_ms = int(self.write_timeout * 1000)
            options["options"] = (
                f"-c statement_timeout={statement_ms} -c idle_in_transaction_session_timeout={statement_ms + 5000}"
            )
        if "keepalives" not in self._dsn:
            options.update(keepalives=1, keepalives_idle=5, keepalives_interval=2, keepalives_count=3)
        try:
            conn = self._psycopg.connect(self._dsn, autocommit=True, **options)
            if register:
                self._pgvector.register_vector(conn)
                conn.execute(
                    "CREATE TEMP TABLE IF NOT EXISTS norma_commit_guard (deadline timestamptz NOT NULL)"
                    " ON COMMIT DELETE ROWS"
                )
                conn.execute(
                    "CREATE CONSTRAINT TRIGGER norma_commit_deadline AFTER INSERT ON pg_temp.norma_commit_guard"
                    " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION norma_commit_deadline()"
                )
        except self._psycopg.Error as exc:
            raise StoreUnavailableError(f"cannot connect to PostgreSQL: {exc}".strip(), source=self.url) from exc
        return conn  # type: ignore[no-any-return]

    def _connection(self) -> psycopg.Connection[Any]:
        if self._closed:
            raise StoreError("the store is closed", source=self.url, hint="open it again with open_store()")
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        current = self._local.__dict__.get("generation") == self._generation
        if conn is not None and current and not conn.closed and not conn.broken:
            return conn
        if conn is not None:  # broken, or opened before a connection was lost (the server restarted): replace it
            self._forget(conn)
        generation = self._generation
        conn = self._connect()
        self._local.conn, self._local.generation = conn, generation
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    def _lost(self) -> None:
        """A connection was lost: the server may have restarted, so every thread opens a new one."""
        self._generation += 1

    def _forget(self, conn: psycopg.Connection[Any]) -> None:
        with contextlib.suppress(Exception):
            conn.close()
        with self._connections_lock:
            self._connections = [c for c in self._connections if c is not conn]
        self._local.conn = None

    @contextmanager
    def _deadline(self, conn: psycopg.Connection[Any], seconds: float | None) -> Iterator[Callable[[float], None]]:
        """Bound the waits on ``conn`` inside the block by ``seconds`` (None: no bound); yields a function that moves
        the deadline to that many seconds from now. A cut connection raises StoreUnavailableError."""
        if seconds is None:
            yield lambda _: None
            return
        token = _DEADLINES.arm(conn.fileno(), seconds)
        cut = False
        try:
            yield lambda later: _DEADLINES.rearm(token, later)
        except self._psycopg.Error as exc:
            cut = _DEADLINES.disarm(token)
            if cut:
                self._forget(conn)
                raise _Late(seconds) from exc
            raise
        finally:
            # always disarmed before the block ends: a deadline left armed would cut whatever socket reuses the
            # descriptor later
            cut = _DEADLINES.disarm(token) or cut
        if cut:  # cut after the last wait returned: the connection is unusable
            self._forget(conn)

    def _run(
        self,
        work: Callable[[Cursor], T],
        *,
        isolation: str = "READ COMMITTED",
        deadline: float | None = None,
        write: bool = False,
    ) -> T:
        """``work`` in one transaction, retried on serialisation failures, deadlocks and lost connections while
        ``deadline`` seconds (from the first attempt) allow; a write carries the commit guard.

        A write whose connection is lost during its COMMIT may have been committed: its transaction id is looked up
        on a new connection (``txid_status``) before anything else happens. Committed: it is done; aborted: it is
        retried; no answer before the deadline: :class:`~norma.errors.StoreUnavailableError` with ``in_doubt``."""
        psycopg = self._psycopg
        delay = 0.01
        ends = None if deadline is None else time.monotonic() + deadline
        for attempt in range(_RETRIES):
            left = None if ends is None else ends - time.monotonic()
            if left is not None and left <= 0:
                raise _Late(deadline or 0.0)
            conn = self._connection()
            xid: int | None = None
            committing = False
            try:
                with self._deadline(conn, left) as extend, conn.transaction(), conn.cursor() as cur:
                    cur.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
                    if write and left is not None:
                        # the server refuses a COMMIT later than `left` s after this statement ran; the client
                        # waits until `left` s after its answer came back, so it never gives up on a write that
                        # can commit
                        cur.execute(
                            "INSERT INTO pg_temp.norma_commit_guard VALUES"
                            " (clock_timestamp() + make_interval(secs => %s)) RETURNING txid_current()",
                            (left,),
                        )
                        xid = int(cur.fetchone()[0])  # type: ignore[index]
                        extend(left + _GUARD_MARGIN)
                    elif write:
                        cur.execute("SELECT txid_current()")
                        xid = int(cur.fetchone()[0])  # type: ignore[index]
                    result = work(cur)
                    committing = True
                return result
            except (
                psycopg.errors.SerializationFailure,
                psycopg.errors.DeadlockDetected,
                psycopg.OperationalError,
            ) as exc:
                if isinstance(exc, psycopg.OperationalError):
                    self._lost()
                    if committing and xid is not None:
                        status = self._commit_status(xid, ends)
                        if status == "committed":
                            return result
                        if status is None:
                            doubt = StoreUnavailableError(
                                "the connection to PostgreSQL was lost while it committed the write, and the server"
                                " did not come back in time to say whether it did: the write may be stored",
                                source=self.url,
                                hint="read it back once the store answers again, or repeat the write",
                            )
                            doubt.in_doubt = True
                            raise doubt from exc
                if attempt == _RETRIES - 1:
                    raise
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")  # pragma: no cover

    def _commit_status(self, xid: int, ends: float | None) -> str | None:
        """Whether transaction ``xid``, whose connection was lost during its COMMIT, was committed (``"committed"``)
        or not (``"aborted"``), asked on new connections until ``ends`` (``time.monotonic()``; at least
        ``connect_timeout`` from now); None if the server did not tell by then."""
        until = max(ends or 0.0, time.monotonic() + self.connect_timeout)
        delay = 0.05
        while True:
            with contextlib.suppress(self._psycopg.Error, StoreUnavailableError, _Late):
                conn = self._connect(register=False)
                try:
                    with self._deadline(conn, max(until - time.monotonic(), 0.1)):
                        row = conn.execute("SELECT txid_status(%s)", (xid,)).fetchone()
                finally:
                    conn.close()
                # "in progress": the old backend has not yet noticed its client is gone; it will commit or abort
                if row is not None and row[0] in ("committed", "aborted"):
                    return str(row[0])
            if time.monotonic() + delay > until:
                return None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _guard(
        self,
        work: Callable[[Cursor], T],
        *,
        isolation: str = "READ COMMITTED",
        deadline: float | None = None,
        write: bool = False,
    ) -> T:
        try:
            return self._run(work, isolation=isolation, deadline=deadline, write=write)
        except _Late as late:
            what = "the write was not committed" if write else "nothing was read"
            raise StoreUnavailableError(
                f"PostgreSQL did not answer within {late.seconds:g} s; {what}",
                source=self.url,
                hint="retry later; the server log of PostgreSQL may say why it hung",
            ) from None
        except self._psycopg.OperationalError as exc:
            raise StoreUnavailableError(f"PostgreSQL is not reachable: {exc}".strip(), source=self.url) from exc
        except self._psycopg.Error as exc:
            raise StoreError(f"PostgreSQL failed: {exc}".strip(), source=self.url) from exc

    @contextmanager
    def _read(self, *, bulk: bool = False) -> Iterator[Cursor]:
        try:
            conn = self._connection()
            with (
                self._deadline(conn, self.write_timeout if bulk else self.read_timeout),
                conn.transaction(),
                conn.cursor() as cur,
            ):
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                yield cur
        except _Late as late:
            self._lost()
            raise StoreUnavailableError(
                f"PostgreSQL did not answer within {late.seconds:g} s", source=self.url, hint="retry later"
            ) from None
        except self._psycopg.OperationalError as exc:
            self._lost()
            raise StoreUnavailableError(f"PostgreSQL is not reachable: {exc}".strip(), source=self.url) from exc
        except self._psycopg.Error as exc:
            raise StoreError(f"PostgreSQL failed: {exc}".strip(), source=self.url) from exc

    def _write(self, work: Callable[[Cursor], T]) -> T:
        return self._guard(work, deadline=self.write_timeout, write=True)

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def _now(self) -> Any:
        return datetime.now(UTC)

    def _lock_tenant(self, cur: Cursor, tenant_id: str) -> int:
        cur.execute("INSERT INTO tenants (tenant_id, version) VALUES (%s, 0) ON CONFLICT DO NOTHING", (tenant_id,))
        cur.execute("SELECT version FROM tenants WHERE tenant_id = %s FOR UPDATE", (tenant_id,))
        return int(cur.fetchone()[0])

    def _migrate(self) -> None:
        conn = self._connect(register=False)
        try:
            with conn.transaction(), conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                cur.execute(MIGRATIONS_TABLE)
                cur.execute("SELECT version FROM schema_migrations")
                done = {int(r[0]) for r in cur.fetchall()}
                for version, name, statements in POSTGRES_MIGRATIONS:
                    if version in done:
                        continue
                    for statement in statements:
                        cur.execute(statement)
                    cur.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s)",
                        (version, name, datetime.now(UTC).isoformat()),
                    )
        except self._psycopg.Error as exc:
            raise StoreError(f"cannot prepare the PostgreSQL schema: {exc}".strip(), source=self.url) from exc
        finally:
            conn.close()

    def migrations(self) -> list[int]:
        """Versions of the schema migrations recorded as applied."""
        with self._read() as cur:
            cur.execute("SELECT version FROM schema_migrations ORDER BY version")
            return [int(r[0]) for r in cur.fetchall()]

    @staticmethod
    def _vector_type_oid(cur: Cursor) -> int:
        cur.execute("SELECT oid FROM pg_type WHERE typname = 'vector'")
        return int(cur.fetchone()[0])

    # -- vectors: one row per rule text, HNSW-indexed per dimension ----------------------------------------------

    def create_vector_index(self, dim: int | None = None) -> None:
        """Create the HNSW index (cosine) over the stored vectors of dimension ``dim`` (default: the default
        embedder's), if it does not exist yet; serialised across replicas.

        Build it once a large tenant is loaded (a bulk build is several times cheaper than keeping the index up to
        date row by row); afterwards every vector written also goes into the index. :meth:`search` works without it
        (an exact scan), the index makes it fast at large sizes. ``vector_index=True`` (or ``?vector_index=hnsw``
        in the URL) creates it before the first write instead.
        """
        size = dim if dim is not None else _embedder(None).dim
        if size in self._indexed_dims:
            return

        def work(cur: Cursor) -> None:
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            cur.execute("SET LOCAL statement_timeout = 0")  # a bulk build may take minutes: no deadline
            cur.execute("SET LOCAL maintenance_work_mem = '256MB'")
            cur.execute(
                f"CREATE INDEX IF NOT EXISTS rule_vectors_hnsw_{int(size)} ON rule_vectors USING hnsw"
                f" ((embedding::vector({int(size)})) vector_cosine_ops) WHERE dim = {int(size)}"
            )

        self._guard(work)
        self._indexed_dims.add(size)

    def upsert_rules(
        self,
        tenant_id: str,
        rules: Sequence[Rule],
        *,
        embedder: Embedder | None = None,
        vectors: Mapping[str, np.ndarray] | None = None,
        prune: bool = False,
    ) -> int:
        if rules and self.vector_index:  # the first write of a dimension creates its HNSW index
            self.create_vector_index(_embedder(embedder).dim)
        return super().upsert_rules(tenant_id, rules, embedder=embedder, vectors=vectors, prune=prune)

    def save_vectors(self, tenant_id: str, model_id: str, vectors: Mapping[str, tuple[str, np.ndarray]]) -> None:
        if self.vector_index:
            for _, matrix in vectors.values():
                self.create_vector_index(int(np.asarray(matrix).shape[1]))
        super().save_vectors(tenant_id, model_id, vectors)

    def _put_vectors(
        self, cur: Cursor, tenant_id: str, model_id: str, items: list[tuple[str, str, np.ndarray]]
    ) -> None:
        self._select_in(
            cur,
            "DELETE FROM rule_vectors WHERE tenant_id = ? AND model_id = ? AND rule_id IN {ids} RETURNING 1",
            (tenant_id, model_id),
            [rule_id for rule_id, _, _ in items],
        )
        rows = []
        for rule_id, fingerprint, matrix in items:
            array = np.asarray(matrix, dtype=np.float32)
            for position, row in enumerate(array):
                rows.append((tenant_id, rule_id, model_id, position, fingerprint, array.shape[1], row))
        cur.executemany(
            "INSERT INTO rule_vectors (tenant_id, rule_id, model_id, position, fingerprint, dim, embedding)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)",
            rows,
        )

    def _get_vectors(
        self, cur: Cursor, tenant_id: str, model_id: str, rule_ids: Sequence[str] | None = None
    ) -> dict[str, np.ndarray]:
        sql = (
            "SELECT v.rule_id, v.dim, v.embedding FROM rule_vectors v JOIN rules r"
            " ON r.tenant_id = v.tenant_id AND r.rule_id = v.rule_id AND r.fingerprint = v.fingerprint"
            " WHERE v.tenant_id = ? AND v.model_id = ?"
        )
        conn = self._connection()
        with conn.cursor(binary=True) as bcur:
            bcur.adapters.register_loader(self._vector_oid, _raw_vector_loader())
            if rule_ids is None:
                bcur.execute(self._sql(sql + " ORDER BY v.rule_id, v.position"), (tenant_id, model_id))
                rows = bcur.fetchall()
            else:
                rows = self._select_in(
                    bcur,
                    sql + " AND v.rule_id IN {ids} ORDER BY v.rule_id, v.position",
                    (tenant_id, model_id),
                    rule_ids,
                )
        return _assemble(rows)

    def search(
        self, tenant_id: str, vector: np.ndarray, *, model_id: str, limit: int = 30, ef_search: int | None = None
    ) -> list[tuple[str, float]]:
        """The ``limit`` rules whose best vector is nearest ``vector`` (cosine), via the HNSW index.

        Returns ``(rule_id, similarity)``, best first. Approximate (HNSW); only fresh vectors count, and only those
        ``model_id`` made: :class:`~norma.errors.ConfigError` when the tenant has rules but not one vector of that
        encoder (the store was written with another: nothing could ever be found).
        """
        validate_tenant_id(tenant_id)
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        dim = int(query.shape[0])
        fetch = max(limit * 2, 40)  # rows, several per rule: room to keep `limit` distinct rules
        ef = max(ef_search or 0, fetch)

        def work(cur: Cursor) -> list[tuple[str, float]]:
            cur.execute(f"SET LOCAL hnsw.ef_search = {int(ef)}")
            cur.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cur.execute(
                f"SELECT n.rule_id, n.distance FROM (SELECT v.rule_id, v.fingerprint,"
                f" (v.embedding::vector({dim})) <=> %s::vector({dim}) AS distance FROM rule_vectors v"
                f" WHERE v.dim = {dim} AND v.tenant_id = %s AND v.model_id = %s ORDER BY distance LIMIT %s) n"
                " JOIN rules r ON r.tenant_id = %s AND r.rule_id = n.rule_id AND r.fingerprint = n.fingerprint"
                " ORDER BY n.distance",
                (query, tenant_id, model_id, fetch, tenant_id),
            )
            best: dict[str, float] = {}
            for rule_id, distance in cur.fetchall():
                best.setdefault(rule_id, 1.0 - float(distance))
            return list(best.items())[:limit]

        found = self._guard(work, deadline=self.read_timeout)
        if not found:
            self._check_encoder(tenant_id, model_id)
        return found

    def _check_encoder(self, tenant_id: str, model_id: str) -> None:
        """After a search found nothing: refuse a tenant with rules but no vector made by ``model_id``."""
        encoders = self.vector_encoders(tenant_id)
        if model_id in encoders:
            return
        with self._read() as cur:
            cur.execute(self._sql("SELECT EXISTS (SELECT 1 FROM rules WHERE tenant_id = ?)"), (tenant_id,))
            if not cur.fetchone()[0]:
                return
        held = ", ".join(f"{other} ({count} rules)" for other, count in encoders.items()) or "none"
        raise ConfigError(
            f"tenant {tenant_id!r} has no vectors of encoder {model_id} to search (its vectors: {held})",
            source=self.url,
            location=tenant_id,
            hint="match with the encoder the store was written with, or load the tenant once with "
            "norma.matching.tenant_matcher(store, tenant) and this encoder: it embeds and saves its vectors",
        )

    def _backend_close(self) -> None:
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            with contextlib.suppress(Exception):  # a connection another thread is using
                conn.close()


def _assemble(rows: list[Any]) -> dict[str, np.ndarray]:
    """Rows ``(rule_id, dim, raw vector bytes)`` ordered by rule and position -> rule id -> matrix."""
    out: dict[str, np.ndarray] = {}
    start = 0
    while start < len(rows):
        rule_id, dim = rows[start][0], int(rows[start][1])
        end = start
        while end < len(rows) and rows[end][0] == rule_id:
            end += 1
        blob = b"".join(r[2] for r in rows[start:end])
        # each row: a 4-byte header (int16 dim, int16 unused) then dim big-endian float32: one f4 slot of header
        matrix = np.frombuffer(blob, dtype=">f4").reshape(end - start, dim + 1)[:, 1:]
        out[rule_id] = matrix.astype(np.float32)
        start = end
    return out
