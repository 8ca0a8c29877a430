"""A replica started with another encoder than the one its store's vectors were made with (fp32 and int8, or a new
encoder version) embeds those tenants' rules again, once, in the background, and is not ready until it is done.

The store files every vector under the identity of the encoder that made it and keeps the old ones: replicas still
running the old encoder go on matching with them. ``GET /v1/ready`` answers 503 on this replica until every such
tenant has vectors of its encoder (the check ``vectors`` says which tenant it is at), so a load balancer sends the
traffic to the old replicas until the new vectors are complete. A request that reaches this replica meanwhile is
answered all the same: the tenant's rules are embedded (or their new vectors read) on its first request, as
always. Each tenant's re-embedding logs one line and its progress (:func:`norma.store.embed_unstored`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from norma.errors import NormaError

if TYPE_CHECKING:
    from norma.store import Store

__all__ = ["Reembedding", "needs_reembedding"]

_LOG = logging.getLogger("norma.service")


def needs_reembedding(encoders: Mapping[str, int], model_id: str) -> bool:
    """Whether a tenant whose stored vectors are ``encoders`` (identity -> rules with fresh vectors) has rules with
    another encoder's vectors and none of ``model_id``'s. A tenant with no stored vectors at all is not one: its
    rules are embedded on first use, as they always were."""
    others = [count for model, count in encoders.items() if model != model_id]
    return bool(others) and encoders.get(model_id, 0) < max(others)


class Reembedding:
    """The pass over the store's tenants (see the module docstring): :meth:`prepare` finds the tenants (at start-up,
    before the first request), :meth:`start` embeds them in a daemon thread; :meth:`status` is what ``/v1/ready``
    shows."""

    def __init__(self, store: Callable[[], Store], build: Callable[[str], object]) -> None:
        self._store = store  # the service's store (through its breaker), opened on first use
        self._build = build  # a tenant's matcher built: the rules without vectors of this encoder embedded, saved
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._todo: list[str] | None = None
        self._done = False
        self._total = 0
        self._at: tuple[int, str] | None = None
        self._error: str | None = None

    def prepare(self) -> None:
        """Find the tenants with vectors of another encoder only (one query per tenant); done at once when there is
        none. A store that cannot answer leaves it to the next :meth:`start`."""
        try:
            self._find()
        except NormaError as exc:
            with self._lock:
                self._error = f"{type(exc).__name__}: {exc}"

    def start(self) -> None:
        """Embed the tenants :meth:`prepare` found in a daemon thread, unless that is running or done; when they are
        not found yet (the store was away), find them first, here (the caller is a worker thread)."""
        with self._lock:
            if self._done or (self._thread is not None and self._thread.is_alive()):
                return
            found = self._todo is not None
        if not found:
            self.prepare()
        with self._lock:
            if self._done or self._todo is None or (self._thread is not None and self._thread.is_alive()):
                return
            self._thread = threading.Thread(target=self._run, args=(self._todo,), name="norma-reembedding", daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for a running pass; whether every tenant is done."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self._done

    def status(self) -> str:
        """``ok`` once every tenant has vectors of the encoder in use, else what the pass is doing."""
        with self._lock:
            if self._done:
                return "ok"
            if self._error is not None:
                return f"not checked: {self._error}"
            if self._at is None:
                return "finding the tenants with vectors of another encoder"
            position, tenant = self._at
            return f"embedding the rules of tenant {tenant!r} again ({position + 1} of {self._total} tenants)"

    def _find(self) -> list[str]:
        from norma.embeddings import get_embedder

        model = get_embedder().model_id
        from norma.store import VectorEncoders

        store = self._store()
        if not isinstance(store, VectorEncoders):  # a store that cannot tell: its tenants embed on first use
            todo = []
        else:
            todo = [t for t in store.tenants() if needs_reembedding(store.vector_encoders(t), model)]
        with self._lock:
            self._todo, self._total, self._error = todo, len(todo), None
            self._done = not todo
        if todo:
            _LOG.warning(
                "norma: %d tenants have stored vectors of another encoder only: embedding their rules with %s; "
                "/v1/ready answers 503 until that is done",
                len(todo), model,
            )  # fmt: skip
        return todo

    def _run(self, todo: list[str]) -> None:
        try:
            for position, tenant in enumerate(todo):
                with self._lock:
                    self._at = (position, tenant)
                self._build(tenant)
            with self._lock:
                self._done, self._at = True, None
        except NormaError as exc:  # the store away, say: the next start() (a readiness probe) finds them again
            with self._lock:
                self._todo, self._at = None, None
                self._error = f"{type(exc).__name__}: {exc}"
