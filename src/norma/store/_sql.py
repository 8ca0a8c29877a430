"""What every SQL backend of the store provides, and the API-key operations built on it alone.

:class:`SqlBackend` is the seam between the store logic (``_base.SqlRuleStore``) and a database: transactions,
placeholder style, timestamps. :class:`ApiKeys` adds the service's API keys (``_keys`` has the secrets' format).
Every statement is written with ``?`` placeholders; :meth:`SqlBackend._sql` turns them into the backend's own.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from norma.errors import InvalidInputError, NotFoundError
from norma.rules import validate_tenant_id
from norma.store._keys import hash_secret, new_secret, parse_key_id, secret_matches
from norma.store._models import ApiKey

__all__ = ["ApiKeys", "Cursor", "SqlBackend", "iter_batches"]

T = TypeVar("T")


class Cursor(Protocol):
    """The part of a DB-API cursor the store uses (sqlite3 and psycopg cursors both have it)."""

    def execute(self, sql: Any, params: Any = ..., /) -> Any: ...
    def executemany(self, sql: Any, params: Any, /) -> Any: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


def iter_batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """``items`` in consecutive slices of ``size``."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


class SqlBackend(ABC):
    """Transactions and SQL dialect of one database (SQLite or PostgreSQL)."""

    @abstractmethod
    def _read(self, *, bulk: bool = False) -> AbstractContextManager[Cursor]:
        """A cursor inside a read-only transaction (one consistent snapshot); ``bulk``: it reads a whole tenant
        (a backend with deadlines gives it the longer one)."""

    @abstractmethod
    def _write(self, work: Callable[[Cursor], T]) -> T:
        """Run ``work`` in a write transaction (retried on lock contention); commit, or roll back on error."""

    def _timestamp(self, value: Any) -> datetime:
        if isinstance(value, datetime):
            return value if value.tzinfo else value.replace(tzinfo=UTC)
        return datetime.fromisoformat(str(value))

    def _now(self) -> str:
        return datetime.now(UTC).isoformat()

    def _select_in(self, cur: Cursor, sql: str, params: tuple[Any, ...], ids: Sequence[str]) -> list[Any]:
        """Rows of ``sql`` for ``ids`` (``{ids}`` in it stands for the list), in chunks the databases accept."""
        rows: list[Any] = []
        for chunk in iter_batches(list(ids), 500):
            marks = ", ".join("?" for _ in chunk)
            cur.execute(self._sql(sql.replace("{ids}", f"({marks})")), (*params, *chunk))
            rows.extend(cur.fetchall())
        return rows

    def _sql(self, sql: str) -> str:
        return sql


class ApiKeys(SqlBackend):
    """The service's API keys, stored hashed (see ``_keys``)."""

    def create_api_key(self, tenant_id: str | None, *, name: str = "", admin: bool = False) -> str:
        if admin and tenant_id is not None:
            raise InvalidInputError("an admin key acts for every tenant: create it without a tenant id")
        if not admin:
            if tenant_id is None:
                raise InvalidInputError("a key needs a tenant id unless it is an admin key")
            validate_tenant_id(tenant_id)
        key_id, secret = new_secret()

        def work(cur: Cursor) -> None:
            cur.execute(
                self._sql(
                    "INSERT INTO api_keys (key_id, tenant_id, admin, name, secret_hash, created_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)"
                ),
                (key_id, tenant_id, bool(admin), name, hash_secret(secret), self._now()),
            )

        self._write(work)
        return secret

    def _key(self, row: Sequence[Any]) -> ApiKey:
        key_id, tenant_id, admin, name, created, revoked = row[:6]
        return ApiKey(
            key_id=key_id,
            tenant_id=tenant_id,
            admin=bool(admin),
            name=name,
            created_at=self._timestamp(created),
            revoked_at=None if revoked is None else self._timestamp(revoked),
        )

    _KEY_COLUMNS = "key_id, tenant_id, admin, name, created_at, revoked_at"

    def check_api_key(self, secret: str) -> ApiKey | None:
        key_id = parse_key_id(secret) if isinstance(secret, str) else None
        if key_id is None:
            return None
        with self._read() as cur:
            cur.execute(self._sql(f"SELECT {self._KEY_COLUMNS}, secret_hash FROM api_keys WHERE key_id = ?"), (key_id,))
            row = cur.fetchone()
        if row is None or not secret_matches(secret, row[6]) or row[5] is not None:
            return None
        return self._key(row)

    def list_api_keys(self, tenant_id: str | None = None) -> list[ApiKey]:
        sql = f"SELECT {self._KEY_COLUMNS} FROM api_keys"
        params: tuple[Any, ...] = ()
        if tenant_id is not None:
            sql += " WHERE tenant_id = ?"
            params = (validate_tenant_id(tenant_id),)
        with self._read() as cur:
            cur.execute(self._sql(sql + " ORDER BY created_at, key_id"), params)
            return [self._key(row) for row in cur.fetchall()]

    def revoke_api_key(self, key_id: str) -> None:
        def work(cur: Cursor) -> int:
            cur.execute(self._sql("SELECT revoked_at FROM api_keys WHERE key_id = ?"), (key_id,))
            row = cur.fetchone()
            if row is None:
                raise NotFoundError(f"no API key {key_id!r}", hint="`norma keys list` shows the key ids")
            if row[0] is None:
                cur.execute(self._sql("UPDATE api_keys SET revoked_at = ? WHERE key_id = ?"), (self._now(), key_id))
            return 0

        self._write(work)
