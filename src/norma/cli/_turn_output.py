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
    """A matched rule on the ``matched`` line: whether it governs the turn and its confidence, the number the checks'
    reasons give (as ``norma match`` labels it: ``governs 0.94``, ``neighbour 0.07``)."""
    label = "governs" if match.enforced else "neighbour"
    return f"{match.rule_id} ({label} {match.enforcement.confidence:.2f})"


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


def render_turn(
    con: Console, name: str, report: TurnReport, everything: bool = True, *, one_line: bool = False
) -> None:
    """A turn for people; without ``everything`` (outside a terminal, no --all) only its checks that did not pass.
    ``one_line`` (a batch outside a terminal): a neighbour's requirements (skipped: not this turn's) are left out
    too, and a turn with nothing left to show is one line, its verdict and what it matched."""
    matched = ", ".join(_matched(m) for m in report.matches) or "none"
    shown = [
        (c, r)
        for c in report.rules
        for r in c.checks
        if everything or (r.status.value != "pass" and not (one_line and not r.enforced))
    ]
    if one_line and not shown and report.audit is None:
        con.print(f"{name}: {_verdict(report)}; matched {matched}", markup=False)
        return
    con.print(f"{'' if name.startswith('<') else f'{name}: '}matched {matched}", markup=False)
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
    con.print(f"verdict: {_verdict(report)}")


def _verdict(report: TurnReport) -> str:
    """``PASS, reward 1.000 (2 passed, 0 failed, 3 skipped, 3 of them a neighbour's requirements)``."""
    reward = "none" if report.reward is None else f"{report.reward:.3f}"
    counts = report.counts
    neighbours = sum(1 for r in report.checks if not r.enforced)
    of_neighbours = f", {neighbours} of them a neighbour's requirements" if neighbours else ""
    return (
        f"{report.verdict.value.upper()}, reward {reward} "
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
