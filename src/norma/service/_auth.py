"""Who is calling: API keys (a tenant's, or an admin's) checked against the store, a rate limit per key, and a
limit on failed authentications per client address and per key id.

Keys arrive as ``Authorization: Bearer <secret>`` (or ``X-API-Key: <secret>``), and are read from the request
head alone: the edge middleware authenticates before a byte of the body is read. The static admin key of the
settings is compared in constant time (:func:`hmac.compare_digest`); stored keys are checked by the store, which
keeps only their hashes and compares those in constant time. Secrets never reach a log line: the access log names
the key by its public ``key_id`` only.
"""

from __future__ import annotations

import hmac
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from starlette.requests import Request

from norma.errors import NotFoundError, RateLimitedError
from norma.service._errors import UnauthorizedError

__all__ = [
    "ADMIN_KEY_ID",
    "FailedAuthLimiter",
    "Principal",
    "RateLimiter",
    "key_id_of",
    "matches_admin_key",
    "read_secret",
    "require_tenant",
    "secret_from_headers",
]

ADMIN_KEY_ID = "admin"
"""The ``key_id`` the static admin key (``ServiceSettings.admin_key``) is logged and rate-limited as."""

MAX_SECRET_LENGTH = 512
"""Longer header values are refused without looking them up."""

_KEY_ID = re.compile(r"nrm_([0-9a-f]{12})_.+", re.DOTALL)
"""A stored key's secret: ``nrm_<key_id>_<token>`` (the format :mod:`norma.store` issues)."""


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: the key's public id, its tenant (None for admins), whether it is an admin, and,
    when the store could not be asked and the key was accepted because the store verified it shortly before, when
    that was (wall clock)."""

    key_id: str
    tenant_id: str | None
    admin: bool
    stale_since: float | None = None


def secret_from_headers(headers: Mapping[str, str]) -> str:
    """The API key in request headers (lower-case names); UnauthorizedError when there is none."""
    header = headers.get("authorization", "")
    secret = ""
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            raise UnauthorizedError("the Authorization header must use the Bearer scheme")
        secret = token.strip()
    if not secret:
        secret = headers.get("x-api-key", "").strip()
    if not secret:
        raise UnauthorizedError("an API key is required")
    if len(secret) > MAX_SECRET_LENGTH:
        raise UnauthorizedError("the API key is not valid")
    return secret


def read_secret(request: Request) -> str:
    """The API key sent with ``request``; UnauthorizedError when there is none."""
    return secret_from_headers(request.headers)


def key_id_of(secret: str) -> str | None:
    """The key id a secret names (``nrm_<key_id>_...``), or None when it does not have the shape of a stored key."""
    found = _KEY_ID.fullmatch(secret)
    return found.group(1) if found else None


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
        wait = self.take(key_id)
        if wait:
            raise RateLimitedError(
                f"too many requests for key {key_id} (limit {self.rate:g}/s, burst {self.burst})", retry_after=wait
            )

    def take(self, key: str) -> float:
        """Take one token for ``key``: 0.0 when there was one, else the whole seconds (at least 1) until there is."""
        return self._bucket(key, take=True)

    def wait(self, key: str) -> float:
        """Like :meth:`take` without taking anything: 0.0 when ``key`` has a token left."""
        return self._bucket(key, take=False)

    def _bucket(self, key: str, *, take: bool) -> float:
        if self.rate <= 0:
            return 0.0
        now = self._clock()
        with self._lock:
            tokens, last = self._buckets.pop(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                return float(max(1, math.ceil((1.0 - tokens) / self.rate)))
            self._buckets[key] = (tokens - 1.0 if take else tokens, now)
            while len(self._buckets) > self._max_keys:
                self._buckets.popitem(last=False)
            return 0.0


class FailedAuthLimiter:
    """Failed authentications, limited per client address and per key id: ``rate`` a second after ``burst``.

    An address that has used up its failures is answered 429 before its key is even looked at (guessing stops, the
    store is not asked), whatever key it sends, until its bucket refills. A key id is limited on failures only:
    wrong secrets naming it are answered 429 once its bucket is empty, but its right secret is never refused, so
    nobody can lock a key's owner out by failing with its id. Buckets live in the worker process (N workers: up to N
    times the rate) and are forgotten least recently used first past ``max_keys``.
    """

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic, max_keys: int = 100_000
    ) -> None:
        self._addresses = RateLimiter(rate, burst, clock=clock, max_keys=max_keys)
        self._key_ids = RateLimiter(rate, burst, clock=clock, max_keys=max_keys)

    def check_address(self, address: str) -> None:
        """RateLimitedError when ``address`` has no failed authentication left (asked before checking its key)."""
        wait = self._addresses.wait(address)
        if wait:
            raise self._error("this client address", wait)

    def failed(self, address: str, key_id: str | None) -> None:
        """Count one failed authentication; RateLimitedError when the address or the key id had none left."""
        by_address = self._addresses.take(address)
        by_key = self._key_ids.take(key_id) if key_id is not None else 0.0
        if by_address:
            raise self._error("this client address", by_address)
        if by_key:
            raise self._error(f"key {key_id}", by_key)

    def _error(self, who: str, wait: float) -> RateLimitedError:
        limiter = self._addresses
        return RateLimitedError(
            f"too many failed authentications for {who} (limit {limiter.rate:g}/s after {limiter.burst})",
            retry_after=wait,
        )
