"""The words every capability shares (issue #48): how much a finding matters (:class:`Severity`), what an evaluation
gave (:class:`Verdict`) and which findings fail a run (:class:`FailOn`).

One type per idea, in the lowest layer that all their users import. The audit writes severities in capitals
(``"ERROR"``) where it serialises; in Python they are these members.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from norma.errors import InvalidInputError

__all__ = ["FailOn", "Severity", "Verdict"]


class Severity(enum.StrEnum):
    """How much a failed check matters. ``error`` is the default: a check states a requirement."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Verdict(enum.StrEnum):
    """The outcome of a check, a rule or a turn: ``pass``, ``fail``, or ``skip`` (it applied but could not be
    decided, or nothing applied)."""

    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"


class FailOn(enum.StrEnum):
    """Which findings fail a run (``--fail-on``): ``error`` (what the verdict says: an ``error`` finding) or
    ``warning`` (a ``warning`` finding too). ``info`` never fails."""

    ERROR = "error"
    WARNING = "warning"

    @classmethod
    def parse(cls, value: FailOn | str) -> FailOn:
        """The policy named ``value``; :class:`~norma.errors.InvalidInputError` (a :class:`ValueError`) naming the
        choices otherwise."""
        try:
            return cls(value)
        except ValueError:
            raise InvalidInputError(f"fail_on must be 'error' or 'warning', not {value!r}") from None

    @property
    def severities(self) -> tuple[Severity, ...]:
        """The severities that fail under this policy, the gravest first."""
        return (Severity.ERROR, Severity.WARNING) if self is FailOn.WARNING else (Severity.ERROR,)

    def counts(self, severity: Severity) -> bool:
        """Whether a failed finding of ``severity`` is a failure under this policy (what reports list as one)."""
        return severity in self.severities

    def fails(self, failed: bool, severities: Iterable[Severity] = ()) -> bool:
        """Whether a report fails under this policy, the one rule every report and exit code follows: its verdict
        ``failed`` (``error``: the verdict alone decides), or (``warning``) one of the ``severities`` of its failed
        findings is ``warning``."""
        return failed or (self is FailOn.WARNING and any(s is Severity.WARNING for s in severities))
