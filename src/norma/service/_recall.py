"""A bounded store of short-lived values that forgets: at most ``max_items`` (the least recently stored go first)
and each for ``ttl`` seconds. What the LiteLLM guardrail route keeps between a call's pre-call and its post-call.

In the worker process's memory, as the rate limiters are: with N workers (or replicas) a post-call that lands on
another worker than its pre-call finds nothing, and the route says what it does then.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["ExpiringStore"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ExpiringStore(Generic[K, V]):
    """Values by key, each kept ``ttl`` seconds after it was stored, at most ``max_items`` at once (thread-safe).

    Storing a key again replaces its value and restarts its time. Reading does not extend a value's life.
    """

    def __init__(self, max_items: int, ttl: float, *, clock: Callable[[], float] = time.monotonic) -> None:
        if max_items < 1 or ttl <= 0:
            raise ValueError(f"max_items must be at least 1 and ttl positive, not {max_items!r} and {ttl!r}")
        self.max_items = max_items
        self.ttl = ttl
        self._clock = clock
        self._items: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            self._expire(self._clock())
            return len(self._items)

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` under ``key`` for ``ttl`` seconds (the oldest value goes when the store is full)."""
        now = self._clock()
        with self._lock:
            self._items.pop(key, None)
            self._items[key] = (now + self.ttl, value)
            self._expire(now)
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)

    def get(self, key: K) -> V | None:
        """The value under ``key``, or None when there is none or it expired."""
        now = self._clock()
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            if found[0] <= now:
                del self._items[key]
                return None
            return found[1]

    def _expire(self, now: float) -> None:
        """Drop the expired values (stored in time order, so they are the first ones)."""
        while self._items:
            expires, _ = next(iter(self._items.values()))
            if expires > now:
                break
            self._items.popitem(last=False)
