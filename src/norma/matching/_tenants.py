"""A tenant's stored rules turned into a matcher: cached per (tenant, model, config), refreshed when the tenant's
version moves, and a push-down matcher over only the nearest rules for tenants too large to load.

The first :meth:`TenantMatchers.get` for a tenant reads its rules and fresh vectors in one transaction
(:meth:`~norma.store.RuleStore.snapshot`) and builds a :class:`~norma.matching.RuleMatcher` with them: only rules
without a fresh vector for the embedder's model are embedded (in chunks of 256 texts), and those vectors are written
back (:meth:`~norma.store.RuleStore.save_vectors`), so a model change re-embeds each rule once, lazily. Later calls
return the cached matcher; at most every ``refresh_interval`` seconds one of them reads the tenant's version and, when
it moved, applies just the rules changed since (:meth:`~norma.store.RuleStore.changes_since`) with ``matcher.upsert`` /
``matcher.remove``.

The store knows nothing of matchers: everything here reads it through the :class:`~norma.store.RuleStore` protocol.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from norma.embeddings import Embedder, get_embedder
from norma.errors import ConfigError
from norma.matching._confidence import RulebookStats
from norma.matching._config import MatchConfig
from norma.matching._gate import CalibratedGate, FixedGate, Gate, HeldOut, default_held_out, gate_from_dict, resolve
from norma.matching._matcher import RuleMatcher
from norma.rules import Rule, rule_fingerprint, validate_tenant_id
from norma.store import GateStore, RuleStore, VectorSearch, embed_unstored

__all__ = [
    "DEFAULT_REFRESH_INTERVAL",
    "MAX_CACHED_MATCHERS",
    "TenantMatchers",
    "apply_stored_gate",
    "candidate_matcher",
    "stored_gate",
    "tenant_gate",
    "tenant_matcher",
    "tenant_matchers",
]

DEFAULT_REFRESH_INTERVAL = 0.5
"""Seconds between two checks of a tenant's version by :meth:`TenantMatchers.get`."""
MAX_CACHED_MATCHERS = 256
"""Most matchers kept per store (least recently used ones are dropped first)."""


def _config_key(config: Any) -> str:
    if config is None:
        return ""
    dump = getattr(config, "model_dump_json", None)
    return str(dump(exclude_unset=True)) if callable(dump) else repr(config)


@dataclass
class _Entry:
    matcher: RuleMatcher | None = None
    version: int = -1
    checked_at: float = 0.0
    confirmed_at: float = 0.0  # wall clock: when the store last confirmed `version` is the tenant's
    lock: threading.Lock = field(default_factory=threading.Lock)


