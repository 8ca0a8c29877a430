"""Report renderers by name, and the exit code a set of reports gives under ``--fail-on``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from norma.audit import AuditReport, Severity, Verdict
from norma.errors import InvalidInputError

__all__ = ["RENDERERS", "ReportItem", "Renderer", "exit_code", "failing", "render"]

ReportItem = tuple[str, AuditReport]
"""A report and the name of what was audited (a request file, ``file:line`` of a batch record)."""

Renderer = Callable[[Sequence[ReportItem], str], str]
"""``(items, fail_on) -> text``."""


def failing(report: AuditReport, fail_on: str) -> bool:
    """FAIL, or (``fail_on="warning"``) any WARNING violation."""
    if report.result is Verdict.FAIL:
        return True
    return fail_on == "warning" and any(v.severity is Severity.WARNING for v in report.violations)


def exit_code(reports: Sequence[AuditReport], fail_on: str = "error") -> int:
    """0 when every report passes (PASS or SKIP), 1 when one fails under ``fail_on`` (``error`` or ``warning``)."""
    if fail_on not in ("error", "warning"):
        raise InvalidInputError(f"fail_on must be 'error' or 'warning', not {fail_on!r}")
    return 1 if any(failing(r, fail_on) for r in reports) else 0


def _renderers() -> dict[str, Renderer]:
    from norma.reports._json import to_json
    from norma.reports._junit import to_junit
    from norma.reports._markdown import to_markdown
    from norma.reports._sarif import sarif_text

    return {"json": to_json, "sarif": sarif_text, "junit": to_junit, "markdown": to_markdown}


RENDERERS: dict[str, Renderer] = {}
"""Text renderers by format name (``json``, ``sarif``, ``junit``, ``markdown``), filled on first use of
:func:`render`."""


def render(fmt: str, items: Sequence[ReportItem], fail_on: str = "error") -> str:
    """The reports in one text format."""
    if not RENDERERS:
        RENDERERS.update(_renderers())
    renderer = RENDERERS.get(fmt)
    if renderer is None:
        raise InvalidInputError(f"unknown report format {fmt!r}", hint=f"one of {', '.join(sorted(RENDERERS))}")
    return renderer(items, fail_on)
