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
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from norma.errors import StoreUnavailableError
from norma.service._auth import Principal

__all__ = [
    "PROBE_INTERVAL",
    "REPORT_INTERVAL",
    "STALE_HEADER",
    "GuardedStore",
    "KeyCache",
    "StoreHealth",
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


class GuardedStore:
    """A rule store whose every public method goes through a :class:`StoreHealth` (fails fast while it is down)."""

    def __init__(self, store: Any, health: StoreHealth) -> None:
        self._store = store
        self._health = health

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if name.startswith("_") or not callable(value):
            return value

        @functools.wraps(value)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            return self._health.call(lambda: value(*args, **kwargs))

        return guarded

    def __repr__(self) -> str:
        return repr(self._store)
