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
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from norma.embeddings import Embedder
from norma.errors import ConfigError, MissingDependencyError, StoreError
from norma.rules import Rule, check_tenant_id
from norma.store._base import SqlRuleStore, _embedder
from norma.store._schema import MIGRATIONS_TABLE, POSTGRES_MIGRATIONS
from norma.store._sql import Cursor

if TYPE_CHECKING:
    import psycopg


__all__ = ["PostgresRuleStore", "redact_url"]

T = TypeVar("T")

_MIGRATION_LOCK = 0x6E6F726D61  # "norma": the advisory lock key migrations and index creation take
_RETRIES = 8


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


class PostgresRuleStore(SqlRuleStore):
    """A :class:`~norma.store.RuleStore` in a PostgreSQL database with the pgvector extension."""

    def __init__(self, url: str, *, connect_timeout: float = 10.0, vector_index: bool | None = None) -> None:
        """Open (and migrate) the database at ``url``; ``connect_timeout`` applies unless the URL sets one."""
        super().__init__()
        self._psycopg, self._pgvector = _psycopg()
        self._dsn, from_url = _split_options(url)
        self.vector_index = from_url if vector_index is None else vector_index
        """Create the HNSW index before the first vectors are written (see :meth:`create_vector_index`)."""
        self.url = redact_url(url)
        self.connect_timeout = connect_timeout
        self._local = threading.local()
        self._connections: list[psycopg.Connection[Any]] = []
        self._connections_lock = threading.Lock()
        self._indexed_dims: set[int] = set()
        self._migrate()
        self._vector_oid: int = self._run(self._vector_type_oid)

    # -- connections and transactions ----------------------------------------------------------------------------

    def _connect(self, *, register: bool = True) -> psycopg.Connection[Any]:
        try:
            options = {} if "connect_timeout=" in self._dsn else {"connect_timeout": max(1, int(self.connect_timeout))}
            conn = self._psycopg.connect(self._dsn, autocommit=True, **options)
            if register:
                self._pgvector.register_vector(conn)
        except self._psycopg.Error as exc:
            raise StoreError(f"cannot connect to PostgreSQL: {exc}".strip(), source=self.url) from exc
        return conn  # type: ignore[no-any-return]

    def _connection(self) -> psycopg.Connection[Any]:
        if self._closed:
            raise StoreError("the store is closed", source=self.url, hint="open it again with open_store()")
        conn: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if conn is not None and not conn.closed and not conn.broken:
            return conn
        conn = self._connect()
        self._local.conn = conn
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    def _run(self, work: Callable[[Cursor], T], *, isolation: str = "READ COMMITTED") -> T:
        psycopg = self._psycopg
        delay = 0.01
        for attempt in range(_RETRIES):
            conn = self._connection()
            try:
                with conn.transaction(), conn.cursor() as cur:
                    cur.execute(f"SET TRANSACTION ISOLATION LEVEL {isolation}")
                    return work(cur)
            except (psycopg.errors.SerializationFailure, psycopg.errors.DeadlockDetected, psycopg.OperationalError):
                if attempt == _RETRIES - 1:
                    raise
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.5)
        raise AssertionError("unreachable")  # pragma: no cover

    def _guard(self, work: Callable[[Cursor], T], *, isolation: str = "READ COMMITTED") -> T:
        try:
            return self._run(work, isolation=isolation)
        except self._psycopg.Error as exc:
            raise StoreError(f"PostgreSQL failed: {exc}".strip(), source=self.url) from exc

    @contextmanager
    def _read(self) -> Iterator[Cursor]:
        conn = self._connection()
        try:
            with conn.transaction(), conn.cursor() as cur:
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                yield cur
        except self._psycopg.Error as exc:
            raise StoreError(f"PostgreSQL failed: {exc}".strip(), source=self.url) from exc

    def _write(self, work: Callable[[Cursor], T]) -> T:
        return self._guard(work)

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

        Returns ``(rule_id, similarity)``, best first. Approximate (HNSW); only fresh vectors count.
        """
        check_tenant_id(tenant_id)
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

        return self._guard(work)

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
