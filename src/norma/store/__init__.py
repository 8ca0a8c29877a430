"""Where a tenant's rules live: versioned, with history and embeddings; SQLite by default, PostgreSQL at scale.

* :func:`open_store` — the store a URL names: ``sqlite:///path.db`` (default ``./.norma/norma.db``, or
  ``$NORMA_DB_URL``) or ``postgresql://…`` (pgvector; ``pip install 'norma[postgres]'``).
* :class:`RuleStore` — the protocol both backends follow: atomic batch upserts, per-tenant version and per-rule
  history, stored vectors, cached per-tenant matchers, API keys.
* Rulebooks — a tenant's rules as one YAML/JSON file: :func:`load_rulebook`, :func:`import_rulebook`,
  :func:`export_rulebook`, :func:`dump_rulebook`; :class:`RulebookError` lists every problem.

See docs/store.md.
"""

from __future__ import annotations

from norma.store._models import ApiKey, RuleVersion
from norma.store._open import DB_URL_ENV, DEFAULT_DB_URL, open_store
from norma.store._postgres import PostgresRuleStore
from norma.store._protocol import RuleStore
from norma.store._rulebook import (
    MAX_RULEBOOK_BYTES,
    MAX_RULEBOOK_RULES,
    RULEBOOK_FORMAT,
    Rulebook,
    RulebookError,
    RulebookProblem,
    dump_rulebook,
    export_rulebook,
    import_rulebook,
    load_rulebook,
)
from norma.store._sqlite import SQLiteRuleStore

__all__ = [
    "ApiKey",
    "DB_URL_ENV",
    "DEFAULT_DB_URL",
    "MAX_RULEBOOK_BYTES",
    "MAX_RULEBOOK_RULES",
    "PostgresRuleStore",
    "RULEBOOK_FORMAT",
    "RuleStore",
    "RuleVersion",
    "Rulebook",
    "RulebookError",
    "RulebookProblem",
    "SQLiteRuleStore",
    "dump_rulebook",
    "export_rulebook",
    "import_rulebook",
    "load_rulebook",
    "open_store",
]
