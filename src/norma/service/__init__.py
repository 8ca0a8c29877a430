"""norma over HTTP: a FastAPI app factory whose routes are thin adapters over the library (see docs/service.md).

* :func:`create_app` — the ASGI app for a :class:`ServiceSettings` (``norma serve`` runs it with uvicorn).
* :func:`http_protocol` — the HTTP protocol ``norma serve`` gives uvicorn: caps on the request head's size and time
  and on open connections (``uvicorn.run(app, http=http_protocol(settings))`` for your own uvicorn).
* :data:`ERROR_STATUS` — the one table from norma's errors to HTTP statuses; the service's own errors are
  :class:`UnauthorizedError` (401) and :class:`RequestTimeoutError` (503).
* :func:`logging_config` — JSON-lines logging for uvicorn (never a secret).
* :func:`seed_demo_tenant` — the example rulebooks in tenant ``demo`` and a fresh key (``norma serve --demo``).
"""

from __future__ import annotations

from norma.service._app import app_from_env, create_app
from norma.service._demo import DEMO_KEY_NAME, DEMO_TENANT, DemoTenant, seed_demo_tenant
from norma.service._errors import (
    ERROR_STATUS,
    PROBLEM_MEDIA_TYPE,
    RequestTimeoutError,
    UnauthorizedError,
    status_for,
)
from norma.service._logging import logging_config
from norma.service._protocol import http_protocol
from norma.service._settings import SETTINGS_ENV, ServiceSettings, env_settings

__all__ = [
    "DEMO_KEY_NAME",
    "DEMO_TENANT",
    "DemoTenant",
    "ERROR_STATUS",
    "PROBLEM_MEDIA_TYPE",
    "RequestTimeoutError",
    "SETTINGS_ENV",
    "ServiceSettings",
    "UnauthorizedError",
    "app_from_env",
    "create_app",
    "env_settings",
    "http_protocol",
    "logging_config",
    "seed_demo_tenant",
    "status_for",
]
