"""``open_store(url)``: the store a URL names (``sqlite:///…`` or ``postgresql://…``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from norma.errors import ConfigError, NotFoundError
from norma.store._protocol import Store

__all__ = ["DB_URL_ENV", "DEFAULT_DB_URL", "open_store", "open_tenant_store", "resolve_url", "sqlite_path"]

DB_URL_ENV = "NORMA_DB_URL"
"""Environment variable naming the store when no URL is given."""
DEFAULT_DB_URL = "sqlite:///./.norma/norma.db"
"""The store used when neither a URL nor ``$NORMA_DB_URL`` is given: a SQLite file under the working directory."""


def resolve_url(url: str | None = None) -> str:
    """``url``, else ``$NORMA_DB_URL``, else :data:`DEFAULT_DB_URL`."""
    chosen = url if url is not None and url.strip() else os.environ.get(DB_URL_ENV, "").strip()
    return chosen.strip() if chosen else DEFAULT_DB_URL


def sqlite_path(url: str) -> str:
    """The file a ``sqlite:`` URL names: ``sqlite:////abs/x.db`` -> ``/abs/x.db``, ``sqlite:///./x.db`` -> ``./x.db``.

    A relative path must say so (``./`` or ``../``): ``sqlite:///data/x.db`` is refused with ConfigError, since
    one slash more or less silently moves the store between ``/data`` and the working directory.
    """
    rest = url.partition("://")[2]
    path = rest[1:] if rest.startswith("/") else rest
    if path.startswith("/") or path in {"", ":memory:"} or path.startswith("file:"):
        return path  # absolute; the empty and in-memory names are refused by SQLiteRuleStore with their own message
    if path in {".", ".."} or path.startswith(("./", "../")):
        return path
    raise ConfigError(
        f"the SQLite URL {url!r} names a relative path without saying so",
        hint=f"write sqlite:////{path} for the absolute path /{path}, or sqlite:///./{path} for {path} under the"
        " working directory",
    )


def open_store(
    url: str | None = None,
    *,
    create: bool = True,
    connect_timeout: float | None = None,
    read_timeout: float | None = None,
    write_timeout: float | None = None,
) -> Store:
    """Open (creating and migrating when needed) the rule store at ``url``.

    * ``sqlite:////absolute/path.db`` or ``sqlite:///./relative/path.db`` — the embedded default (WAL mode); a
      relative path must start with ``./`` or ``../`` (see :func:`sqlite_path`).
    * ``postgresql://user:password@host:5432/db`` (or ``postgres://``; libpq parameters such as ``?host=/socket``
      work) — PostgreSQL with pgvector; needs ``pip install 'norma-rules[postgres]'``.

    ``None`` means ``$NORMA_DB_URL``, else ``sqlite:///./.norma/norma.db``. With ``create=False`` (what commands
    that only read use) a SQLite file that does not exist is NotFoundError "no store at ...", and nothing is
    created, not even its folder; a PostgreSQL database must exist either way (norma's tables are created in it).
    Raises ConfigError for any other scheme, MissingDependencyError when the PostgreSQL driver is missing,
    StoreError when the database cannot be opened.

    The timeouts (seconds; None: the defaults, 3, 5 and 20) bound every wait on a PostgreSQL server: opening a
    connection, a read of a few rows, a write or a read of a whole tenant (:class:`PostgresRuleStore`). SQLite, a
    local file, ignores them (its writers wait for each other at most ``lock_timeout``).
    """
    chosen = resolve_url(url)
    scheme, sep, _ = chosen.partition("://")
    if sep and scheme == "sqlite":
        from norma.store._sqlite import SQLiteRuleStore

        path = sqlite_path(chosen)
        if not create and path and not os.path.isfile(path):
            raise NotFoundError(
                f"no store at {path}",
                source=DB_URL_ENV if url is None and os.environ.get(DB_URL_ENV, "").strip() else None,
                hint="check --db / $NORMA_DB_URL, or create the store by importing rules into it",
            )
        return SQLiteRuleStore(path)
    if sep and scheme in {"postgresql", "postgres"}:
        from norma.store._postgres import CONNECT_TIMEOUT, READ_TIMEOUT, WRITE_TIMEOUT, PostgresRuleStore

        return PostgresRuleStore(
            chosen,
            connect_timeout=connect_timeout or CONNECT_TIMEOUT,
            read_timeout=read_timeout or READ_TIMEOUT,
            write_timeout=write_timeout or WRITE_TIMEOUT,
        )
    from norma.store._postgres import redact_url

    raise ConfigError(
        f"unknown rule store URL {redact_url(chosen)!r}",
        source=DB_URL_ENV if url is None else None,
        hint="use sqlite:////abs/path/norma.db, sqlite:///./rel/path/norma.db or postgresql://user@host/db",
    )


@contextmanager
def open_tenant_store(tenant_id: str, url: str | None = None) -> Iterator[Store]:
    """The existing store at ``url`` (never created) for work on ``tenant_id``, closed on exit.

    Raises:
        NotFoundError: no store there, or the store has never held rules of ``tenant_id``.
    """
    store = open_store(url, create=False)
    try:
        if tenant_id not in store.tenants():
            raise NotFoundError(
                f"tenant {tenant_id!r} has no rules in {store.url}",
                hint=f"import them with norma rules import FILE --tenant {tenant_id}, or check --db",
            )
        yield store
    finally:
        store.close()
