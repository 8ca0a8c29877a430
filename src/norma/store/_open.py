"""``open_store(url)``: the store a URL names (``sqlite:///…`` or ``postgresql://…``)."""

from __future__ import annotations

import os

from norma.errors import ConfigError
from norma.store._protocol import Store

__all__ = ["DB_URL_ENV", "DEFAULT_DB_URL", "open_store", "resolve_url"]

DB_URL_ENV = "NORMA_DB_URL"
"""Environment variable naming the store when no URL is given."""
DEFAULT_DB_URL = "sqlite:///./.norma/norma.db"
"""The store used when neither a URL nor ``$NORMA_DB_URL`` is given: a SQLite file under the working directory."""


def resolve_url(url: str | None = None) -> str:
    """``url``, else ``$NORMA_DB_URL``, else :data:`DEFAULT_DB_URL`."""
    chosen = url if url is not None and url.strip() else os.environ.get(DB_URL_ENV, "").strip()
    return chosen.strip() if chosen else DEFAULT_DB_URL


def open_store(url: str | None = None) -> Store:
    """Open (creating and migrating when needed) the rule store at ``url``.

    * ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db`` — the embedded default (WAL mode).
    * ``postgresql://user:password@host:5432/db`` (or ``postgres://``; libpq parameters such as ``?host=/socket``
      work) — PostgreSQL with pgvector; needs ``pip install 'norma[postgres]'``.

    ``None`` means ``$NORMA_DB_URL``, else ``sqlite:///./.norma/norma.db``. Raises ConfigError for any other
    scheme, MissingDependencyError when the PostgreSQL driver is missing, StoreError when the database cannot be
    opened.
    """
    chosen = resolve_url(url)
    scheme, sep, rest = chosen.partition("://")
    if sep and scheme == "sqlite":
        from norma.store._sqlite import SQLiteRuleStore

        path = rest[1:] if rest.startswith("/") else rest
        return SQLiteRuleStore(path)
    if sep and scheme in {"postgresql", "postgres"}:
        from norma.store._postgres import PostgresRuleStore

        return PostgresRuleStore(chosen)
    from norma.store._postgres import redact_url

    raise ConfigError(
        f"unknown rule store URL {redact_url(chosen)!r}",
        source=DB_URL_ENV if url is None else None,
        hint="use sqlite:///path/to/norma.db or postgresql://user@host/db",
    )
