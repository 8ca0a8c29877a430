"""What a replica does while its rule store is unreachable: it knows the store is down, answers from memory what it
may, tells clients when to retry, and logs state changes instead of one line per failed request.

* :class:`StoreHealth` is a circuit breaker around the store. The first call that fails with
  :class:`~norma.errors.StoreUnavailableError` marks the store down; while it is down, calls fail at once (no request
  waits for a dead database) except one probe every :data:`PROBE_INTERVAL` seconds, and the first call that succeeds
  marks it up again. The changes are logged (warning when it goes down, info when it is back, with how many requests
  failed and how many were answered from memory), plus one line every :data:`REPORT_INTERVAL` seconds while it
  stays down.
* :class:`KeyCache` remembers the API keys the store verified, by a hash of their secret, for ``stale_for`` seconds.
  While the store is up every request is checked by the store (a revoked key stops at once); while it is down, a key
  the store verified within ``stale_for`` seconds is accepted, so a key revoked just before an outage keeps working
  at most ``stale_for`` seconds after its last successful check.
* :class:`BreakerStore` is the store the service reads and writes through: a typed :class:`~norma.store.Store`
  whose every method goes through the :class:`StoreHealth`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from norma.errors import StoreUnavailableError
from norma.service._auth import Principal

if TYPE_CHECKING:  # the store loads on first use (numpy and the database drivers with it)
    import numpy as np

    from norma.embeddings import Embedder
    from norma.rules import Rule, Scope
    from norma.store import ApiKey, RuleVersion, Store

__all__ = [
    "PROBE_INTERVAL",
    "REPORT_INTERVAL",
    "STALE_HEADER",
    "BreakerSearchStore",
    "BreakerStore",
    "KeyCache",
    "StoreHealth",
    "through_breaker",
    "http_date",
]

PROBE_INTERVAL = 1.0
"""Seconds between two attempts to reach a store marked down (what ``Retry-After`` tells clients)."""
REPORT_INTERVAL = 10.0
"""Seconds between two log lines while the store stays down."""
STALE_HEADER = "Norma-Stale-Since"
"""Response header of an answer served from memory while the store is unreachable: when the store last answered
(an HTTP date)."""

T = TypeVar("T")

_log = logging.getLogger("norma.service")


def http_date(wall: float) -> str:
    """``wall`` (seconds since the epoch) as an RFC 9110 HTTP date."""
    return datetime.fromtimestamp(wall, UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")


class StoreHealth:
    """Whether the store answers, tracked from the calls that go through :meth:`call`."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._down_since: float | None = None  # wall clock, for answers and logs
        self._last_ok = time.time()  # wall clock of the last call that succeeded
        self._next_probe = 0.0
        self._failed = 0
        self._stale = 0
        self._reported = 0.0

    @property
    def down_since(self) -> float | None:
        """When (wall clock) the store stopped answering; None while it answers."""
        return self._down_since

    @property
    def last_ok(self) -> float:
        """When (wall clock) a call last succeeded."""
        return self._last_ok

    def retry_after(self) -> int:
        """Whole seconds a client should wait before retrying a request the store failed (at least 1)."""
        with self._lock:
            wait = self._next_probe - self._clock() if self._down_since is not None else PROBE_INTERVAL
        return max(1, math.ceil(wait))

    def call(self, func: Callable[[], T]) -> T:
        """``func()``, unless the store is down and it is not yet time to probe it: then StoreUnavailableError at
        once. A StoreUnavailableError from ``func`` marks the store down; a success marks it up."""
        now = self._clock()
        with self._lock:
            if self._down_since is not None and now < self._next_probe:
                self._failed += 1
                self._report()
                error = StoreUnavailableError(
                    "the rule store is unreachable", hint=f"retry in {math.ceil(self._next_probe - now)} s"
                )
                error.retry_after = self._next_probe - now
                raise error
            if self._down_since is not None:
                self._next_probe = now + PROBE_INTERVAL  # this call is the probe; the others keep failing fast
        try:
            result = func()
        except StoreUnavailableError as exc:
            self._down(exc)
            exc.retry_after = PROBE_INTERVAL
            raise
        self._up()
        return result

    def served_stale(self) -> None:
        """Count one answer served from memory during the outage."""
        with self._lock:
            self._stale += 1

    def _down(self, exc: StoreUnavailableError) -> None:
        with self._lock:
            self._failed += 1
            self._next_probe = self._clock() + PROBE_INTERVAL
            if self._down_since is None:
                self._down_since = time.time()
                self._reported = self._clock()
                _log.warning("rule store unreachable: %s; serving cached matchers and keys", exc.message)

    def _up(self) -> None:
        now = time.time()
        self._last_ok = now
        if self._down_since is None:
            return
        with self._lock:
            if self._down_since is None:
                return
            _log.info(
                "rule store reachable again after %.1f s: %d calls refused, %d answers served from memory",
                now - self._down_since,
                self._failed,
                self._stale,
            )
            self._down_since, self._failed, self._stale = None, 0, 0

    def _report(self) -> None:  # under self._lock
        now = self._clock()
        if self._down_since is not None and now - self._reported >= REPORT_INTERVAL:
            self._reported = now
            _log.warning(
                "rule store still unreachable (%.0f s): %d calls refused, %d answers served from memory so far",
                time.time() - self._down_since,
                self._failed,
                self._stale,
            )


