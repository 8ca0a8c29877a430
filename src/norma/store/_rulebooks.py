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
from norma.store._models import RulebookChanges
from norma.store._protocol import RuleStore

__all__ = ["export_rulebook", "import_rulebook", "rulebook_changes"]


def import_rulebook(
    store: RuleStore,
    source: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any],
    *,
    tenant_id: str | None = None,
    embedder: Embedder | None = None,
    max_rules: int = MAX_RULEBOOK_RULES,
    max_bytes: int = MAX_RULEBOOK_BYTES,
    prune: bool = False,
) -> tuple[Rulebook, int]:
    """Validate a rulebook, then upsert all of its rules in one transaction; return it and the new version.

    The tenant is ``tenant_id``, else the file's ``tenant``; InvalidInputError when neither is given. The limits
    are those of :func:`~norma.rules.load_rulebook`. ``prune=True`` makes the tenant exactly the rulebook: stored
    rules it leaves out are deleted in the same transaction and version (``RuleStore.upsert_rules(..., prune=True)``).
    """
    book = _load(source, tenant_id, max_rules, max_bytes)
    assert book.tenant_id is not None
    version = store.upsert_rules(book.tenant_id, list(book.rules), embedder=embedder, prune=prune)
    return book, version


def rulebook_changes(
    store: RuleStore,
    source: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any],
    *,
    tenant_id: str | None = None,
    prune: bool = False,
    max_rules: int = MAX_RULEBOOK_RULES,
    max_bytes: int = MAX_RULEBOOK_BYTES,
) -> tuple[Rulebook, RulebookChanges]:
    """What :func:`import_rulebook` with the same arguments would change, without writing (a dry run).

    ``deleted`` lists the stored rules the rulebook leaves out; only ``prune=True`` deletes them, so without it
    they are reported as ``unchanged``.
    """
    book = _load(source, tenant_id, max_rules, max_bytes)
    assert book.tenant_id is not None
    stored = {rule.id: rule.to_dict() for rule in store.list_rules(book.tenant_id)}
    added: list[str] = []
    updated: list[str] = []
    unchanged: list[str] = []
    for rule in book.rules:
        kept = stored.get(rule.id)
        mine = rule.model_copy(update={"tenant_id": book.tenant_id}).to_dict()
        (added if kept is None else unchanged if kept == mine else updated).append(rule.id)
    left_out = sorted(set(stored) - {rule.id for rule in book.rules})
    changes = RulebookChanges(
        tenant_id=book.tenant_id,
        added=tuple(sorted(added)),
        updated=tuple(sorted(updated)),
        deleted=tuple(left_out) if prune else (),
        unchanged=tuple(sorted(unchanged + ([] if prune else left_out))),
    )
    return book, changes


def _load(
    source: str | os.PathLike[str] | Mapping[str, Any] | Sequence[Any],
    tenant_id: str | None,
    max_rules: int,
    max_bytes: int,
) -> Rulebook:
    book = load_rulebook(source, tenant_id=tenant_id, max_rules=max_rules, max_bytes=max_bytes)
    if book.tenant_id is None:
        raise InvalidInputError(
            "the rulebook names no tenant", hint="pass --tenant (or tenant_id=), or add `tenant:` to the file"
        )
    return book


def export_rulebook(store: RuleStore, tenant_id: str, *, fmt: Literal["yaml", "json"] = "yaml") -> str:
    """The tenant's rules as a rulebook text (sorted by id)."""
    return dump_rulebook(store.list_rules(tenant_id), tenant_id=tenant_id, fmt=fmt)
