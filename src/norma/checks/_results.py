"""What evaluating one check gives: a status, a one-line message, and the spans of the output at fault."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from norma.rules import Severity, Verdict

__all__ = ["CheckResult", "CheckStatus", "MAX_EVIDENCE", "Span", "span_attributes"]

MAX_EVIDENCE = 100
"""Most spans one result carries (the first ones in the output); its message gives the full count."""
MAX_SPAN_TEXT = 200
"""Most characters of a span's ``text`` (a longer span keeps its exact ``start`` and ``end``)."""


CheckStatus = Verdict
"""The outcome of one check: ``pass``, ``fail``, or ``skip`` (it applied but could not be decided); the one
:class:`norma.rules.Verdict` (this name is kept for code that imports it)."""


class Span(BaseModel):
    """A stretch of the output: offsets in characters (code points, as Python indexes a ``str``), and where it
    starts as a 1-based line (lines end at ``\\n``) and column (in characters)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    start: int = Field(ge=0)
    """Offset of the first character."""
    end: int = Field(ge=0)
    """Offset just past the last character (``start == end``: an empty match, or a place)."""
    line: int = Field(ge=1)
    """1-based line of ``start``."""
    column: int = Field(ge=1)
    """1-based column of ``start``, in characters."""
    text: str
    """``output[start:end]``, cut to its first :data:`MAX_SPAN_TEXT` characters; masked for ``no_pii`` (every letter
    and digit but the last four shown as ``*``), so that a report does not repeat the personal data it found."""


class CheckResult(BaseModel):
    """One check of one rule, evaluated on one output."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    rule_id: str
    """The rule that carries the check."""
    check_id: str
    """The check's id, unique within the rule."""
    kind: str
    """The check's kind (``contains``, ``regex``, ...)."""
    severity: Severity
    """The check's severity."""
    weight: float
    """The check's weight."""
    status: Verdict
    """``pass``, ``fail`` or ``skip``."""
    message: str
    """One line saying why."""
    evidence: tuple[Span, ...] = ()
    """The spans of the output that violated the check (at most :data:`MAX_EVIDENCE`); none on a pass, a skip, or
    a failure that no part of the output is to blame for (a term that is missing)."""
    enforced: bool = True
    """False for a requirement of a rule that matched only as a neighbour: reported ``skip`` with the reason, and
    unlike a check that could not be decided, it does not make the turn ``skip``."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return self.model_dump(mode="json")


def span_attributes(results: Sequence[CheckResult]) -> dict[str, int]:
    """What a trace span of one rule's checks records (docs/traces.md): how many ran, failed and were skipped."""
    return {
        "norma.checks.count": len(results),
        "norma.checks.failed": sum(r.status is Verdict.FAIL for r in results),
        "norma.checks.skipped": sum(r.status is Verdict.SKIP for r in results),
    }
