"""The OpenTelemetry SDK as the trace tests use it: one global tracer provider per test process (OpenTelemetry lets
a process set it once), whose ended spans go to an in-memory exporter only while a test listens, so the tests of
the rest of the suite leave nothing there. norma's tracer follows the global provider whenever it is set, so the
trace tests pass in any order."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Callable, Iterator

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["finished", "listening", "wait_for_span"]


class _Gated(SimpleSpanProcessor):
    """Exports ended spans while ``listening`` is set."""

    listening = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.listening:
            super().on_end(span)


@functools.cache
def _processor() -> _Gated:
    processor = _Gated(InMemorySpanExporter())
    provider = TracerProvider()
    provider.add_span_processor(processor)
    trace.set_tracer_provider(provider)
    if trace.get_tracer_provider() is not provider:
        raise RuntimeError("another tracer provider was set in this process before the trace tests' one")
    return processor


@contextlib.contextmanager
def listening() -> Iterator[InMemorySpanExporter]:
    """The exporter, empty, receiving the spans that end until the block is left."""
    processor = _processor()
    exporter = processor.span_exporter
    assert isinstance(exporter, InMemorySpanExporter)
    exporter.clear()
    processor.listening = True
    try:
        yield exporter
    finally:
        processor.listening = False
        exporter.clear()


def finished(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    """The ended spans called ``name``."""
    return [s for s in exporter.get_finished_spans() if s.name == name]


def wait_for_span(
    exporter: InMemorySpanExporter, accept: Callable[[ReadableSpan], bool], timeout: float = 10.0
) -> ReadableSpan:
    """The first ended span ``accept`` takes, waiting for it (a server ends its span after the client has the
    response)."""
    deadline = time.monotonic() + timeout
    while True:
        for span in exporter.get_finished_spans():
            if accept(span):
                return span
        if time.monotonic() > deadline:
            names = [s.name for s in exporter.get_finished_spans()]
            raise AssertionError(f"no such span within {timeout} s; ended: {names}")
        time.sleep(0.01)
