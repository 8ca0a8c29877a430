"""The interface every rule store has (SQLite and PostgreSQL implement it; the service codes against it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from norma.embeddings import Embedder
from norma.matching import Rule, Scope
from norma.store._models import ApiKey, RuleVersion

if TYPE_CHECKING:
    from norma.matching import RuleMatcher

__all__ = ["RuleStore"]


@runtime_checkable
class RuleStore(Protocol):
    """Tenant-scoped, versioned rules with their embeddings, and the API keys of the service.

    Every method takes the tenant first and never reads or writes another tenant's rows. Writes are atomic: a
    failed call leaves the store as it was. Each committed change bumps the tenant's rule-set :meth:`version` and
    appends to the changed rules' :meth:`history`.
    """

    url: str
    """Where the store lives, with any password replaced by ``***``."""

    def upsert_rules(
        self,
        tenant_id: str,
        rules: Sequence[Rule],
        *,
        embedder: Embedder | None = None,
        vectors: Mapping[str, np.ndarray] | None = None,
    ) -> int:
        """Insert or replace ``rules`` in one transaction; return the tenant's version after it.

        A rule's ``tenant_id`` must be ``tenant_id`` or ``"default"`` (replaced). Rules equal to what is stored are
        not changes (re-importing a rulebook does not bump the version). Rules whose texts changed are embedded
        (``embedder``, default :func:`norma.embeddings.get_embedder`), in one batch, before the transaction;
        ``vectors`` supplies precomputed ones by rule id (shape ``(len(rule_texts(rule)), dim)``).
        """
        ...

    def get_rule(self, tenant_id: str, rule_id: str) -> Rule:
        """The rule, or :class:`~norma.errors.NotFoundError`."""
        ...

    def list_rules(
        self,
        tenant_id: str,
        *,
        scope: Scope | str | None = None,
        scenario_id: str | None = None,
        step_id: str | None = None,
        enabled: bool | None = None,
        tag: str | None = None,
    ) -> list[Rule]:
        """The tenant's rules that pass every filter given, sorted by id."""
        ...

    def delete_rules(self, tenant_id: str, rule_ids: Sequence[str]) -> int:
        """Delete the rules in one transaction; return the new version. NotFoundError (nothing deleted) if any
        id is not stored."""
        ...

    def version(self, tenant_id: str) -> int:
        """The tenant's rule-set version: 0 before its first change, +1 per committed change."""
        ...

    def history(self, tenant_id: str, rule_id: str) -> list[RuleVersion]:
        """Every committed version of the rule, oldest first (deletions included); NotFoundError if none."""
        ...

    def tenants(self) -> list[str]:
        """Ids of the tenants that have ever had a committed change, sorted."""
        ...

    def load_vectors(self, tenant_id: str, model_id: str) -> dict[str, np.ndarray]:
        """Stored vectors of the tenant's rules made by ``model_id`` that are still fresh (texts unchanged)."""
        ...

    def matcher(self, tenant_id: str, *, embedder: Embedder | None = None, config: Any = None) -> RuleMatcher:
        """The tenant's :class:`~norma.matching.RuleMatcher`, built from stored vectors, cached, and refreshed
        when the tenant's version changes (checked at most every ``refresh_interval`` seconds)."""
        ...

    def create_api_key(self, tenant_id: str | None, *, name: str = "", admin: bool = False) -> str:
        """Create a key and return its secret (shown once; only its hash is kept)."""
        ...

    def check_api_key(self, secret: str) -> ApiKey | None:
        """The key ``secret`` belongs to, or None (unknown, malformed or revoked)."""
        ...

    def list_api_keys(self, tenant_id: str | None = None) -> list[ApiKey]:
        """Every key (of one tenant when given), revoked ones included, by creation time."""
        ...

    def revoke_api_key(self, key_id: str) -> None:
        """Revoke a key for good; NotFoundError if there is no such key."""
        ...

    def close(self) -> None:
        """Release connections; the store is not usable afterwards."""
        ...
