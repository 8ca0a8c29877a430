"""Per-tenant matchers built from stored vectors, cached, and brought up to date when the tenant's version moves.

The first :meth:`MatcherCache.get` for a tenant reads its rules and fresh vectors in one transaction and builds a
:class:`~norma.matching.RuleMatcher` with them: only rules without a fresh vector for the embedder's model are
embedded (one batch), and those vectors are written back, so a model change re-embeds each rule once, lazily.
Later calls return the cached matcher; at most every ``store.refresh_interval`` seconds one of them reads the
tenant's version and, when it moved, applies just the rules changed since (from the history) with
``matcher.upsert`` / ``matcher.remove``.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from norma.embeddings import Embedder
from norma.matching import Rule, rule_fingerprint

if TYPE_CHECKING:
    from norma.matching import RuleMatcher
    from norma.store._base import SqlRuleStore

__all__ = ["MatcherCache"]

MAX_CACHED = 256
"""Most matchers kept per store (least recently used ones are dropped first)."""


def _config_key(config: Any) -> str:
    if config is None:
        return ""
    dump = getattr(config, "model_dump_json", None)
    return str(dump()) if callable(dump) else repr(config)


@dataclass
class _Entry:
    matcher: RuleMatcher | None = None
    version: int = -1
    checked_at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


class MatcherCache:
    """The matchers of one store, by (tenant, model id, config)."""

    def __init__(self, store: SqlRuleStore, *, max_cached: int = MAX_CACHED) -> None:
        self._store = store
        self._max = max_cached
        self._entries: OrderedDict[tuple[str, str, str], _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, tenant_id: str, embedder: Embedder, config: Any) -> RuleMatcher:
        key = (tenant_id, embedder.model_id, _config_key(config))
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry()
                while len(self._entries) > self._max:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
        matcher = entry.matcher
        if matcher is not None and time.monotonic() - entry.checked_at < self._store.refresh_interval:
            return matcher
        with entry.lock:
            if entry.matcher is None:
                self._build(entry, tenant_id, embedder, config)
            elif (
                time.monotonic() - entry.checked_at >= self._store.refresh_interval
                and self._store.version(tenant_id) != entry.version
            ):
                self._refresh(entry, tenant_id, embedder)
            entry.checked_at = time.monotonic()
            assert entry.matcher is not None
            return entry.matcher

    def _build(self, entry: _Entry, tenant_id: str, embedder: Embedder, config: Any) -> None:
        from norma.matching import RuleMatcher

        version, rules, vectors = self._store.snapshot(tenant_id, embedder.model_id)
        matcher = RuleMatcher(rules, config, embedder=embedder, vectors=vectors)
        self._keep_new_vectors(tenant_id, embedder, matcher, [r for r in rules if r.id not in vectors])
        entry.matcher, entry.version = matcher, version

    def _refresh(self, entry: _Entry, tenant_id: str, embedder: Embedder) -> None:
        assert entry.matcher is not None
        version, present, gone, vectors = self._store.changes_since(tenant_id, entry.version, embedder.model_id)
        if present:
            entry.matcher.upsert(present, vectors=vectors)
        if gone:
            known = {r.id for r in entry.matcher.rules}
            dropped = [i for i in gone if i in known]
            if dropped:
                entry.matcher.remove(dropped)
        self._keep_new_vectors(tenant_id, embedder, entry.matcher, [r for r in present if r.id not in vectors])
        entry.version = version

    def _keep_new_vectors(self, tenant_id: str, embedder: Embedder, matcher: RuleMatcher, rules: list[Rule]) -> None:
        if not rules:
            return
        fresh: dict[str, tuple[str, np.ndarray]] = {
            r.id: (rule_fingerprint(r), np.asarray(matcher.vectors_for(r.id), dtype=np.float32)) for r in rules
        }
        self._store.save_vectors(tenant_id, embedder.model_id, fresh)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
