"""norma over HTTP: a FastAPI app factory whose routes are thin adapters over the library (see docs/service.md).

* :func:`create_app` — the ASGI app for a :class:`ServiceSettings` (``norma serve`` runs it with uvicorn).
* :data:`ERROR_STATUS` — the one table from norma's errors to HTTP statuses.
"""

from __future__ import annotations

from norma.service._app import app_from_env, create_app
from norma.service._errors import ERROR_STATUS, PROBLEM_MEDIA_TYPE, status_for
from norma.service._settings import SETTINGS_ENV, ServiceSettings

__all__ = [
    "ERROR_STATUS",
    "PROBLEM_MEDIA_TYPE",
    "SETTINGS_ENV",
    "ServiceSettings",
    "app_from_env",
    "create_app",
    "status_for",
]
