"""Health and readiness probes (no key needed) and the playground page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import FileResponse, JSONResponse

from norma._version import __version__
from norma.errors import NormaError
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
    summary="Readiness: the store answers and the embedding model is loaded (503 otherwise)",
    responses={503: {"model": Health}},
)
async def ready(state: State) -> JSONResponse:
    checks: dict[str, str] = {}

    def work() -> None:
        try:
            state.store.version("__readiness__")
            checks["store"] = "ok"
        except NormaError as exc:
            checks["store"] = f"error: {type(exc).__name__}"
        try:
            from norma.embeddings import get_embedder

            get_embedder()
            checks["embedder"] = "ok"
        except NormaError as exc:
            checks["embedder"] = f"error: {type(exc).__name__}"

    await state.run(work)
    ok = all(v == "ok" for v in checks.values())
    body = Health(status="ready" if ok else "not ready", version=__version__, checks=checks)
    return JSONResponse(body.model_dump(), status_code=200 if ok else 503)


@playground_router.get("/")
async def playground() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", media_type="text/html")
