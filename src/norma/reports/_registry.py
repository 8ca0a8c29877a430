"""Report renderers by name, and the exit code a set of reports gives under ``--fail-on``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from norma.audit import AuditReport
from norma.errors import InvalidInputError
from norma.rules import FailOn, Verdict

if TYPE_CHECKING:
    from norma.reports._incomplete import Incomplete

__all__ = ["RENDERERS", "ReportItem", "Renderer", "exit_code", "failing", "render"]

ReportItem = tuple[str, AuditReport]
"""A report and the name of what was audited (a request file, ``file:line`` of a batch record)."""

Renderer = Callable[[Sequence[ReportItem], str], str]
"""``(items, fail_on) -> text``."""


def failing(report: AuditReport, fail_on: FailOn | str) -> bool:
    """FAIL, or (``fail_on="warning"``) any WARNING violation (:meth:`FailOn.fails`)."""
    return FailOn.parse(fail_on).fails(report.result is Verdict.FAIL, (v.severity for v in report.violations))


def exit_code(reports: Sequence[AuditReport], fail_on: FailOn | str = FailOn.ERROR) -> int:
    """0 when every report passes (PASS or SKIP), 1 when one fails under ``fail_on`` (``error`` or ``warning``)."""
    policy = FailOn.parse(fail_on)
    return 1 if any(failing(r, policy) for r in reports) else 0


def _renderers() -> dict[str, Renderer]:
    from norma.reports._json import to_json
    from norma.reports._junit import to_junit
    from norma.reports._markdown import to_markdown
    from norma.reports._sarif import sarif_text

    return {"json": to_json, "sarif": sarif_text, "junit": to_junit, "markdown": to_markdown}


RENDERERS: dict[str, Renderer] = {}
"""Text renderers by format name (``json``, ``sarif``, ``junit``, ``markdown``), filled on first use of
:func:`render`."""


def render(
    fmt: str,
    items: Sequence[ReportItem],
    fail_on: str = "error",
    bad: Sequence[tuple[str, str]] = (),
    *,
    incomplete: Incomplete | None = None,
) -> str:
    """The reports in one text format; ``bad`` (``(where, error)`` of each batch record that could not be audited)
    goes into the ``junit`` and ``markdown`` reports and is counted in ``json``'s; ``incomplete`` marks the reports
    of a batch stopped before its end (:mod:`norma.reports._incomplete`)."""
    if bad or incomplete is not None:
        from norma.reports._json import to_json
        from norma.reports._junit import to_junit
        from norma.reports._markdown import to_markdown
        from norma.reports._sarif import sarif_text

        batch = {"json": to_json, "sarif": sarif_text, "junit": to_junit, "markdown": to_markdown}.get(fmt)
        if batch is not None:
            return batch(items, fail_on, bad, incomplete=incomplete)
    if not RENDERERS:
        RENDERERS.update(_renderers())
    renderer = RENDERERS.get(fmt)
    if renderer is None:
        raise InvalidInputError(f"unknown report format {fmt!r}", hint=f"one of {', '.join(sorted(RENDERERS))}")
    return renderer(items, fail_on)
