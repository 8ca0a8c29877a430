"""Report renderers by name, and the exit code a set of reports gives under ``--fail-on``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

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


class _Renderers(Mapping[str, Renderer]):
    """The text renderers by format name, their modules imported on first lookup (not when norma.reports is);
    read-only."""

    _NAMES = ("json", "sarif", "junit", "markdown")

    def __getitem__(self, fmt: str) -> Renderer:
        from norma.reports._json import to_json
        from norma.reports._junit import to_junit
        from norma.reports._markdown import to_markdown
        from norma.reports._sarif import sarif_text

        renderers: dict[str, Renderer] = {
            "json": to_json,
            "sarif": sarif_text,
            "junit": to_junit,
            "markdown": to_markdown,
        }
        return renderers[fmt]

    def __iter__(self) -> Iterator[str]:
        return iter(self._NAMES)

    def __len__(self) -> int:
        return len(self._NAMES)


RENDERERS: Mapping[str, Renderer] = _Renderers()
"""Text renderers by format name (``json``, ``sarif``, ``junit``, ``markdown``); read-only (a renderer of another
format is called directly, not registered here)."""


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
    if fmt not in RENDERERS:
        raise InvalidInputError(f"unknown report format {fmt!r}", hint=f"one of {', '.join(sorted(RENDERERS))}")
    renderer: Any = RENDERERS[fmt]  # each also takes the bad records and the incomplete mark
    text: str = renderer(items, fail_on, bad, incomplete=incomplete)
    return text
