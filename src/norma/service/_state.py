"""What one app instance holds: its settings, its rule store (opened on first use), the rate limiters (requests per
key, failed authentications per address and key id), the audit documents, and the one way routes run library calls
(in a worker thread, under the request timeout)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread
from starlette.requests import Request

from norma.errors import StoreUnavailableError
from norma.llm import HttpPool, OpenAIClient, RetryPolicy
from norma.service._auth import (
    ADMIN_KEY_ID,
    FailedAuthLimiter,
    Principal,
    RateLimiter,
    key_id_of,
    matches_admin_key,
    secret_from_headers,
)
from norma.service._errors import RequestTimeoutError, UnauthorizedError
from norma.service._outage import BreakerStore, KeyCache, StoreHealth, through_breaker
from norma.service._reembed import Reembedding
from norma.service._settings import ServiceSettings

if TYPE_CHECKING:
    from norma.audit import DocumentSet
    from norma.llm import Judge, LLMClient
    from norma.matching import TenantMatchers
    from norma.store import Store
    from norma.turns import Norma, Tenants

__all__ = ["PRINCIPAL_STATE", "STALE_STATE", "ServiceState", "get_state"]

PRINCIPAL_STATE = "norma.principal"
"""Where the edge middleware leaves the authenticated :class:`Principal` in the request's ``scope["state"]``."""
STALE_STATE = "stale_since"
"""Where a route that answered from memory (the store unreachable) leaves when the store last answered, in the
request's ``scope["state"]`` (``request.state.stale_since``): the edge middleware turns it into a header."""

T = TypeVar("T")


