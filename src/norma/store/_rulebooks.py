"""A rulebook into a tenant of the store (validated as a whole, then one transaction), and a tenant out of it.

The format and its reader are :mod:`norma.rules` (:func:`~norma.rules.load_rulebook`); this module only adds the
store around them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from norma.embeddings import Embedder
from norma.errors import InvalidInputError
from norma.rules import MAX_RULEBOOK_BYTES, MAX_RULEBOOK_RULES, Rulebook, dump_rulebook, load_rulebook
from norma.store._protocol import RuleStore

__all__ = ["export_rulebook", "import_rulebook"]


def import_rulebook(
    store: RuleStore,
    source: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any],
    *,
    tenant_id: str | None = None,
    embedder: Embedder | None = None,
    max_rules: int = MAX_RULEBOOK_RULES,
    max_bytes: int = MAX_RULEBOOK_BYTES,
) -> tuple[Rulebook, int]:
    """Validate a rulebook, then upsert all of its rules in one transaction; return it and the new version.

    The tenant is ``tenant_id``, else the file's ``tenant``; InvalidInputError when neither is given. The limits
    are those of :func:`~norma.rules.load_rulebook`.
    """
    book = load_rulebook(source, tenant_id=tenant_id, max_rules=max_rules, max_bytes=max_bytes)
    if book.tenant_id is None:
        raise InvalidInputError(
            "the rulebook names no tenant", hint="pass --tenant (or tenant_id=), or add `tenant:` to the file"
        )
    version = store.upsert_rules(book.tenant_id, list(book.rules), embedder=embedder)
    return book, version


def export_rulebook(store: RuleStore, tenant_id: str, *, fmt: Literal["yaml", "json"] = "yaml") -> str:
    """The tenant's rules as a rulebook text (sorted by id)."""
    return dump_rulebook(store.list_rules(tenant_id), tenant_id=tenant_id, fmt=fmt)