class TenantMatchers:
    """The matchers of one store's tenants, by (tenant, model id, config), each refreshed on version change.

    Args:
        store: where the rules and their vectors are kept.
        refresh_interval: seconds a cached matcher is returned without checking the tenant's version (0: every
            call checks).
        max_cached: most matchers kept (least recently used ones are dropped first).
        held_out: the held-out examples of the adapted encoder the matchers embed with
            (:func:`~norma.matching.read_held_out`), which their confidence's statistics are measured on.
    """

    def __init__(
        self,
        store: RuleStore,
        *,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        max_cached: int = MAX_CACHED_MATCHERS,
        held_out: HeldOut | None = None,
    ) -> None:
        self.store = store
        self.held_out = held_out
        self.refresh_interval = refresh_interval
        self._max = max_cached
        self._entries: OrderedDict[tuple[str, str, str], _Entry] = OrderedDict()
        self._measured: dict[tuple[object, ...], RulebookStats] = {}  # tenant_stats', for the version in the key
        self._lock = threading.Lock()

    def get(
        self, tenant_id: str, *, embedder: Embedder | None = None, config: MatchConfig | None = None
    ) -> RuleMatcher:
        """The tenant's matcher, built from the stored vectors on first use, cached, and brought up to date when the
        tenant's version changed (checked at most every :attr:`refresh_interval` seconds)."""
        validate_tenant_id(tenant_id)
        model = embedder if embedder is not None else get_embedder()
        key = (tenant_id, model.model_id, _config_key(config))
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry()
                while len(self._entries) > self._max:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
        matcher = entry.matcher
        if matcher is not None and time.monotonic() - entry.checked_at < self.refresh_interval:
            return matcher
        with entry.lock:
            if entry.matcher is None:
                self._build(entry, tenant_id, model, config)
            elif (
                time.monotonic() - entry.checked_at >= self.refresh_interval
                and self.store.version(tenant_id) != entry.version
            ):
                self._refresh(entry, tenant_id, model)
            entry.checked_at, entry.confirmed_at = time.monotonic(), time.time()
            assert entry.matcher is not None
            return entry.matcher

    def cached(
        self, tenant_id: str, *, embedder: Embedder | None = None, config: MatchConfig | None = None
    ) -> tuple[RuleMatcher, int, float] | None:
        """The tenant's matcher as :meth:`get` last returned it, without asking the store, with the tenant's version
        it reflects and when (wall clock, seconds since the epoch) the store last confirmed that version was current;
        None when there is none. What a service answers from while its store is unreachable."""
        model = embedder if embedder is not None else get_embedder()
        with self._lock:
            entry = self._entries.get((tenant_id, model.model_id, _config_key(config)))
        if entry is None or entry.matcher is None:
            return None
        return entry.matcher, entry.version, entry.confirmed_at

    def clear(self) -> None:
        """Forget every cached matcher and measured statistics (the next :meth:`get` of each tenant reads the store
        again)."""
        with self._lock:
            self._entries.clear()
            self._measured.clear()

    def gate(self, tenant_id: str, *, config: MatchConfig | None = None) -> Gate:
        """The tenant's gate for ``config``: see :func:`tenant_gate`."""
        validate_tenant_id(tenant_id)
        cfg = config or MatchConfig()
        stored = stored_gate(self.store, tenant_id) if cfg.threshold == "auto" else None
        return resolve(cfg, stored if isinstance(stored, (CalibratedGate, FixedGate)) else None)

    def stats(
        self, tenant_id: str, *, embedder: Embedder | None = None, held_out: HeldOut | None = None
    ) -> RulebookStats:
        """The statistics of every stored rule of the tenant that the confidence reads (the adapted encoder's
        cross-fitted ones with ``held_out``), measured once per version of the tenant's rules (one per tenant: a new
        version replaces it), so a push-down matcher over a few candidates reads the whole tenant's."""
        validate_tenant_id(tenant_id)
        store = self.store
        model = embedder if embedder is not None else get_embedder()
        key = (tenant_id, store.version(tenant_id), model.model_id, held_out)
        with self._lock:
            known = self._measured.get(key)
        if known is not None:
            return known
        stats = _from_snapshot(store, tenant_id, model, None, held_out)[1].stats()
        with self._lock:
            for old in [k for k in self._measured if k[0] == tenant_id and k != key]:
                del self._measured[old]
            self._measured[key] = stats
        return stats

    def _build(self, entry: _Entry, tenant_id: str, embedder: Embedder, config: MatchConfig | None) -> None:
        version, matcher, unstored = _from_snapshot(self.store, tenant_id, embedder, config, self.held_out)
        self._keep_new_vectors(tenant_id, embedder, matcher, unstored)
        entry.matcher, entry.version = matcher, version

    def _refresh(self, entry: _Entry, tenant_id: str, embedder: Embedder) -> None:
        assert entry.matcher is not None
        version, present, gone, vectors = self.store.changes_since(tenant_id, entry.version, embedder.model_id)
        if present:
            entry.matcher.upsert(present, vectors=vectors)
        if gone:
            known = {r.id for r in entry.matcher.rules}
            dropped = [i for i in gone if i in known]
            if dropped:
                entry.matcher.remove(dropped)
        apply_stored_gate(entry.matcher, self.store, tenant_id, self.held_out)
        self._keep_new_vectors(tenant_id, embedder, entry.matcher, [r for r in present if r.id not in vectors])
        entry.version = version

    def _keep_new_vectors(self, tenant_id: str, embedder: Embedder, matcher: RuleMatcher, rules: list[Rule]) -> None:
        if not rules:
            return
        fresh: dict[str, tuple[str, np.ndarray]] = {
            r.id: (rule_fingerprint(r), np.asarray(matcher.vectors_for(r.id), dtype=np.float32)) for r in rules
        }
        self.store.save_vectors(tenant_id, embedder.model_id, fresh)


_BY_STORE: weakref.WeakKeyDictionary[RuleStore, TenantMatchers] = weakref.WeakKeyDictionary()
"""The one map of this module: each store object's :class:`TenantMatchers`, which hold all that is derived from its
tenants' rules (matchers, measured statistics), dropped with the store."""
_BY_STORE_LOCK = threading.Lock()


def tenant_matchers(store: RuleStore) -> TenantMatchers:
    """The :class:`TenantMatchers` of ``store`` (one per store object, kept as long as the store is), with the
    default encoder's held-out similarities when it is an adapted one (``_gate.default_held_out``)."""
    with _BY_STORE_LOCK:
        matchers = _BY_STORE.get(store)
        if matchers is None:
            matchers = _BY_STORE[store] = TenantMatchers(store, held_out=default_held_out())
        return matchers


def _from_snapshot(
    store: RuleStore, tenant_id: str, embedder: Embedder, config: MatchConfig | None, held_out: HeldOut | None
) -> tuple[int, RuleMatcher, list[Rule]]:
    """(version, matcher, rules whose vectors were not stored and were embedded now) of the tenant as stored.

    Only the vectors the store keeps under the embedder's identity (model, precision, encoder version) are read;
    the others are embedded now, with a line on the ``norma.store`` log when the store holds another encoder's
    (:func:`~norma.store.embed_unstored`)."""
    version, rules, vectors = store.snapshot(tenant_id, embedder.model_id)
    unstored = [r for r in rules if r.id not in vectors]
    vectors = {**vectors, **embed_unstored(store, tenant_id, unstored, embedder)}
    matcher = RuleMatcher(rules, config, embedder=embedder, vectors=vectors)
    apply_stored_gate(matcher, store, tenant_id, held_out)
    return version, matcher, unstored