class KeyCache:
    """API keys the store verified, by the SHA-256 of their secret, with when (wall clock) it last did."""

    def __init__(self, stale_for: float, *, max_keys: int = 100_000) -> None:
        self.stale_for = stale_for
        self._max = max_keys
        self._keys: OrderedDict[bytes, tuple[Principal, float]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _digest(secret: str) -> bytes:
        return hashlib.sha256(secret.encode("utf-8")).digest()

    def verified(self, secret: str, principal: Principal) -> None:
        """The store has just verified ``secret`` as ``principal``."""
        with self._lock:
            self._keys[self._digest(secret)] = (principal, time.time())
            self._keys.move_to_end(self._digest(secret))
            while len(self._keys) > self._max:
                self._keys.popitem(last=False)

    def rejected(self, secret: str) -> None:
        """The store has just refused ``secret`` (unknown or revoked): forget it."""
        with self._lock:
            self._keys.pop(self._digest(secret), None)

    def recent(self, secret: str) -> Principal | None:
        """The principal of ``secret`` when the store verified it within :attr:`stale_for` seconds, else None."""
        with self._lock:
            found = self._keys.get(self._digest(secret))
        if found is None or time.time() - found[1] > self.stale_for:
            return None
        return dataclasses.replace(found[0], stale_since=found[1])


class BreakerStore:
    """A :class:`~norma.store.Store` (each of its methods, typed as the protocol has it) whose every call goes
    through a :class:`StoreHealth` (fails fast while the store is down): what the service's routes and matchers read
    and write through. Make one with :func:`through_breaker`, which keeps :class:`~norma.store.VectorSearch` when the
    store has it."""

    def __init__(self, store: Store, health: StoreHealth) -> None:
        self._store = store
        self._health = health
        self.url = store.url

    # RuleStore

    def upsert_rules(
        self,
        tenant_id: str,
        rules: Sequence[Rule],
        *,
        embedder: Embedder | None = None,
        vectors: Mapping[str, np.ndarray] | None = None,
        prune: bool = False,
    ) -> int:
        return self._health.call(
            lambda: self._store.upsert_rules(tenant_id, rules, embedder=embedder, vectors=vectors, prune=prune)
        )

    def get_rule(self, tenant_id: str, rule_id: str) -> Rule:
        return self._health.call(lambda: self._store.get_rule(tenant_id, rule_id))

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
        return self._health.call(
            lambda: self._store.list_rules(
                tenant_id, scope=scope, scenario_id=scenario_id, step_id=step_id, enabled=enabled, tag=tag
            )
        )

    def delete_rules(self, tenant_id: str, rule_ids: Sequence[str]) -> int:
        return self._health.call(lambda: self._store.delete_rules(tenant_id, rule_ids))

    def version(self, tenant_id: str) -> int:
        return self._health.call(lambda: self._store.version(tenant_id))

    def history(self, tenant_id: str, rule_id: str) -> list[RuleVersion]:
        return self._health.call(lambda: self._store.history(tenant_id, rule_id))

    def tenants(self) -> list[str]:
        return self._health.call(self._store.tenants)

    def load_vectors(self, tenant_id: str, model_id: str) -> dict[str, np.ndarray]:
        return self._health.call(lambda: self._store.load_vectors(tenant_id, model_id))

    def save_vectors(self, tenant_id: str, model_id: str, vectors: Mapping[str, tuple[str, np.ndarray]]) -> None:
        self._health.call(lambda: self._store.save_vectors(tenant_id, model_id, vectors))

    def snapshot(self, tenant_id: str, model_id: str) -> tuple[int, list[Rule], dict[str, np.ndarray]]:
        return self._health.call(lambda: self._store.snapshot(tenant_id, model_id))

    def changes_since(
        self, tenant_id: str, version: int, model_id: str
    ) -> tuple[int, list[Rule], list[str], dict[str, np.ndarray]]:
        return self._health.call(lambda: self._store.changes_since(tenant_id, version, model_id))

    def rules_with_vectors(
        self, tenant_id: str, rule_ids: Sequence[str], model_id: str
    ) -> tuple[list[Rule], dict[str, np.ndarray]]:
        return self._health.call(lambda: self._store.rules_with_vectors(tenant_id, rule_ids, model_id))

    def vector_encoders(self, tenant_id: str) -> dict[str, int]:
        """Which encoders made the tenant's stored vectors (:class:`~norma.store.VectorEncoders`)."""
        store: Any = self._store  # both stores norma opens have it
        return self._health.call(lambda: store.vector_encoders(tenant_id))

    def rules_at(self, tenant_id: str, version: int) -> list[Rule]:
        """The tenant's rules at one of its versions (``SqlRuleStore.rules_at``, for ``norma.open(tenant=...,
        version=...)``)."""
        store: Any = self._store  # every store norma opens has it; the RuleStore protocol does not say it
        return self._health.call(lambda: store.rules_at(tenant_id, version))

    def close(self) -> None:
        self._health.call(self._store.close)

    # KeyStore

    def create_api_key(self, tenant_id: str | None, *, name: str = "", admin: bool = False) -> str:
        return self._health.call(lambda: self._store.create_api_key(tenant_id, name=name, admin=admin))

    def check_api_key(self, secret: str) -> ApiKey | None:
        return self._health.call(lambda: self._store.check_api_key(secret))

    def list_api_keys(self, tenant_id: str | None = None) -> list[ApiKey]:
        return self._health.call(lambda: self._store.list_api_keys(tenant_id))

    def revoke_api_key(self, key_id: str) -> None:
        self._health.call(lambda: self._store.revoke_api_key(key_id))

    # GateStore

    def save_gate(self, tenant_id: str, gate: Mapping[str, Any] | None) -> int:
        return self._health.call(lambda: self._store.save_gate(tenant_id, gate))

    def load_gate(self, tenant_id: str) -> dict[str, Any] | None:
        return self._health.call(lambda: self._store.load_gate(tenant_id))

    def gate_history(self, tenant_id: str) -> list[tuple[int, dict[str, Any] | None, str]]:
        return self._health.call(lambda: self._store.gate_history(tenant_id))

    def __repr__(self) -> str:
        return repr(self._store)


class BreakerSearchStore(BreakerStore):
    """A :class:`BreakerStore` over a store that finds nearest vectors itself (PostgreSQL + pgvector)."""

    def search(
        self, tenant_id: str, vector: np.ndarray, *, model_id: str, limit: int = 30, ef_search: int | None = None
    ) -> list[tuple[str, float]]:
        from norma.store import VectorSearch

        store = self._store
        assert isinstance(store, VectorSearch)
        return self._health.call(
            lambda: store.search(tenant_id, vector, model_id=model_id, limit=limit, ef_search=ef_search)
        )


def through_breaker(store: Store, health: StoreHealth) -> BreakerStore:
    """``store`` with every call through ``health``; a :class:`~norma.store.VectorSearch` store stays one."""
    from norma.store import VectorSearch

    if isinstance(store, VectorSearch):
        return BreakerSearchStore(store, health)
    return BreakerStore(store, health)
