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

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.rules import MAX_RULEBOOK_BYTES as MAX_RULEBOOK_BYTES
    from norma.rules import MAX_RULEBOOK_RULES as MAX_RULEBOOK_RULES
    from norma.rules import RULEBOOK_FORMAT as RULEBOOK_FORMAT
    from norma.rules import Rulebook as Rulebook
    from norma.rules import RulebookError as RulebookError
    from norma.rules import RulebookProblem as RulebookProblem
    from norma.rules import dump_rulebook as dump_rulebook
    from norma.rules import load_rulebook as load_rulebook
    from norma.store._models import ApiKey as ApiKey
    from norma.store._models import RulebookChanges as RulebookChanges
    from norma.store._models import RuleVersion as RuleVersion
    from norma.store._open import DB_URL_ENV as DB_URL_ENV
    from norma.store._open import DEFAULT_DB_URL as DEFAULT_DB_URL
    from norma.store._open import open_store as open_store
    from norma.store._open import open_tenant_store as open_tenant_store
    from norma.store._postgres import PostgresRuleStore as PostgresRuleStore
    from norma.store._postgres import redact_url as redact_url
    from norma.store._protocol import GateStore as GateStore
    from norma.store._protocol import KeyStore as KeyStore
    from norma.store._protocol import RuleStore as RuleStore
    from norma.store._protocol import Store as Store
    from norma.store._protocol import VectorEncoders as VectorEncoders
    from norma.store._protocol import VectorSearch as VectorSearch
    from norma.store._rulebooks import export_rulebook as export_rulebook
    from norma.store._rulebooks import import_rulebook as import_rulebook
    from norma.store._rulebooks import rulebook_changes as rulebook_changes
    from norma.store._sqlite import SQLiteRuleStore as SQLiteRuleStore
    from norma.store._unstored import embed_unstored as embed_unstored

_PUBLIC: dict[str, str] = {
    "dump_rulebook": "norma.rules",
    "export_rulebook": "_rulebooks",
    "import_rulebook": "_rulebooks",
    "KeyStore": "_protocol",
    "load_rulebook": "norma.rules",
    "MAX_RULEBOOK_BYTES": "norma.rules",
    "MAX_RULEBOOK_RULES": "norma.rules",
    "open_store": "_open",
    "open_tenant_store": "_open",
    "Rulebook": "norma.rules",
    "rulebook_changes": "_rulebooks",
    "RulebookChanges": "_models",
    "RulebookError": "norma.rules",
    "RulebookProblem": "norma.rules",
    "RuleStore": "_protocol",
    "RuleVersion": "_models",
    "Store": "_protocol",
    "VectorSearch": "_protocol",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "ApiKey": "_models",
    "DB_URL_ENV": "_open",
    "DEFAULT_DB_URL": "_open",
    "GateStore": "_protocol",
    "PostgresRuleStore": "_postgres",
    "redact_url": "_postgres",
    "RULEBOOK_FORMAT": "norma.rules",
    "SQLiteRuleStore": "_sqlite",
    "VectorEncoders": "_protocol",
    "embed_unstored": "_unstored",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
