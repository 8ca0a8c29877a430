"""Health and readiness probes (no key needed) and the playground page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import anyio
from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, JSONResponse

from norma._version import __version__
from norma.errors import NormaError, StoreUnavailableError
from norma.service._errors import RequestTimeoutError
from norma.service._outage import http_date
from norma.service._schemas import Health
from norma.service._state import ServiceState, get_state

__all__ = ["STATIC_DIR", "playground_router", "router"]

STATIC_DIR = Path(__file__).parent / "static"

router = APIRouter(prefix="/v1", tags=["health"])
playground_router = APIRouter(include_in_schema=False)

State = Annotated[ServiceState, Depends(get_state)]


@router.get("/health", summary="Liveness: the process answers")
async def health() -> Health:
    return Health(status="ok", version=__version__)


@router.get(
    "/ready",
    response_model=Health,
    summary="Readiness: the store answers and the embedding model is loaded (503 otherwise)",
    responses={503: {"model": Health}},
)
async def ready(state: State) -> JSONResponse:
    """503 with ``Retry-After`` while the store or the model is not ready, or while the rules of tenants whose
    stored vectors are another encoder's are embedded again (``vectors`` says which: ``norma.service._reembed``).
    While the store is marked down, the answer comes at once (no wait for a dead database) and says since when, and
    whether matches are still answered from memory; otherwise the store is asked, within its read deadline."""
    checks: dict[str, str] = {}

    def work() -> None:
        try:
            state.store.version("__readiness__")
            checks["store"] = "ok"
        except StoreUnavailableError:
            since = state.health.down_since
            checks["store"] = "unreachable" + (f" since {http_date(since)}" if since is not None else "")
            if state.settings.stale_for > 0:
                checks["store"] += f"; cached matchers answer for up to {state.settings.stale_for:g} s"
        except NormaError as exc:
            checks["store"] = f"error: {type(exc).__name__}"
        try:
            from norma.embeddings import get_embedder

            get_embedder()
            checks["embedder"] = "ok"
        except NormaError as exc:
            checks["embedder"] = f"error: {type(exc).__name__}"
        if checks["store"] == "ok":
            state.reembedding.start()  # no-op once done; runs a pass the store interrupted again
            vectors = state.reembedding.status()
            if vectors != "ok":  # said only while it is not: a ready answer stays as it was
                checks["vectors"] = vectors

    settings = state.settings
    deadline = settings.store_connect_timeout + settings.store_read_timeout + 1.0
    try:
        with anyio.fail_after(deadline):
            await state.run(work)
    except (TimeoutError, RequestTimeoutError):
        checks.setdefault("store", f"no answer within {deadline:g} s")
        checks.setdefault("embedder", "not checked")
    ok = all(v == "ok" for v in checks.values())
    body = Health(status="ready" if ok else "not ready", version=__version__, checks=checks)
    headers = {} if ok else {"Retry-After": str(state.health.retry_after())}
    return JSONResponse(body.model_dump(), status_code=200 if ok else 503, headers=headers)


@playground_router.get("/")
async def playground() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html")
