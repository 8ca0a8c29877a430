"""Traces through the service over real HTTP (uvicorn on loopback, docs/traces.md): one server span per request that
continues the caller's W3C ``traceparent``, the library's spans under it, the tenant on it, and the access log line
carrying its trace and span ids. FastAPI (0.142 and later) makes the request span itself when a tracer provider is
set, and norma adds to it; any ASGI stack without one gets norma's own (the edge middleware's)."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path

import anyio.to_thread
import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from norma._trace import CONTENT_ENV
from norma.matching import file_matcher
from norma.service import create_app
from norma.service._logging import ACCESS_LOGGER, JsonFormatter
from norma.service._middleware import EdgeMiddleware
from norma.store import RuleStore
from tests._otel import listening, wait_for_span
from tests.service._server import serve_app
from tests.service.conftest import bearer, make_settings

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"
MESSAGE = "I lost my card"
RULEBOOK = Path(__file__).resolve().parents[2] / "examples" / "matching" / "support_rules.yaml"


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    monkeypatch.delenv(CONTENT_ENV, raising=False)
    with listening() as exporter:
        yield exporter


@pytest.fixture(scope="module")
def service(store: RuleStore) -> Iterator[str]:
    with serve_app(create_app(make_settings(), store=store)) as url:
        yield url


def _in_trace(exporter: InMemorySpanExporter, trace_id: int) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.context is not None and s.context.trace_id == trace_id]


def _ancestors(span: ReadableSpan, spans: list[ReadableSpan]) -> list[str]:
    """The names of the span's parents, nearest first, as far as they are among ``spans``."""
    by_id = {s.context.span_id: s for s in spans if s.context is not None}
    names = []
    while span.parent is not None and span.parent.span_id in by_id:
        span = by_id[span.parent.span_id]
        names.append(span.name)
    return names


def _access_line(caplog: pytest.LogCaptureFixture, request_id: str) -> dict[str, object]:
    """The access log line of the request, as the JSON formatter writes it (the server logs after answering)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for record in caplog.records:
            if record.name == ACCESS_LOGGER and getattr(record, "fields", {}).get("request_id") == request_id:
                line: dict[str, object] = json.loads(JsonFormatter().format(record))
                return line
        time.sleep(0.01)
    raise AssertionError(f"no access log line for request {request_id}")


def test_a_match_request_continues_the_callers_trace_with_the_match_under_it(
    service: str, acme_key: str, spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="norma")
    headers = {**bearer(acme_key), "traceparent": TRACEPARENT}
    response = httpx.post(f"{service}/v1/tenants/acme/match", json={"message": MESSAGE}, headers=headers, timeout=60)
    assert response.status_code == 200
    assert response.json()["matches"][0]["rule_id"] == "lost-card"
    trace_id = int(TRACE_ID, 16)
    server = wait_for_span(spans, lambda s: s.kind is SpanKind.SERVER and s.context.trace_id == trace_id)  # type: ignore[union-attr]
    match = wait_for_span(spans, lambda s: s.name == "norma.match" and s.context.trace_id == trace_id)  # type: ignore[union-attr]
    assert server.name == "POST /v1/tenants/{tenant}/match"
    assert server.parent is not None
    assert server.parent.is_remote
    assert server.parent.span_id == int(PARENT_ID, 16)
    attributes = dict(server.attributes or {})
    assert attributes["norma.tenant"] == "acme"
    assert attributes["http.response.status_code"] == 200
    assert attributes["norma.request_id"] == response.headers["x-request-id"]
    trace = _in_trace(spans, trace_id)
    assert [s.name for s in trace if s.kind is SpanKind.SERVER] == [server.name]  # one request span, not two
    assert _ancestors(match, trace)[-1] == server.name  # the library's span nests under the request's
    assert (match.attributes or {})["norma.tenant"] == "acme"
    assert (match.attributes or {})["norma.rules.count"] == 3  # tests/service/conftest.py's RULES
    assert (match.attributes or {})["norma.match.top_rule_id"] == "lost-card"
    texts = [v for s in trace for v in (s.attributes or {}).values() if isinstance(v, str)]
    assert not any("lost my card" in text for text in texts)
    line = _access_line(caplog, response.headers["x-request-id"])
    assert line["trace_id"] == TRACE_ID
    assert server.context is not None
    assert line["span_id"] == format(server.context.span_id, "016x")


def test_without_a_traceparent_a_request_starts_a_trace(
    service: str, acme_key: str, spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="norma")
    response = httpx.get(f"{service}/v1/tenants/acme/rules", headers=bearer(acme_key), timeout=60)
    assert response.status_code == 200
    server = wait_for_span(spans, lambda s: s.kind is SpanKind.SERVER)
    assert server.name == "GET /v1/tenants/{tenant}/rules"
    assert server.parent is None
    assert (server.attributes or {})["norma.tenant"] == "acme"
    line = _access_line(caplog, response.headers["x-request-id"])
    assert server.context is not None
    assert line["trace_id"] == format(server.context.trace_id, "032x") != TRACE_ID


# -- norma's own request span: an ASGI stack where nothing above the edge makes one -----------------------------------


@pytest.fixture(scope="module")
def bare() -> Iterator[str]:
    """A plain Starlette app behind norma's edge middleware, matching with a real matcher in a worker thread."""
    matcher = file_matcher(RULEBOOK)

    async def match(request: Request) -> JSONResponse:
        message = (await request.json())["message"]
        result = await anyio.to_thread.run_sync(matcher.match, message)
        return JSONResponse({"top": result[0].rule.id if result else None})

    async def boom(request: Request) -> JSONResponse:
        raise RuntimeError("boom")

    routes = [
        Route("/v1/tenants/{tenant}/match", match, methods=["POST"]),
        Route("/v1/boom", boom, methods=["POST"]),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(EdgeMiddleware, max_body_bytes=10_000)])
    with serve_app(app) as url:
        yield url


