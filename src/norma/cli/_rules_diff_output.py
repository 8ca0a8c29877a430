"""What ``norma rules diff`` writes: the :class:`~norma.turns.RulebookDiff` as a terminal table, JSON, a Markdown pull
request comment or JUnit XML; every format reads the library's result, none computes anything.

* table: OLD and NEW, the summary, then a table per group (rule edits, rules, turns worst first), each at most
  ``--limit`` rows and ``and N more``.
* json: :meth:`RulebookDiff.to_dict`, every changed turn, each with its ``line`` in the turns file (and
  ``turns_file`` at the top).
* markdown: the summary first, a table per group (``--limit`` rows each), the turns in a collapsed ``<details>``;
  long cells cut, so that the comment stays far below GitHub's 65,536 characters.
* junit: one ``<testcase>`` per changed turn, a ``<failure>`` when it newly fails (its evidence in the text), the
  others pass with what changed in ``<system-out>``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from pathlib import Path
from xml.etree import ElementTree as ET

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from norma.cli._output import console, print_table, write_text
from norma.cli._turn_output import check_message
from norma.turns import ChangeKind, RulebookDiff, RuleImpact, RuleMove, RuleStatus, TurnChange

__all__ = ["render"]

_CELL = 300
"""Most characters of a Markdown cell (a long evidence list is cut, with ``…``)."""


def render(fmt: str, diff: RulebookDiff, name: str, lines: Sequence[int], limit: int, path: Path | None) -> None:
    """``diff`` in ``fmt`` to ``path`` (written at once: a temporary file renamed over it) or stdout; ``name`` and
    ``lines``: the turns file and each turn's line in it."""
    if fmt == "table" and path is None:
        _table(console(), diff, name, lines, limit)
        return
    if fmt == "json":
        text = json.dumps(_document(diff, name, lines), indent=2, ensure_ascii=False) + "\n"
    elif fmt == "markdown":
        text = _markdown(diff, name, lines, limit)
    elif fmt == "junit":
        text = _junit(diff, name, lines)
    else:
        buffer = io.StringIO()
        _table(Console(file=buffer, highlight=False, soft_wrap=True, width=120), diff, name, lines, limit)
        text = buffer.getvalue()
    write_text(text, path, f"the {fmt} output")


def _document(diff: RulebookDiff, name: str, lines: Sequence[int]) -> dict[str, object]:
    data = diff.to_dict()
    data["changes"] = [{"index": c["index"], "line": lines[c["index"]], **c} for c in data["changes"]]
    return {"turns_file": name, **data}


def _turn(change: TurnChange, name: str, lines: Sequence[int]) -> str:
    """``turns.jsonl:7 (parcel)``: the turn's line in its file, and its id."""
    where = f"{name}:{lines[change.index]}"
    return where if change.id is None else f"{where} ({change.id})"


def _status(status: RuleStatus, confidence: float | None) -> str:
    if status is RuleStatus.NOT_MATCHED or confidence is None:
        return status.value.replace("_", " ")
    return f"{status.value} {confidence:.2f}"


def _move(move: RuleMove) -> str:
    """``delivery: not matched -> governs 0.97``."""
    return f"{move.rule_id}: {_status(move.old, move.old_confidence)} -> {_status(move.new, move.new_confidence)}"


def evidence(change: TurnChange) -> list[str]:
    """What changed in a turn, one line each: the checks that newly fail (with their message and excerpt), those
    that no longer fail, the rules whose status moved (with their confidence)."""
    found = [f"fails {r.rule_id}/{r.check_id} ({r.severity.value}): {check_message(r)}" for r in change.failures_added]
    found += [f"no longer fails {r.rule_id}/{r.check_id}" for r in change.failures_removed]
    found += [_move(move) for move in change.moves]
    return found


def _reward(value: float | None) -> str:
    return "none" if value is None else f"{value:.3f}"


def _verdicts(change: TurnChange) -> str:
    return f"{change.old_verdict.value} -> {change.new_verdict.value}"


def _counts(gained: int, lost: int) -> str:
    """``+3 / -1``, ``+3``, ``-1`` or nothing."""
    return " / ".join(part for part in (f"+{gained}" if gained else "", f"-{lost}" if lost else "") if part)


def _impact_cells(impact: RuleImpact) -> list[str]:
    return [
        _counts(impact.governs_gained, impact.governs_lost),
        _counts(impact.matched_gained, impact.matched_lost),
        _counts(impact.failing_gained, impact.failing_lost),
    ]


def _more(total: int, limit: int) -> str | None:
    return f"and {total - limit:,} more" if total > limit else None


