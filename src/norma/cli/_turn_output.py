"""A checked turn for people (the table of ``norma check``) and in the report formats, for one turn and a batch."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from norma.cli._output import print_table, write_text

if TYPE_CHECKING:
    from norma.reports import Incomplete
    from norma.turns import CheckedRule, MatchedRuleSummary, TurnReport

__all__ = ["check_message", "render_turn", "write_report"]

_STATUS = {"pass": "[green]pass[/]", "fail": "[red]fail[/]", "skip": "[yellow]skip[/]"}


def _matched(match: MatchedRuleSummary) -> str:
    """A matched rule on the ``matched`` line: its final score, and ``neighbour`` when it does not govern the turn."""
    return f"{match.rule_id} ({match.final_score:.3f}{'' if match.enforced else ', neighbour'})"


def _rule_cell(checked: CheckedRule) -> str:
    if not checked.matched:
        return f"{checked.rule_id} (always)"
    return checked.rule_id if checked.enforced else f"{checked.rule_id} (neighbour)"


_EXCERPT = 40
"""Most characters of the evidence shown in a table's message cell (masked for ``no_pii``, as in every format)."""


def check_message(result: Any) -> str:
    """A check's message, with its first evidence excerpt (already masked for ``no_pii``) in quotes."""
    if not result.evidence:
        return str(result.message)
    text = " ".join(str(result.evidence[0].text).split())
    excerpt = text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"
    return f'{result.message}: "{excerpt}"'


def render_turn(con: Console, name: str, report: TurnReport, everything: bool = True) -> None:
    """A turn for people; without ``everything`` (outside a terminal, no --all) only its checks that did not pass."""
    matched = ", ".join(_matched(m) for m in report.matches) or "none"
    con.print(f"{'' if name.startswith('<') else f'{name}: '}matched {matched}", markup=False)
    shown = [(c, r) for c in report.rules for r in c.checks if everything or r.status.value != "pass"]
    if shown:
        table = Table("rule", "check", "kind", "severity", "status", "where", "message")
        for checked, result in shown:
            first = result.evidence[0] if result.evidence else None
            where = f"{first.line}:{first.column}" if first else ""
            # a neighbour's requirement, not enforced, is no problem: dim, where a check not decided is yellow
            status = "[dim]skip[/]" if not result.enforced else _STATUS[result.status]
            table.add_row(
                escape(_rule_cell(checked)),
                escape(result.check_id),
                result.kind,
                result.severity.value,
                status,
                where,
                escape(check_message(result)),
            )
        print_table(con, table)
    if report.audit is not None:
        from norma.audit import severity_label, verdict_label

        con.print(f"audit: {verdict_label(report.audit.result)} ({len(report.audit.violations)} violations)")
        for v in report.audit.violations:
            con.print(f"  {v.location}: [{severity_label(v.severity)}] {v.rule}: {v.description}")
    reward = "none" if report.reward is None else f"{report.reward:.3f}"
    counts = report.counts
    neighbours = sum(1 for r in report.checks if not r.enforced)
    of_neighbours = f", {neighbours} of them a neighbour's requirements" if neighbours else ""
    con.print(
        f"verdict: {report.verdict.value.upper()}, reward {reward} "
        f"({counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped{of_neighbours})"
    )


def write_report(
    fmt: str,
    items: list[tuple[str, TurnReport]],
    fail_on: str,
    path: Path | None,
    bad: list[tuple[str, str]] | None = None,
    incomplete: Incomplete | None = None,
) -> None:
    """The turns in a report format (json, sarif, junit, markdown) to ``path`` (written atomically) or stdout."""
    from norma.reports import render_turns

    text = render_turns(fmt, items, fail_on, bad or (), incomplete=incomplete)
    write_text(text, path, f"the {fmt} report")
