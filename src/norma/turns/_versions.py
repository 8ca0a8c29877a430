"""A stored tenant at one of its past versions (``norma.open(tenant=..., version=N)``, ``norma rules diff
acme@3 acme@latest``): the rules as they were after that change, the calibrated gate in force then; nothing is
written to the store."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from norma.errors import InvalidInputError
from norma.matching import RuleMatcher, snapshot_matcher
from norma.rules import Rule, rule_texts

if TYPE_CHECKING:
    from norma.matching import MatchConfig
    from norma.store import RuleStore

__all__ = ["version_matcher"]


class _AsOf:
    """A store as it was at one version of a tenant, for :func:`~norma.matching.snapshot_matcher`: the rules then
    (``rules_at``), the vectors still stored for those whose texts are unchanged since (the others are embedded in
    memory), and the calibrated gate in force then. Reads only."""

    def __init__(self, store: RuleStore, tenant_id: str, version: int) -> None:
        self.store, self.version, self.url = store, version, store.url
        rules_at = getattr(store, "rules_at", None)
        if rules_at is None:
            raise InvalidInputError(
                f"the store at {store.url} keeps no versions of a tenant's rules",
                location="version",
                hint="open the tenant at its current version",
            )
        self.rules: list[Rule] = rules_at(tenant_id, version)

    def snapshot(self, tenant_id: str, model_id: str) -> tuple[int, list[Rule], dict[str, np.ndarray]]:
        then = {rule.id: rule for rule in self.rules}
        now, vectors = self.store.rules_with_vectors(tenant_id, list(then), model_id)
        unchanged = {rule.id for rule in now if rule_texts(rule) == rule_texts(then[rule.id])}
        return self.version, list(self.rules), {i: v for i, v in vectors.items() if i in unchanged}

    def gate_history(self, tenant_id: str) -> list[tuple[int, dict[str, Any] | None, str]]:
        history = getattr(self.store, "gate_history", None)
        return [] if history is None else [h for h in history(tenant_id) if h[0] <= self.version]

    def load_gate(self, tenant_id: str) -> dict[str, Any] | None:
        history = self.gate_history(tenant_id)
        return history[-1][1] if history else None

    def save_gate(self, tenant_id: str, gate: Mapping[str, Any] | None) -> int:
        raise InvalidInputError("a past version of a tenant cannot be changed", location="version")


def version_matcher(
    tenant: str, version: int, store: RuleStore | str | None, config: MatchConfig | None
) -> RuleMatcher:
    """The matcher of ``tenant``'s rules at ``version`` (``norma.open(tenant=..., version=...)``)."""
    if store is None or isinstance(store, str):
        from norma.store import open_tenant_store

        with open_tenant_store(tenant, store) as opened:
            return _matcher_at(opened, tenant, version, config)
    return _matcher_at(store, tenant, version, config)


def _matcher_at(store: RuleStore, tenant: str, version: int, config: MatchConfig | None) -> RuleMatcher:
    return snapshot_matcher(cast("RuleStore", _AsOf(store, tenant, version)), tenant, config=config)
