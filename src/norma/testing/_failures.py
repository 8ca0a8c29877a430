"""What a failed norma assertion raises: an :class:`AssertionError` whose message is a one-line summary followed by
one line per violation, readable in a terminal and in a JUnit XML ``<failure>``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from norma.audit import AuditReport
    from norma.matching import MatchResult
    from norma.turns import TurnReport

__all__ = [
    "AuditAssertionError",
    "MatchAssertionError",
    "NormaAssertionError",
    "RubricAssertionError",
    "TurnAssertionError",
]


class NormaAssertionError(AssertionError):
    """A norma assertion that did not hold.

    ``str(error)`` is ``summary``, then each of ``details`` on its own line, indented by two spaces; the summary comes
    first so that a report that keeps one line (a JUnit ``message`` attribute, ``pytest -rf``) keeps the verdict.
    """

    def __init__(self, summary: str, details: Sequence[str] = ()) -> None:
        self.summary = summary
        self.details = tuple(details)
        super().__init__("\n".join([summary, *(f"  {line}" for line in self.details)]))


class AuditAssertionError(NormaAssertionError):
    """An output that did not pass the IR.x.y audit; ``report`` is the full :class:`~norma.audit.AuditReport`."""

    def __init__(self, summary: str, details: Sequence[str], report: AuditReport) -> None:
        super().__init__(summary, details)
        self.report = report


class RubricAssertionError(NormaAssertionError):
    """A rubric reward below the bar; ``result`` is what :func:`norma.rubrics.evaluate_rubric` returned."""

    def __init__(self, summary: str, details: Sequence[str], result: dict[str, Any]) -> None:
        super().__init__(summary, details)
        self.result = result


class MatchAssertionError(NormaAssertionError):
    """A message that did not match the expected rules; ``result`` is the :class:`~norma.matching.MatchResult`."""

    def __init__(self, summary: str, details: Sequence[str], result: MatchResult) -> None:
        super().__init__(summary, details)
        self.result = result


class TurnAssertionError(NormaAssertionError):
    """A turn that did not pass the turn check; ``report`` is the full :class:`~norma.turns.TurnReport`."""

    def __init__(self, summary: str, details: Sequence[str], report: TurnReport) -> None:
        super().__init__(summary, details)
        self.report = report


# Shown as norma.testing.AuditAssertionError in tracebacks and JUnit files, where users import them from.
for _cls in (NormaAssertionError, AuditAssertionError, RubricAssertionError, MatchAssertionError, TurnAssertionError):
    _cls.__module__ = "norma.testing"
