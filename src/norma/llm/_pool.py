"""The connections of norma's chat clients: one pooled HTTP client that several clients share (the service's judge
and its guarded endpoint's upstream), closed by its owner.

A client given no pool opens its own connections for each call and closes them after it (retries reuse them), so
that a client made for one command never leaves a socket open.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
import threading
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

import httpx

__all__ = ["MAX_CONNECTIONS", "HttpPool"]

MAX_CONNECTIONS = 200
"""Open connections per pool; more concurrent calls wait for one (within the call's timeout)."""
MAX_KEEPALIVE = 50
"""Idle connections kept for reuse; the others are closed once their call is done."""
_KEEPALIVE_EXPIRY = 5.0
_LIMITS = httpx.Limits(
    max_connections=MAX_CONNECTIONS, max_keepalive_connections=MAX_KEEPALIVE, keepalive_expiry=_KEEPALIVE_EXPIRY
)


class HttpPool:
    """Pooled HTTP connections: one client for calls from threads, one per event loop for async calls (a client's
    connections belong to the loop that opened them). Thread-safe; :meth:`aclose` (or :meth:`close` outside any
    loop) frees them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._async: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx.AsyncClient] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"HttpPool(max_connections={MAX_CONNECTIONS})"

    def client(self) -> httpx.Client:
        """The pool's client for calls from threads."""
        with self._lock:
            if self._client is None or self._client.is_closed:
                self._client = httpx.Client(limits=_LIMITS, verify=ssl_context(), follow_redirects=False)
            return self._client

    def aclient(self) -> httpx.AsyncClient:
        """The pool's client for the running event loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._async.get(loop)
            if client is None or client.is_closed:
                client = self._async[loop] = httpx.AsyncClient(
                    limits=_LIMITS, verify=ssl_context(), follow_redirects=False
                )
            return client

    def close(self) -> None:
        """Close the connections of calls from threads."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    async def aclose(self) -> None:
        """Close every connection: the running loop's, then those of calls from threads."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._async.pop(loop, None)
        if client is not None:
            await client.aclose()
        self.close()


@contextmanager
def connection(pool: HttpPool | None) -> Iterator[httpx.Client]:
    """The pool's client, or a client of its own closed after the call."""
    if pool is not None:
        yield pool.client()
        return
    with httpx.Client(verify=ssl_context(), follow_redirects=False) as client:
        yield client


@asynccontextmanager
async def aconnection(pool: HttpPool | None) -> AsyncIterator[httpx.AsyncClient]:
    """The pool's client for this loop, or a client of its own closed after the call."""
    if pool is not None:
        yield pool.aclient()
        return
    async with httpx.AsyncClient(verify=ssl_context(), follow_redirects=False) as client:
        yield client


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """One verifying TLS context per process (building one loads the CA bundle: ~0.1 s)."""
    return httpx.create_ssl_context()