def snapshot_matcher(
    store: RuleStore,
    tenant_id: str,
    *,
    embedder: Embedder | None = None,
    config: MatchConfig | None = None,
    held_out: HeldOut | None = None,
) -> RuleMatcher:
    """The tenant's matcher as stored now (its rules, their stored vectors, its calibrated gate), built without
    writing to the store: vectors the store lacks for this model are computed in memory and not kept, and nothing
    is cached. For read-only tools (``norma rules eval`` / ``doctor``) and one-off checks; a service keeps its
    matchers with :func:`tenant_matcher`."""
    validate_tenant_id(tenant_id)
    if embedder is None:
        embedder, held_out = get_embedder(), held_out or default_held_out()
    return _from_snapshot(store, tenant_id, embedder, config, held_out)[1]


def tenant_matcher(
    store: RuleStore, tenant_id: str, *, embedder: Embedder | None = None, config: MatchConfig | None = None
) -> RuleMatcher:
    """The tenant's :class:`~norma.matching.RuleMatcher`, built from the stored vectors, cached, and refreshed when
    the tenant's version changes: ``tenant_matchers(store).get(tenant_id, ...)``."""
    return tenant_matchers(store).get(tenant_id, embedder=embedder, config=config)


class _Primed:
    """An embedder that already knows one text's vector (so a push-down match embeds the message once)."""

    def __init__(self, inner: Embedder, text: str, vector: np.ndarray) -> None:
        self._inner, self._text, self._vector = inner, text, vector

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dim(self) -> int:
        return self._inner.dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if list(texts) == [self._text]:
            return self._vector.reshape(1, -1)
        return self._inner.embed(texts)


def candidate_matcher(
    store: RuleStore,
    tenant_id: str,
    message: str,
    *,
    embedder: Embedder | None = None,
    config: MatchConfig | None = None,
    limit: int = 50,
    held_out: HeldOut | None = None,
) -> RuleMatcher:
    """A matcher over only the ``limit`` rules nearest ``message``, found by the database (push-down), for tenants
    too large to load.

    Nothing of the tenant is loaded per message but those rules and their vectors; BM25 statistics are those of the
    candidates, and a rule that only matches lexically can be missed (see docs/store.md). The gate is the tenant's
    (:func:`tenant_gate`) and the confidence reads the statistics of the whole tenant (:meth:`TenantMatchers.stats`),
    whatever the message. The store must find vectors itself
    (:class:`~norma.store.VectorSearch`: PostgreSQL + pgvector); ConfigError otherwise.
    """
    if not isinstance(store, VectorSearch):
        raise ConfigError(
            f"{type(store).__name__} cannot search vectors in the database",
            hint="use a PostgreSQL store (postgresql://...) for push-down, or tenant_matcher() to load the tenant",
        )
    validate_tenant_id(tenant_id)
    model = embedder if embedder is not None else get_embedder()
    matchers = tenant_matchers(store)
    stats = matchers.stats(tenant_id, embedder=model, held_out=held_out)
    gate = stored_gate(store, tenant_id)
    vector = np.asarray(model.embed([message]), dtype=np.float32)[0]
    ids = [rule_id for rule_id, _ in store.search(tenant_id, vector, model_id=model.model_id, limit=limit)]
    rules, vectors = store.rules_with_vectors(tenant_id, ids, model.model_id)
    matcher = RuleMatcher(rules, config, embedder=_Primed(model, message, vector), vectors=vectors)
    if isinstance(gate, (CalibratedGate, FixedGate)):
        matcher.set_gate(gate)
    matcher.keep_stats(stats, covering=True)
    return matcher


def stored_gate(store: RuleStore, tenant_id: str) -> Gate | None:
    """The tenant's calibrated gate kept in ``store`` (None when it has none, or the store keeps no gates)."""
    if not isinstance(store, GateStore):
        return None
    data = store.load_gate(tenant_id)
    return None if data is None else gate_from_dict(data)


def tenant_gate(store: RuleStore, tenant_id: str, *, config: MatchConfig | None = None) -> Gate:
    """The tenant's gate for ``config`` (default :class:`MatchConfig`): with ``threshold="auto"`` its stored
    calibrated gate, else the confidence gate; else the config's number (or none)."""
    return tenant_matchers(store).gate(tenant_id, config=config)


def apply_stored_gate(matcher: RuleMatcher, store: RuleStore, tenant_id: str, held_out: HeldOut | None = None) -> None:
    """Give ``matcher`` the tenant's stored calibrated gate (or none: the confidence gate) and ``held_out`` (an
    adapted encoder's examples, which the confidence's statistics come from)."""
    if held_out is not None and matcher.held_out is not held_out:
        matcher.set_gate(held_out)
    gate = stored_gate(store, tenant_id)
    gate = gate if isinstance(gate, (CalibratedGate, FixedGate)) else None
    if gate is not matcher.given_gate:
        matcher.set_gate(gate)