def test_the_edge_makes_the_request_span_when_nothing_above_does(
    bare: str, spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="norma")
    response = httpx.post(
        f"{bare}/v1/tenants/acme/match", json={"message": MESSAGE}, headers={"traceparent": TRACEPARENT}, timeout=60
    )
    assert response.json() == {"top": "lost-card"}
    server = wait_for_span(spans, lambda s: s.kind is SpanKind.SERVER)
    match = wait_for_span(spans, lambda s: s.name == "norma.match")
    assert server.name == "POST /v1/tenants/{tenant}/match"
    assert server.parent is not None
    assert server.parent.span_id == int(PARENT_ID, 16)
    assert server.context is not None
    assert server.context.trace_id == int(TRACE_ID, 16)
    assert dict(server.attributes or {}) == {
        "http.request.method": "POST",
        "url.path": "/v1/tenants/acme/match",
        "norma.request_id": response.headers["x-request-id"],
        "norma.tenant": "acme",
        "http.route": "/v1/tenants/{tenant}/match",
        "http.response.status_code": 200,
    }
    assert server.status.status_code is StatusCode.UNSET
    assert match.parent is not None
    assert match.parent.span_id == server.context.span_id  # the worker thread kept the request's context
    line = _access_line(caplog, response.headers["x-request-id"])
    assert (line["trace_id"], line["span_id"]) == (TRACE_ID, format(server.context.span_id, "016x"))


def test_a_server_error_marks_the_edges_request_span(
    bare: str, spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.CRITICAL, logger="norma.service")  # the traceback of the route's error, expected
    response = httpx.post(f"{bare}/v1/boom", json={}, timeout=60)
    assert response.status_code == 500
    server = wait_for_span(spans, lambda s: s.kind is SpanKind.SERVER)
    assert server.name == "POST /v1/boom"
    assert server.status.status_code is StatusCode.ERROR
    assert (server.attributes or {})["http.response.status_code"] == 500
