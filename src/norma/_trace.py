"""OpenTelemetry spans, when the optional ``opentelemetry-api`` is installed; a no-op costing one call otherwise.

``with span("norma.match", {"norma.tenant": t}) as traced:`` opens a span that nests under the current one, and
``traced.set({...})`` adds attributes once the work is done (``traced.recording`` says whether anyone listens, so
the caller computes nothing for nobody). ``traced.content("norma.message", text)`` adds a text only when the user
opted in with ``NORMA_TRACE_CONTENT=1``, truncated to :data:`CONTENT_LIMIT` characters: by default no span holds a
message or an output. :func:`request_span` is the service's span per request: it continues the caller's trace from
a W3C ``traceparent`` header, or joins the request span a layer above made (FastAPI 0.142 and later make one
themselves when a tracer provider is configured; OpenTelemetry's ASGI middleware too) so a request never has two.

Nothing here imports OpenTelemetry before the first span (``import norma`` and ``norma --help`` never pay for it);
the first span imports it once and keeps the tracer. Without opentelemetry-api every span is :data:`OFF`; with the
API but no SDK (no tracer provider configured) OpenTelemetry's own no-op tracer applies. An exception leaving a
span marks it ERROR with the exception's type only (``error.type``): an error message may quote the input.
See docs/traces.md.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from norma._version import __version__

__all__ = ["CONTENT_ENV", "CONTENT_LIMIT", "OFF", "Traced", "request_span", "span"]

CONTENT_ENV = "NORMA_TRACE_CONTENT"
"""The environment variable that lets spans carry message and output texts (``1`` or ``true``)."""

CONTENT_LIMIT = 1000
"""The most characters of a text a span carries (with :data:`CONTENT_ENV` set)."""

AttributeValue = str | bool | int | float | Sequence[str]
"""What a span attribute may hold (None values are left out)."""


class Traced:
    """What ``with span(...)`` gives: the no-op, or (:class:`_Live`) an OpenTelemetry span made current."""

    __slots__ = ()

    recording: bool = False
    """Whether the span records attributes (False: skip computing them)."""
    upstream: bool = False
    """Whether the span was made by a layer above (:func:`request_span` joined it): that layer names it, sets its
    status and ends it; norma only adds attributes."""

    def __enter__(self) -> Traced:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        return None

    def set(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        """Add attributes (None values are left out)."""

    def content(self, key: str, text: str) -> None:
        """Add ``text`` under ``key``, truncated, only when the user opted in (:data:`CONTENT_ENV`)."""

    def rename(self, name: str) -> None:
        """Give the span another name (the service's route template, known once the route ran)."""

    def fail(self, description: str) -> None:
        """Mark the span ERROR with a short description (the service, for a 5xx answer)."""

    def ids(self) -> tuple[str, str] | None:
        """The (trace id, span id) in hex when the span has a valid context, for log lines; else None."""
        return None


OFF = Traced()
"""The span of everything when OpenTelemetry is not installed."""


class _Otel:
    """The pieces of the OpenTelemetry API a span needs, imported once at the first span."""

    def __init__(self) -> None:
        from opentelemetry import context, trace

        self.tracer = trace.get_tracer("norma", __version__)  # a proxy until a provider is set: it follows it
        self.attach = context.attach
        self.detach = context.detach
        self.in_context = trace.set_span_in_context
        self.status = trace.Status
        self.error = trace.StatusCode.ERROR
        self.server = trace.SpanKind.SERVER
        self.current = trace.get_current_span


@functools.cache
def _resolve() -> _Otel | None:
    """The OpenTelemetry API's pieces, resolved at the first span (None when it is not installed); two first spans
    at once may both import it, and either result is the same."""
    try:
        return _Otel()
    except ImportError:
        return None


def _clean(attributes: Mapping[str, AttributeValue | None]) -> dict[str, AttributeValue]:
    return {key: value for key, value in attributes.items() if value is not None}


def _content_wanted() -> bool:
    """Whether the user asked spans to carry texts (:data:`CONTENT_ENV`; read at each span, so it can change)."""
    return os.environ.get(CONTENT_ENV, "").strip().lower() in ("1", "true")


class _Live(Traced):
    """An OpenTelemetry span, current between ``__enter__`` and ``__exit__``, ended at ``__exit__``."""

    __slots__ = ("_otel", "_span", "_token", "recording")

    def __init__(self, otel: _Otel, otel_span: Any) -> None:
        self._otel = otel
        self._span = otel_span
        self._token: Any = None
        self.recording = bool(otel_span.is_recording())

    def __enter__(self) -> Traced:
        self._token = self._otel.attach(self._otel.in_context(self._span))
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        try:
            if kind is not None and self.recording and issubclass(kind, Exception):
                self._span.set_attribute("error.type", kind.__qualname__)
                self._span.set_status(self._otel.status(self._otel.error, kind.__qualname__))
        finally:
            self._otel.detach(self._token)
            self._span.end()

    def set(self, attributes: Mapping[str, AttributeValue | None]) -> None:
        if self.recording:
            self._span.set_attributes(_clean(attributes))

    def content(self, key: str, text: str) -> None:
        if self.recording and _content_wanted():
            self._span.set_attribute(key, text[:CONTENT_LIMIT])

    def rename(self, name: str) -> None:
        self._span.update_name(name)

    def ids(self) -> tuple[str, str] | None:
        context = self._span.get_span_context()
        if not context.is_valid:
            return None
        return format(context.trace_id, "032x"), format(context.span_id, "016x")

    def fail(self, description: str) -> None:
        if self.recording:
            self._span.set_status(self._otel.status(self._otel.error, description))


class _Joined(_Live):
    """A recording span made upstream and already current: norma adds attributes and reads its ids, nothing else."""

    __slots__ = ()

    upstream = True

    def __enter__(self) -> Traced:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        return None

    def rename(self, name: str) -> None:
        return None

    def fail(self, description: str) -> None:
        return None


def span(name: str, attributes: Mapping[str, AttributeValue | None] | None = None) -> Traced:
    """A span named ``name`` under the current one (a context manager); :data:`OFF` without OpenTelemetry."""
    otel = _resolve()
    if otel is None:
        return OFF
    return _Live(otel, otel.tracer.start_span(name, attributes=_clean(attributes) if attributes else None))


def request_span(name: str, headers: Mapping[str, str], attributes: Mapping[str, AttributeValue | None]) -> Traced:
    """The server span of one HTTP request: the recording span a layer above made for it when there is one
    (``attributes`` are added to it), else a new one, child of the caller's span when ``headers`` (lower-case names)
    hold a W3C ``traceparent`` (and ``tracestate``); :data:`OFF` without OpenTelemetry."""
    otel = _resolve()
    if otel is None:
        return OFF
    made = otel.current()
    if made.is_recording():
        joined = _Joined(otel, made)
        joined.set(attributes)
        return joined
    from opentelemetry.propagate import extract  # the configured propagators (W3C trace context by default)

    parent = extract(headers)
    started = otel.tracer.start_span(name, context=parent, kind=otel.server, attributes=_clean(attributes))
    return _Live(otel, started)
