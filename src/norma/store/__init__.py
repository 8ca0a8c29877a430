"""Where a tenant's rules live: versioned, with history and embeddings; SQLite by default, PostgreSQL at scale.

* :func:`open_store` — the store a URL names: ``sqlite:///path.db`` (default ``./.norma/norma.db``, or
  ``$NORMA_DB_URL``) or ``postgresql://…`` (pgvector; ``pip install 'norma-rules[postgres]'``);
  :func:`open_tenant_store` — an existing store that knows a tenant, closed on exit (for commands that read one
  tenant).
* :class:`RuleStore` — the protocol both backends follow for rules: atomic batch upserts, per-tenant version and
  per-rule history, stored vectors. :class:`KeyStore` — the service's API keys. :class:`Store` — both, what
  :func:`open_store` returns. :class:`VectorSearch` — nearest vectors found in the database (PostgreSQL).
* Rulebooks in and out of a tenant: :func:`import_rulebook` (``prune=True``: the tenant becomes exactly the file),
  :func:`rulebook_changes` (what an import would change), :func:`export_rulebook` (the format and its reader,
  :func:`~norma.rules.load_rulebook`, are in :mod:`norma.rules`, re-exported here).

The store knows nothing of matchers: :mod:`norma.matching` builds a tenant's matcher from what the store keeps
(``norma.matching.tenant_matcher(store, tenant)``). See docs/store.md.
"""

from __future__ import annotations

from norma.rules import (
    MAX_RULEBOOK_BYTES,
    MAX_RULEBOOK_RULES,
    RULEBOOK_FORMAT,
    Rulebook,
    RulebookError,
    RulebookProblem,
    dump_rulebook,
    load_rulebook,
)
from norma.store._models import ApiKey, RulebookChanges, RuleVersion
from norma.store._open import DB_URL_ENV, DEFAULT_DB_URL, open_store, open_tenant_store
from norma.store._postgres import PostgresRuleStore, redact_url
from norma.store._protocol import GateStore, KeyStore, RuleStore, Store, VectorSearch
from norma.store._rulebooks import export_rulebook, import_rulebook, rulebook_changes
from norma.store._sqlite import SQLiteRuleStore

__all__ = [
    "ApiKey",
    "DB_URL_ENV",
    "DEFAULT_DB_URL",
    "GateStore",
    "KeyStore",
    "MAX_RULEBOOK_BYTES",
    "MAX_RULEBOOK_RULES",
    "PostgresRuleStore",
    "RULEBOOK_FORMAT",
    "RuleStore",
    "RuleVersion",
    "Rulebook",
    "RulebookChanges",
    "RulebookError",
    "RulebookProblem",
    "SQLiteRuleStore",
    "Store",
    "VectorSearch",
    "dump_rulebook",
    "export_rulebook",
    "import_rulebook",
    "load_rulebook",
    "open_store",
    "open_tenant_store",
    "redact_url",
    "rulebook_changes",
]