class ServiceState:
    """The per-app state routes reach through :func:`get_state`."""

    def __init__(self, settings: ServiceSettings, store: Store | None = None) -> None:
        self.settings = settings
        self._store = store
        self._breaker_store: BreakerStore | None = None
        self._owns_store = store is None
        self._lock = threading.Lock()
        self._documents: DocumentSet | None = None
        self._llm: LLMClient | None = None
        self._llm_made = False  # get_llm() ran (its None: no LLM configured)
        self.limiter = RateLimiter(settings.rate_limit, settings.rate_burst)
        self.failures = FailedAuthLimiter(settings.auth_failure_rate, settings.auth_failure_burst)
        self._batching: dict[str, Any] = {}
        self._tenants: Tenants | None = None
        self.health = StoreHealth()
        """Whether the store answers (a circuit breaker: requests fail fast while it is down)."""
        self.keys = KeyCache(settings.stale_for)
        """API keys the store verified recently, accepted while it is unreachable."""
        self.reembedding = Reembedding(lambda: self.store, lambda tenant: self.matchers.get(tenant))
        """The tenants whose stored vectors are another encoder's only, embedded again (``_reembed``)."""
        self.http = HttpPool()
        """The connections to chat models that the judge and the guarded endpoint's upstream share (closed on the
        app's shutdown)."""
        self.upstream = _upstream(settings, self.http)
        """The guarded endpoint's model (``--upstream``; None: none)."""

    def batching(self, embedder: Any) -> Any:
        """``embedder`` wrapped in a :class:`~norma.embeddings.BatchingEmbedder` shared by this worker's requests,
        so concurrent match requests embed their messages in one model call."""
        wrapped = self._batching.get(embedder.model_id)
        if wrapped is None or wrapped.inner is not embedder:
            from norma.embeddings import BatchingEmbedder

            with self._lock:
                wrapped = self._batching.get(embedder.model_id)
                if wrapped is None or wrapped.inner is not embedder:
                    wrapped = self._batching[embedder.model_id] = BatchingEmbedder(embedder)
        return wrapped

    @property
    def tenants(self) -> Tenants:
        """The store's tenants, each ready to use (:class:`~norma.turns.Tenants`): the one judge, the messages
        embedded through :meth:`batching` (concurrent requests' messages in one model call), the audit's documents
        (read at the first audit)."""
        tenants = self._tenants
        if tenants is None:
            from norma.embeddings import get_embedder
            from norma.turns import Tenants

            store, llm, embedder = self.store, self.llm(), self.batching(get_embedder())  # each takes the lock
            with self._lock:
                if self._tenants is None:
                    self._tenants = Tenants(
                        store,
                        judge="memory",  # verdicts cached in memory: they stay per process
                        llm=llm,
                        embedder=embedder,
                        documents=self.settings.audit_docs,
                    )
                tenants = self._tenants
        return tenants

    @property
    def matchers(self) -> TenantMatchers:
        """The tenants' matchers over :attr:`store` (built from stored vectors, refreshed on version change)."""
        return self.tenants.matchers

    @property
    def store(self) -> Store:
        """The rule store, opened on first use (``settings.db_url``), every call through :attr:`health` (fails at
        once while the store is marked down)."""
        through = self._breaker_store
        if through is None:
            with self._lock:
                if self._breaker_store is None:
                    if self._store is None:
                        self._store = self.health.call(self._open_store)
                    self._breaker_store = through_breaker(self._store, self.health)
                through = self._breaker_store
        return through

    def _open_store(self) -> Store:
        from norma.store import open_store

        settings = self.settings
        return open_store(
            settings.db_url,
            connect_timeout=settings.store_connect_timeout,
            read_timeout=settings.store_read_timeout,
            write_timeout=settings.store_write_timeout,
        )

    def documents(self) -> DocumentSet | None:
        """The audit documents of ``settings.audit_docs``, loaded once; None when no folder is configured."""
        if self.settings.audit_docs is None:
            return None
        if self._documents is None:
            with self._lock:
                if self._documents is None:
                    from norma.audit import load_documents

                    self._documents = load_documents(self.settings.audit_docs)
        return self._documents

    def llm(self) -> LLMClient | None:
        """The LLM client of ``$NORMA_LLM_*`` (re-runs for the audit's IR.6.02), made once; None when unset."""
        if not self._llm_made:
            with self._lock:
                if not self._llm_made:
                    from norma.llm import get_llm

                    self._llm, self._llm_made = get_llm(http=self.http), True
        return self._llm

    def judge(self) -> Judge | None:
        """The judge of ``judge`` checks (:meth:`Tenants.judge <norma.turns.Tenants.judge>`): the LLM of
        ``$NORMA_LLM_URL`` with its verdicts in memory, made once; None without an LLM (those checks are skipped)."""
        return self.tenants.judge()

    async def run(self, func: Callable[..., T], /, *args: Any, timeout: bool = True, **kwargs: Any) -> T:
        """Run ``func`` in a worker thread; past ``request_timeout`` answer 503 (the thread finishes on its own).

        Writes pass ``timeout=False``: a store transaction is never abandoned half-way, it commits or rolls back.
        """
        call = functools.partial(func, *args, **kwargs)
        if not timeout:
            return await anyio.to_thread.run_sync(call)
        seconds = self.settings.request_timeout
        try:
            with anyio.fail_after(seconds):
                return await anyio.to_thread.run_sync(call, abandon_on_cancel=True)
        except TimeoutError:
            raise RequestTimeoutError(seconds) from None

    async def authenticate(self, request: Request) -> Principal:
        """The caller of ``request``: the one the edge middleware authenticated from the request head, else
        :meth:`authenticate_head` now."""
        principal = request.scope.get("state", {}).get(PRINCIPAL_STATE)
        if isinstance(principal, Principal):
            return principal
        principal = await self.authenticate_head(request.headers, request.client.host if request.client else None)
        request.state.key_id = principal.key_id
        self.limiter.check(principal.key_id)
        return principal

    async def authenticate_head(self, headers: Mapping[str, str], client: str | None) -> Principal:
        """The caller named by a request's headers (lower-case names), never its body; the caller then checks the
        key's request rate (``self.limiter.check(principal.key_id)``).

        UnauthorizedError when the key is missing or unknown; RateLimitedError when the client address has used up
        its failed authentications (checked first: its key is not looked up) or when this failure is one too many
        for the address or the key id it names.
        """
        address = client or "unknown"
        self.failures.check_address(address)
        secret: str | None = None
        try:
            secret = secret_from_headers(headers)
            principal = await self._principal(secret)
        except UnauthorizedError:
            self.failures.failed(address, key_id_of(secret) if secret else None)
            raise
        return principal

    async def _principal(self, secret: str) -> Principal:
        admin = self.settings.admin_key.get_secret_value() if self.settings.admin_key is not None else None
        if matches_admin_key(secret, admin):
            return Principal(key_id=ADMIN_KEY_ID, tenant_id=None, admin=True)
        try:
            key = await self.run(lambda: self.store.check_api_key(secret))
        except StoreUnavailableError:
            known = self.keys.recent(secret)
            if known is None:
                raise
            self.health.served_stale()
            return known
        if key is None:
            self.keys.rejected(secret)
            raise UnauthorizedError("the API key is not valid")
        principal = Principal(key_id=key.key_id, tenant_id=key.tenant_id, admin=key.admin)
        self.keys.verified(secret, principal)
        return principal

    def rules_of(self, tenant_id: str, request: Request) -> Norma:
        """The tenant's rules at their current version; while the store is unreachable, those this replica last had
        (for ``settings.stale_for`` seconds after the store last confirmed them), ``request`` marked stale since then
        (else the store's error is raised)."""
        import time

        try:
            return self.tenants.get(tenant_id)
        except StoreUnavailableError:
            found = self.tenants.cached(tenant_id)
            if found is None or time.time() - found[1] > self.settings.stale_for:
                raise
            self.health.served_stale()
        rules, confirmed = found
        known = getattr(request.state, STALE_STATE, None)
        setattr(request.state, STALE_STATE, confirmed if known is None else min(known, confirmed))
        return rules

    def close(self) -> None:
        """Close the store if this state opened it."""
        with self._lock:
            if self._tenants is not None:
                self._tenants.matchers.clear()
                self._tenants = None
            if self._store is not None and self._owns_store:
                self._store.close()
                self._store = None
            self._breaker_store = None


def _upstream(settings: ServiceSettings, http: HttpPool) -> OpenAIClient | None:
    """The client of ``settings.upstream_url`` (``{url}/chat/completions``): the model each request names, no retry
    (the client of the guarded endpoint retries, after the ``Retry-After`` it is answered), every call bounded by
    ``upstream_timeout``."""
    if not settings.upstream_url:
        return None
    key = settings.upstream_api_key
    timeout = settings.upstream_timeout
    return OpenAIClient(
        f"{settings.upstream_url.rstrip('/')}/chat/completions",
        "(the request's)",
        api_key=key.get_secret_value() if key is not None else None,
        connect_timeout=min(timeout, 10.0),
        read_timeout=timeout,
        retry=RetryPolicy(max_retries=0),
        http=http,
    )


def get_state(request: Request) -> ServiceState:
    """The :class:`ServiceState` of the app serving ``request``."""
    state = request.app.state.norma
    assert isinstance(state, ServiceState)
    return state