def _table(con: Console, diff: RulebookDiff, name: str, lines: Sequence[int], limit: int) -> None:
    for label, side in (("OLD", diff.old), ("NEW", diff.new)):
        con.print(f"{label}: {side.label} (tenant {side.tenant_id}, {side.rules:,} rules)", markup=False)
    con.print(f"turns: {name}", markup=False)
    con.print(diff.summary(), markup=False)
    con.print(diff.edits_summary(), markup=False)
    groups: list[tuple[str, list[str], list[list[str]], int]] = [
        (
            "rule edits",
            ["rule", "edit", "fields", "turns"],
            [[e.rule_id, e.edit.value, ", ".join(e.fields), f"{e.turns:,}"] for e in diff.edits],
            len(diff.edits),
        ),
        (
            "rules, in how many more (+) or fewer (-) turns each governs, is matched, fails",
            ["rule", "edit", "governs", "matched", "fails"],
            [[i.rule_id, i.edit.value if i.edit else "", *_impact_cells(i)] for i in diff.rules],
            len(diff.rules),
        ),
    ]
    for title, headers, rows, total in groups:
        if not rows:
            continue
        con.print()
        con.print(f"{title}:", markup=False)
        table = Table(*headers)
        table.columns[0].no_wrap = True
        for row in rows[:limit]:
            table.add_row(*(escape(cell) for cell in row))
        print_table(con, table)
        if (more := _more(total, limit)) is not None:
            con.print(f"{more} (--limit)", markup=False)
    if diff.changes:  # a turn's evidence is read as lines, under the turn
        con.print()
        con.print("turns that changed, worst first:", markup=False)
        for change in diff.changes[:limit]:
            con.print(
                f"{_turn(change, name, lines)}: {_verdicts(change)}, reward {_reward(change.old_reward)} -> "
                f"{_reward(change.new_reward)}",
                markup=False,
            )
            for line in evidence(change):
                con.print(f"  {line}", markup=False)
        if (more := _more(len(diff.changes), limit)) is not None:
            con.print(f"{more} (--limit)", markup=False)


def _md(text: str) -> str:
    """Text safe in a Markdown table cell: one line, pipes escaped, at most :data:`_CELL` characters."""
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= _CELL else flat[: _CELL - 1] + "…"


def _code(text: str) -> str:
    return f"`{text.replace('`', '')}`"


def _markdown(diff: RulebookDiff, name: str, lines: Sequence[int], limit: int) -> str:
    out = [
        "## norma rules diff",
        "",
        f"**{diff.summary()}**",
        "",
        f"{_code(diff.old.label)} → {_code(diff.new.label)} on {diff.turns:,} turns of {_code(name)}; "
        f"{diff.edits_summary()}.",
    ]
    if diff.edits:
        out += ["", "| rule edit | rule | fields | turns |", "|---|---|---|--:|"]
        out += [
            f"| {e.edit.value} | {_code(e.rule_id)} | {_md(', '.join(e.fields))} | {e.turns:,} |"
            for e in diff.edits[:limit]
        ]
        out += _more_lines(len(diff.edits), limit)
    if diff.rules:
        out += ["", "| rule | governs | matched | fails |", "|---|--:|--:|--:|"]
        for impact in diff.rules[:limit]:
            edit = f" ({impact.edit.value})" if impact.edit else ""
            out.append(f"| {_code(impact.rule_id)}{edit} | {' | '.join(_impact_cells(impact))} |")
        out += _more_lines(len(diff.rules), limit)
    if diff.changes:
        failing = len(diff.of_kind(ChangeKind.NEWLY_FAILING))
        out += [
            "",
            "<details>",
            f"<summary>{len(diff.changes):,} {'turn' if len(diff.changes) == 1 else 'turns'} changed "
            f"({failing:,} newly failing), worst first</summary>",
            "",
            "| turn | verdict | reward | what changed |",
            "|---|---|---|---|",
        ]
        for change in diff.changes[:limit]:
            verdict = _verdicts(change)
            if change.kind is ChangeKind.NEWLY_FAILING:
                verdict = f"{change.old_verdict.value} → **fail**"
            out.append(
                f"| {_md(_turn(change, name, lines))} | {verdict} | "
                f"{_reward(change.old_reward)} → {_reward(change.new_reward)} | {_md('; '.join(evidence(change)))} |"
            )
        out += [*_more_lines(len(diff.changes), limit), "", "</details>"]
    return "\n".join(out) + "\n"


def _more_lines(total: int, limit: int) -> list[str]:
    more = _more(total, limit)
    return [] if more is None else ["", f"{more}."]


def _junit(diff: RulebookDiff, name: str, lines: Sequence[int]) -> str:
    root = ET.Element("testsuites", name="norma rules diff")
    suite = ET.SubElement(root, "testsuite", name=f"{diff.old.label} -> {diff.new.label}")
    props = ET.SubElement(suite, "properties")
    for key, value in (("old", diff.old.label), ("new", diff.new.label), ("summary", diff.summary())):
        ET.SubElement(props, "property", name=key, value=value)
    failures = 0
    for change in diff.changes:
        case = ET.SubElement(suite, "testcase", classname="norma.rules.diff", name=_turn(change, name, lines))
        said = [f"verdict {_verdicts(change)}, reward {_reward(change.old_reward)} -> {_reward(change.new_reward)}"]
        said += evidence(change)
        if change.kind is ChangeKind.NEWLY_FAILING:
            first = change.failures_added[0] if change.failures_added else None
            message = f"newly fails: {first.rule_id}/{first.check_id}: {first.message}" if first else "newly fails"
            failure = ET.SubElement(case, "failure", message=message, type=change.kind.value)
            failure.text = "\n".join(said)
            failures += 1
        else:
            ET.SubElement(case, "system-out").text = "\n".join(said)
    for element in (root, suite):
        for total, count in (("tests", len(diff.changes)), ("failures", failures), ("errors", 0), ("skipped", 0)):
            element.set(total, str(count))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
