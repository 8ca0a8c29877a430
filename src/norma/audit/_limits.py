"""Bounds on what one audit reads (text sizes, re-runs, documents, batch records), checked before any work starts.

The defaults fit one long AI answer and a handful of normative documents; a team raises or lowers them through
the ``limits`` key of the audit configuration. Every refusal is a
:class:`~norma.errors.LimitExceededError` that names the field (``output``, ``reruns[1]``, a document file) and the
limit (``limits.max_output_chars``) to raise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from norma.errors import LimitExceededError

if TYPE_CHECKING:
    from norma.audit._models import AuditRequest

__all__ = [
    "AuditLimits",
    "DEFAULT_AUDIT_LIMITS",
    "MAX_DOCUMENT_BYTES",
    "MAX_TEXT_CHARS",
    "check_request_limits",
    "limit_error",
]

MAX_TEXT_CHARS = 1_000_000
"""Default longest ``input`` or ``output`` (characters)."""
MAX_DOCUMENT_BYTES = 2 * 1024 * 1024
"""Default largest normative document (UTF-8 bytes)."""


class AuditLimits(BaseModel):
    """Sizes and counts an audit accepts (the ``limits`` key of the audit configuration)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    max_input_chars: int = Field(default=MAX_TEXT_CHARS, ge=1)
    """Longest ``input`` (the user's prompt), in characters."""
    max_output_chars: int = Field(default=MAX_TEXT_CHARS, ge=1)
    """Longest ``output``, and longest each of ``reruns``, in characters."""
    max_reruns: int = Field(default=10, ge=0)
    """Most entries in ``reruns``."""
    max_documents: int = Field(default=256, ge=1)
    """Most normative documents in the documents folder, and most names in ``active_documents``."""
    max_document_bytes: int = Field(default=MAX_DOCUMENT_BYTES, ge=1)
    """Largest normative document file, in bytes (checked before it is read)."""
    max_record_bytes: int = Field(default=16 * 1024 * 1024, ge=1)
    """Largest request read by the CLI or a batch: a request file, or one line of a JSON Lines batch (bytes;
    characters when a text stream is given)."""


DEFAULT_AUDIT_LIMITS = AuditLimits()


def limit_error(
    what: str,
    size: int | None,
    unit: str,
    key: str,
    limit: int,
    *,
    source: str | None = None,
    location: str | None = None,
) -> LimitExceededError:
    """The refusal of one oversized thing: its size (``None``: not known, only that it is over), the limit and the
    ``limits.*`` key that sets it."""
    measured = f"{size:,} {unit}, over" if size is not None else f"{unit} over"
    return LimitExceededError(
        f"{what}: {measured} the limit of {limit:,} (limits.{key})",
        source=source,
        location=location,
        hint=f"shorten it, or raise limits.{key} in the audit configuration",
    )


def check_request_limits(request: AuditRequest, limits: AuditLimits = DEFAULT_AUDIT_LIMITS) -> None:
    """Refuse a request whose texts or lists are over ``limits`` (before anything is parsed or loaded).

    Raises:
        LimitExceededError: naming the field (``input``, ``output``, ``reruns[i]``, ...) and the limit.
    """
    if len(request.input) > limits.max_input_chars:
        raise limit_error(
            "input", len(request.input), "characters", "max_input_chars", limits.max_input_chars, location="input"
        )
    if len(request.output) > limits.max_output_chars:
        raise limit_error(
            "output", len(request.output), "characters", "max_output_chars", limits.max_output_chars, location="output"
        )
    if len(request.reruns) > limits.max_reruns:
        raise limit_error("reruns", len(request.reruns), "entries", "max_reruns", limits.max_reruns, location="reruns")
    for index, rerun in enumerate(request.reruns):
        if len(rerun) > limits.max_output_chars:
            where = f"reruns[{index}]"
            raise limit_error(
                where, len(rerun), "characters", "max_output_chars", limits.max_output_chars, location=where
            )
    for field in ("active_documents", "document_versions"):
        count = len(getattr(request, field))
        if count > limits.max_documents:
            raise limit_error(field, count, "names", "max_documents", limits.max_documents, location=field)
