"""Structured logs: one JSON object per line, the access log's fields as keys; never a secret.

The access log (logger ``norma.access``) is written by the edge middleware once per request with the request id,
method, path (no query string), status, duration, body sizes, the caller's public ``key_id``, the client
address, and the request span's ``trace_id`` and ``span_id`` when it is traced (docs/traces.md). API keys, headers
and bodies are never logged.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any, TypedDict

__all__ = ["ACCESS_LOGGER", "JsonFormatter", "LoggingConfig", "logging_config"]

ACCESS_LOGGER = "norma.access"


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON line: ts, level, logger, message, and the record's ``fields`` mapping."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class LoggingConfig(TypedDict):
    """A ``logging.config.dictConfig`` mapping (the keys :func:`logging_config` sets)."""

    version: int
    disable_existing_loggers: bool
    formatters: dict[str, dict[str, str]]
    handlers: dict[str, dict[str, str]]
    loggers: dict[str, dict[str, Any]]


def logging_config(level: str = "info") -> LoggingConfig:
    """A ``logging.config.dictConfig`` mapping for uvicorn (``log_config=``): JSON lines on stderr."""
    upper = level.upper()
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": "norma.service._logging.JsonFormatter"}},
        "handlers": {"stderr": handler},
        "loggers": {
            "norma": {"handlers": ["stderr"], "level": upper, "propagate": False},
            "uvicorn": {"handlers": ["stderr"], "level": upper, "propagate": False},
            "uvicorn.error": {"level": upper},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
    }
