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

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.service._app import app_from_env as app_from_env
    from norma.service._app import create_app as create_app
    from norma.service._demo import DEMO_KEY_NAME as DEMO_KEY_NAME
    from norma.service._demo import DEMO_TENANT as DEMO_TENANT
    from norma.service._demo import DemoTenant as DemoTenant
    from norma.service._demo import seed_demo_tenant as seed_demo_tenant
    from norma.service._errors import ERROR_STATUS as ERROR_STATUS
    from norma.service._errors import PROBLEM_MEDIA_TYPE as PROBLEM_MEDIA_TYPE
    from norma.service._errors import RequestTimeoutError as RequestTimeoutError
    from norma.service._errors import UnauthorizedError as UnauthorizedError
    from norma.service._errors import status_for as status_for
    from norma.service._logging import logging_config as logging_config
    from norma.service._protocol import http_protocol as http_protocol
    from norma.service._settings import SETTINGS_ENV as SETTINGS_ENV
    from norma.service._settings import ServiceSettings as ServiceSettings
    from norma.service._settings import env_settings as env_settings

_PUBLIC: dict[str, str] = {
    "create_app": "_app",
    "ERROR_STATUS": "_errors",
    "http_protocol": "_protocol",
    "logging_config": "_logging",
    "RequestTimeoutError": "_errors",
    "seed_demo_tenant": "_demo",
    "ServiceSettings": "_settings",
    "UnauthorizedError": "_errors",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "app_from_env": "_app",
    "DEMO_KEY_NAME": "_demo",
    "DEMO_TENANT": "_demo",
    "DemoTenant": "_demo",
    "env_settings": "_settings",
    "PROBLEM_MEDIA_TYPE": "_errors",
    "SETTINGS_ENV": "_settings",
    "status_for": "_errors",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
