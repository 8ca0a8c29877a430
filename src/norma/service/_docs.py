"""The API documentation pages, ``/docs`` (Swagger UI) and ``/redoc`` (ReDoc), served with no network access.

FastAPI's own pages load their scripts from a CDN, so offline they are blank. Here both pages load Swagger UI and
ReDoc from the ``fastapi-offline`` package (a dependency of the ``service`` extra; the package is MIT, Swagger UI
Apache-2.0, ReDoc MIT), mounted at :data:`ASSETS_URL`, and start them from a script of their own (no inline code),
so the pages' Content-Security-Policy (``DOCS_CSP``, set by the edge middleware) confines them to this server:
nothing on either page reaches another host (no fonts, no schema validator; ReDoc's remote logo is refused and
hides itself).
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

__all__ = ["ASSETS_DIR", "ASSETS_URL", "router"]

ASSETS_DIR = Path(str(files("fastapi_offline") / "static"))
"""Swagger UI's and ReDoc's scripts, style sheet and a favicon, as the ``fastapi-offline`` package ships them."""

ASSETS_URL = "/docs/assets"
"""Where :data:`ASSETS_DIR` is served."""

router = APIRouter(include_in_schema=False)

_SWAGGER_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} - Swagger UI</title>
<link rel="stylesheet" href="{root}{assets}/swagger-ui.css">
<link rel="icon" href="{root}{assets}/favicon.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{root}{assets}/swagger-ui-bundle.js"></script>
<script src="{root}/docs/start.js"></script>
</body>
</html>
"""

_SWAGGER_START = """window.ui = SwaggerUIBundle({{
  url: {openapi},
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset]
}});
"""

_REDOC_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} - ReDoc</title>
<link rel="icon" href="{root}{assets}/favicon.png">
</head>
<body>
<redoc spec-url="{root}{openapi}"></redoc>
<script src="{root}{assets}/redoc.standalone.js"></script>
</body>
</html>
"""


def _root(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


@router.get("/docs")
async def swagger_ui(request: Request) -> HTMLResponse:
    page = _SWAGGER_PAGE.format(title=_escape(request.app.title), root=_escape(_root(request)), assets=ASSETS_URL)
    return HTMLResponse(page)


@router.get("/docs/start.js")
async def swagger_ui_start(request: Request) -> Response:
    script = _SWAGGER_START.format(openapi=json.dumps(f"{_root(request)}{request.app.openapi_url}"))
    return Response(script, media_type="text/javascript")


@router.get("/redoc")
async def redoc(request: Request) -> HTMLResponse:
    page = _REDOC_PAGE.format(
        title=_escape(request.app.title),
        root=_escape(_root(request)),
        assets=ASSETS_URL,
        openapi=_escape(request.app.openapi_url),
    )
    return HTMLResponse(page)
