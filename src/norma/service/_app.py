"""``create_app(settings)``: the FastAPI application — routes under ``/v1``, one error table, the edge middleware,
the playground at ``/``, the API docs at ``/docs`` and ``/redoc`` (offline) — and :func:`app_from_env`, the factory
uvicorn workers call (``norma serve``).

No route redirects: a path with a trailing slash is another path (404), never a ``307`` to a URL built from the
client's ``Host`` header.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from fastapi.staticfiles import StaticFiles

import norma.service._docs as docs
import norma.service._routes_admin as routes_admin
import norma.service._routes_chat as routes_chat
import norma.service._routes_diff as routes_diff
import norma.service._routes_litellm as routes_litellm
import norma.service._routes_system as routes_system
import norma.service._routes_tenants as routes_tenants
import norma.service._routes_tools as routes_tools
from norma._version import __version__
from norma.errors import NormaError
from norma.service._errors import install_error_handlers
from norma.service._middleware import EdgeMiddleware
from norma.service._settings import ServiceSettings
from norma.service._state import ServiceState

if TYPE_CHECKING:
    from norma.store import Store

__all__ = ["app_from_env", "create_app"]

_DESCRIPTION = """\
norma over HTTP: tenant rules (CRUD, bulk import, history) and matching, output audits, rubrics and names.

Every route except the health probes needs an API key: `Authorization: Bearer <key>`. A tenant's key works on that
tenant's routes only (any other tenant answers 404); admin keys manage tenants and keys. Errors are
`application/problem+json` bodies naming the field at fault.
"""


def create_app(settings: ServiceSettings | None = None, *, store: Store | None = None) -> FastAPI:
    """The service as an ASGI app.

    Args:
        settings: limits, keys and the store URL (default: :meth:`ServiceSettings.from_env`).
        store: an open store to use instead of opening ``settings.db_url`` (the caller closes it).
    """
    settings = settings if settings is not None else ServiceSettings.from_env()
    state = ServiceState(settings, store)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        def warm_up() -> None:
            from norma.embeddings import get_embedder

            get_embedder()
            try:
                _ = state.store
            except NormaError as exc:  # keep serving: /v1/ready says 503 and requests retry opening the store
                logging.getLogger("norma.service").warning("the rule store is not available yet: %s", exc)
                return
            state.reembedding.start()  # in the background: /v1/ready answers 503 until it is done

        await anyio.to_thread.run_sync(warm_up)
        try:
            yield
        finally:
            await state.http.aclose()  # the connections to chat models (judge, upstream)
            state.close()

    app = FastAPI(
        title="norma",
        version=__version__,
        description=_DESCRIPTION,
        lifespan=lifespan,
        redirect_slashes=False,
        docs_url=None,  # served by norma.service._docs, from the package instead of a CDN
        redoc_url=None,
    )
    app.state.norma = state
    install_error_handlers(app)
    app.include_router(docs.router)
    app.mount(docs.ASSETS_URL, StaticFiles(directory=docs.ASSETS_DIR), name="docs-assets")
    app.include_router(routes_system.router)
    app.include_router(routes_tenants.router)
    app.include_router(routes_diff.router)
    app.include_router(routes_tools.router)
    app.include_router(routes_admin.router)
    app.include_router(routes_litellm.router)
    app.include_router(routes_chat.router)  # the guarded endpoint (#49)
    if settings.playground:
        app.include_router(routes_system.playground_router)
        app.mount("/static", StaticFiles(directory=routes_system.STATIC_DIR), name="static")
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(settings.cors_origins),
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "X-API-Key", "X-Request-ID"],
        )
    keyed = [*routes_tenants.router.routes, *routes_tools.router.routes, *routes_admin.router.routes]
    keyed += routes_litellm.router.routes
    keyed += routes_chat.router.routes
    keyed += routes_diff.router.routes
    app.add_middleware(
        EdgeMiddleware,
        max_body_bytes=settings.max_body_bytes,
        body_timeout=settings.body_timeout,
        state=state,
        keyed_routes=keyed,
    )
    return app


def app_from_env() -> FastAPI:
    """The app built from ``$NORMA_SERVICE_SETTINGS`` (what ``norma serve`` sets for its uvicorn workers)."""
    return create_app(ServiceSettings.from_env())
