"""Who is calling: API keys (a tenant's, or an admin's) checked against the store, and a rate limit per key.

Keys arrive as ``Authorization: Bearer <secret>`` (or ``X-API-Key: <secret>``). The static admin key of the
settings is compared in constant time (:func:`hmac.compare_digest`); stored keys are checked by the store, which
keeps only their hashes and compares those in constant time. Secrets never reach a log line: the access log names
the key by its public ``key_id`` only.
"""

from __future__ import annotations

import hmac
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from starlette.requests import Request

from norma.errors import NotFoundError, RateLimitedError
from norma.service._errors import UnauthorizedError

__all__ = ["ADMIN_KEY_ID", "Principal", "RateLimiter", "matches_admin_key", "read_secret", "require_tenant"]

ADMIN_KEY_ID = "admin"
"""The ``key_id`` the static admin key (``ServiceSettings.admin_key``) is logged and rate-limited as."""

MAX_SECRET_LENGTH = 512
"""Longer header values are refused without looking them up."""


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: the key's public id, its tenant (None for admins) and whether it is an admin."""

    key_id: str
    tenant_id: str | None
    admin: bool


def read_secret(request: Request) -> str:
    """The API key sent with ``request``; UnauthorizedError when there is none."""
    header = request.headers.get("authorization", "")
    secret = ""
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            raise UnauthorizedError("the Authorization header must use the Bearer scheme")
        secret = token.strip()
    if not secret:
        secret = request.headers.get("x-api-key", "").strip()
    if not secret:
        raise UnauthorizedError("an API key is required")
    if len(secret) > MAX_SECRET_LENGTH:
        raise UnauthorizedError("the API key is not valid")
    return secret


def matches_admin_key(secret: str, admin_key: str | None) -> bool:
    """Whether ``secret`` is the static admin key (constant-time comparison)."""
    if not admin_key:
        return False
    return hmac.compare_digest(secret.encode("utf-8"), admin_key.encode("utf-8"))


def require_tenant(principal: Principal, tenant_id: str) -> None:
    """NotFoundError unless ``principal`` may act for ``tenant_id`` (404, so other tenants' existence never leaks)."""
    if principal.admin or principal.tenant_id == tenant_id:
        return
    raise NotFoundError(f"tenant {tenant_id!r} not found", location="tenant")


class RateLimiter:
    """A token bucket per key: ``rate`` requests per second on average, ``burst`` at once; ``rate=0``: no limit.

    The buckets live in the worker process, so with N workers a key may get up to N times the rate.
    """

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000
    ) -> None:
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._max_keys = max_keys
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, key_id: str) -> None:
        """Take one token for ``key_id``; RateLimitedError (with ``retry_after``) when the bucket is empty."""
        if self.rate <= 0:
            return
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.pop(key_id, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key_id] = (tokens, now)
                wait = (1.0 - tokens) / self.rate
                raise RateLimitedError(
                    f"too many requests for key {key_id} (limit {self.rate:g}/s, burst {self.burst})",
                    retry_after=max(1.0, math.ceil(wait)),
                )
            self._buckets[key_id] = (tokens - 1.0, now)
            while len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
