"""The interfaces every store has (SQLite and PostgreSQL implement them; matching and the service code against them).

* :class:`RuleStore` — a tenant's rules, versions, history and stored vectors.
* :class:`KeyStore` — the service's API keys.
* :class:`GateStore` — a tenant's calibrated gate (a JSON mapping the matching layer writes), versioned.
* :class:`VectorSearch` — nearest stored vectors computed in the database (PostgreSQL + pgvector only).
* :class:`VectorEncoders` — which encoders a tenant's stored vectors were made with (both backends).
* :class:`Store` — what :func:`~norma.store.open_store` returns: both of the first two, on one database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from norma.embeddings import Embedder
from norma.rules import Rule, Scope
from norma.store._models import ApiKey, RuleVersion

__all__ = ["GateStore", "KeyStore", "RuleStore", "Store", "VectorEncoders", "VectorSearch"]


@runtime_checkable
class RuleStore(Protocol):
    """Tenant-scoped, versioned rules with their embeddings.

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
        prune: bool = False,
    ) -> int:
        """Insert or replace ``rules`` in one transaction; return the tenant's version after it.

        ``prune=True`` makes the tenant exactly ``rules``: every stored rule they leave out is deleted in the same
        transaction and the same one new version (none when nothing changed); deletions are kept in
        :meth:`history`.

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

    def save_vectors(self, tenant_id: str, model_id: str, vectors: Mapping[str, tuple[str, np.ndarray]]) -> None:
        """Keep vectors computed outside :meth:`upsert_rules` (lazy re-embedding); no version change.

        ``vectors`` maps rule id to ``(fingerprint, matrix)``; entries whose rule changed meanwhile are dropped.
        """
        ...

    def snapshot(self, tenant_id: str, model_id: str) -> tuple[int, list[Rule], dict[str, np.ndarray]]:
        """``(version, rules sorted by id, their fresh vectors for model_id)`` of a tenant, read in one transaction."""
        ...

    def changes_since(
        self, tenant_id: str, version: int, model_id: str
    ) -> tuple[int, list[Rule], list[str], dict[str, np.ndarray]]:
        """What changed after ``version``: ``(current version, rules now stored, ids now deleted, their fresh
        vectors for model_id)``, read in one transaction."""
        ...

    def rules_with_vectors(
        self, tenant_id: str, rule_ids: Sequence[str], model_id: str
    ) -> tuple[list[Rule], dict[str, np.ndarray]]:
        """The stored rules among ``rule_ids`` (sorted by id; unknown ids are skipped) and their fresh vectors for
        ``model_id``, read in one transaction."""
        ...

    def close(self) -> None:
        """Release connections; the store is not usable afterwards."""
        ...


@runtime_checkable
class KeyStore(Protocol):
    """The API keys of the service: only a hash of each secret is kept."""

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


@runtime_checkable
class GateStore(Protocol):
    """A tenant's calibrated matching gate, stored with its rules: setting or clearing it is one committed change
    (the tenant's :meth:`RuleStore.version` moves, so every replica's matcher picks it up), kept in its history."""

    def save_gate(self, tenant_id: str, gate: Mapping[str, Any] | None) -> int:
        """Store ``gate`` (a JSON-ready mapping; None clears it) and return the tenant's new version.
        NotFoundError if the tenant has no rules."""
        ...

    def load_gate(self, tenant_id: str) -> dict[str, Any] | None:
        """The tenant's current gate, or None."""
        ...

    def gate_history(self, tenant_id: str) -> list[tuple[int, dict[str, Any] | None, str]]:
        """Every gate set or cleared: ``(tenant version, gate or None, changed at)``, oldest first."""
        ...


@runtime_checkable
class VectorSearch(Protocol):
    """A store that finds a tenant's nearest stored vectors itself (PostgreSQL + pgvector)."""

    def search(
        self, tenant_id: str, vector: np.ndarray, *, model_id: str, limit: int = 30, ef_search: int | None = None
    ) -> list[tuple[str, float]]:
        """The ``limit`` rules whose best fresh vector is nearest ``vector``: ``(rule_id, similarity)``, best first."""
        ...


@runtime_checkable
class VectorEncoders(Protocol):
    """A store that tells which encoders made a tenant's stored vectors.

    Every stored vector is filed under the identity of the encoder that made it (its ``model_id``: model, precision
    and encoder version, see ``norma.embeddings._identity``), and read back only under that identity: the vectors
    of another encoder are never mixed with an encoder's own.
    """

    def vector_encoders(self, tenant_id: str) -> dict[str, int]:
        """Encoder identity -> how many of the tenant's rules have fresh vectors (texts unchanged) made by it."""
        ...


@runtime_checkable
class Store(RuleStore, KeyStore, GateStore, Protocol):
    """A rule store, a key store and a gate store on one database: what :func:`~norma.store.open_store` returns."""
