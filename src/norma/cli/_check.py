"""``norma check``: one turn (or every turn of ``--batch FILE``) checked end to end: the rules of a file or a stored
tenant that apply to the message, the output checked against each, the verdict and the reward (norma.turns)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from norma.cli._demo import SECTIONS
from norma.cli._engine import EngineOptions, engine_options
from norma.cli._output import (
    check_rules_source,
    console,
    fail_on_option,
    print_table,
    report_option,
    rules_source_options,
    write_text,
)

if TYPE_CHECKING:
    from norma.batch import CheckedTurn
    from norma.errors import InvalidInputError
    from norma.turns import CheckedRule, MatchedRuleSummary, Norma, TurnReport

__all__ = ["check"]

FORMATS = ("table", "json", "jsonl", "sarif", "junit", "markdown")
MAX_TURN_LINE_BYTES = 4 * 1024 * 1024
"""Longest line read from a turns file (a message and an output)."""
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


def _message(result: Any) -> str:
    """A check's message, with its first evidence excerpt (already masked for ``no_pii``) in quotes."""
    if not result.evidence:
        return str(result.message)
    text = " ".join(str(result.evidence[0].text).split())
    excerpt = text if len(text) <= _EXCERPT else text[: _EXCERPT - 1] + "…"
    return f'{result.message}: "{excerpt}"'


def _render(con: Console, name: str, report: TurnReport, everything: bool = True) -> None:
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
                escape(_message(result)),
            )
        print_table(con, table)
    if report.audit is not None:
        from norma.audit import severity_label, verdict_label

        con.print(f"audit: {verdict_label(report.audit.result)} ({len(report.audit.violations)} violations)")
        for v in report.audit.violations:
            con.print(f"  {v.location}: [{severity_label(v.severity)}] {v.rule}: {v.description}")
    reward = "none" if report.reward is None else f"{report.reward:.3f}"
    counts = report.counts()
    neighbours = sum(1 for r in report.checks if not r.enforced)
    of_neighbours = f", {neighbours} of them a neighbour's requirements" if neighbours else ""
    con.print(
        f"verdict: {report.verdict.value.upper()}, reward {reward} "
        f"({counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped{of_neighbours})"
    )


def _write(
    fmt: str,
    items: list[tuple[str, TurnReport]],
    fail_on: str,
    path: Path | None,
    bad: list[tuple[str, str]] | None = None,
) -> None:
    from norma.reports import render_turns

    write_text(render_turns(fmt, items, fail_on, bad or ()), path, f"the {fmt} report")


@click.command()
@rules_source_options(
    rules_help="A rulebook file (YAML or JSON) whose rules carry checks.",
    tenant_help="Check against a stored tenant's rules.",
)
@click.option("--message", "-m", default=None, help="The user's message.")
@click.option("--output", "-o", "output_text", default=None, help="The AI's answer to check.")
@click.option(
    "--output-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="Read the AI's answer from this file (UTF-8) instead of --output.",
)
@click.option("--session", "session_json", default=None, metavar="JSON", help="The session state as a JSON object.")
@click.option(
    "--batch",
    "batch_file",
    default=None,
    metavar="FILE",
    help='Check every turn of FILE (JSON Lines: {"message", "output", "session"?, "id"?}; "-": stdin).',
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="With --batch: a FILE with no turn records (empty, or only blank lines) checks nothing and exits 0 "
    "(without it: exit 2).",
)
@click.option("--audit", "run_audit", is_flag=True, help="Also run the IR.x.y audit on the output(s).")
@click.option(
    "--documents",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="The audit's normative documents folder (with --audit).",
)
@fail_on_option("Which failed checks make the exit code 1: error (default) or warning too.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default=None,
    help="A human table (default), JSON, JSON Lines (with --batch), SARIF 2.1.0, JUnit XML or a Markdown summary.",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the --format output here instead of stdout.",
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="The table lists every check (default: every check in a terminal, only those that did not pass otherwise).",
)
@report_option
@engine_options
@click.pass_context
def check(
    ctx: click.Context,
    /,
    rules_file: Path | None,
    tenant_id: str | None,
    db_url: str | None,
    message: str | None,
    output_text: str | None,
    output_file: Path | None,
    session_json: str | None,
    batch_file: str | None,
    allow_empty: bool,
    run_audit: bool,
    documents: Path | None,
    fail_on: str,
    output_format: str | None,
    out_path: Path | None,
    reports_to_write: list[tuple[str, Path]],
    show_all: bool,
    **engine: Any,
) -> int:
    """Check a turn: the rules that apply to --message, the --output checked against each, a verdict and a reward.

    The rules are those of --rules FILE or of the stored --tenant TENANT. Judge checks use the LLM of
    $NORMA_LLM_URL (docs/llm.md); without one they are skipped. Exit 0 when every turn passes, 1 when one fails
    (an error check failed; with --fail-on warning a warning one too), 2 on bad input: with --batch, a record that
    cannot be checked (the others are still checked and reported), or a FILE with no records (unless --allow-empty).
    """
    from norma.reports import turns_exit_code

    check_rules_source(rules_file, tenant_id, db_url)
    if documents is not None and not run_audit:
        raise click.UsageError("--documents goes with --audit (the audit reads them; without --audit nothing does)")
    if allow_empty and batch_file is None:
        raise click.UsageError("--allow-empty goes with --batch (it lets a batch file with no turns exit 0)")
    fmt = output_format or ((ctx.find_root().obj or {}).get("format") or "table")
    options = EngineOptions.pop(engine)
    everything = show_all or options.verbose or sys.stdout.isatty()  # a log or a CI job: what needs a look
    if batch_file is not None:
        if message is not None or output_text is not None or output_file is not None or session_json is not None:
            raise click.UsageError("with --batch, each turn's message, output and session are in its JSON Lines record")
        return _batch(
            batch_file,
            allow_empty,
            rules_file,
            tenant_id,
            db_url,
            run_audit,
            documents,
            fail_on,
            fmt,
            out_path,
            reports_to_write,
            options,
            everything,
        )
    if fmt == "jsonl":
        raise click.UsageError("--format jsonl goes with --batch")
    if message is None:
        raise click.UsageError("give the user's --message (or --batch FILE)")
    if (output_text is None) == (output_file is None):
        raise click.UsageError("give the AI's answer: --output TEXT or --output-file FILE (one of them)")
    output, name = _read_output(output_text, output_file)
    session = _parse_session(session_json)
    checker = _checker(rules_file, tenant_id, db_url, run_audit, documents)
    report = checker.check(message, output, session)
    items = [(name, report)]
    if fmt == "table":
        _render(console(), name, report, everything)
    else:
        _write(fmt, items, fail_on, out_path)
    for report_fmt, path in reports_to_write:
        _write(report_fmt, items, fail_on, path)
    return turns_exit_code([report], fail_on)


def _read_output(output_text: str | None, output_file: Path | None) -> tuple[str, str]:
    from norma.errors import InvalidInputError

    if output_file is None:
        assert output_text is not None
        return output_text, "<output>"  # no file holds it: reports give no location
    try:
        return output_file.read_text(encoding="utf-8"), str(output_file)
    except UnicodeDecodeError:
        raise InvalidInputError("the output file is not UTF-8 text", source=str(output_file)) from None
    except OSError as exc:
        raise InvalidInputError(f"cannot read it: {exc.strerror or exc}", source=str(output_file)) from None


def _parse_session(session_json: str | None) -> dict[str, Any] | None:
    from norma.errors import InvalidInputError

    if session_json is None:
        return None
    try:
        value = json.loads(session_json)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"--session is not valid JSON: {exc.msg} (at column {exc.colno})") from None
    if not isinstance(value, dict):
        raise InvalidInputError("--session must be a JSON object (a mapping of session fields)")
    return value


def _checker(
    rules_file: Path | None, tenant_id: str | None, db_url: str | None, run_audit: bool, documents: Path | None
) -> Norma:
    """The rules of --rules FILE or --tenant (at its current version), opened once (:func:`norma.open`); judge
    checks ask the LLM of $NORMA_LLM_URL, votes kept in the user cache (a re-run asks the model nothing)."""
    from norma.turns import open as open_rules

    if tenant_id is not None:
        return open_rules(tenant=tenant_id, store=db_url, audit=run_audit, documents=documents)
    return open_rules(rules_file, audit=run_audit, documents=documents)


def _batch(
    source: str,
    allow_empty: bool,
    rules_file: Path | None,
    tenant_id: str | None,
    db_url: str | None,
    run_audit: bool,
    documents: Path | None,
    fail_on: str,
    fmt: str,
    out_path: Path | None,
    reports_to_write: list[tuple[str, Path]],
    options: EngineOptions,
    everything: bool = True,
) -> int:
    from norma.batch import CheckJob, MatchJob
    from norma.cli._engine import run_batch, succeeded
    from norma.reports import turn_document

    records = _read_turns(source)
    if not records and not allow_empty:
        raise _no_turns(source)
    match = MatchJob.for_tenant(tenant_id, db_url) if tenant_id is not None else MatchJob.make(str(rules_file))
    job = CheckJob(match, audit=run_audit, documents=None if documents is None else str(documents), judge=True)
    job.check()
    results = run_batch(job, records, options, "checking")
    good, errors = succeeded(results)
    bad = [(item.where, str(item.error)) for item in results if item.error is not None or item.result is None]
    name = "<stdin>" if source == "-" else source
    turns: list[tuple[int, CheckedTurn]] = good
    items: list[tuple[str, TurnReport]] = [(f"{name}:{line}", turn.report) for line, turn in turns]
    rows = [  # the reports stay typed until here, the writer
        {"line": line, **turn.row(), "failing": turn.report.failing(fail_on)} for line, turn in turns
    ]
    document = turn_document(rows, job.rule_count(), bad=len(bad))
    if tenant_id is not None:
        document["tenant"] = tenant_id
    if fmt == "table":
        con = console()
        for name, report in items:
            _render(con, name, report, everything)
        con.print(_totals(document))
    elif fmt == "json":
        write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", out_path)
    elif fmt == "jsonl":
        write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), out_path)
    else:
        _write(fmt, items, fail_on, out_path, bad)
    for report_fmt, path in reports_to_write:
        if report_fmt == "json":  # the same document as --format json (norma merge reads it)
            write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", path)
        else:
            _write(report_fmt, items, fail_on, path, bad)
    if errors:
        return 2
    return 1 if any(row["failing"] for row in rows) else 0


def _totals(document: dict[str, Any]) -> str:
    """The table's last line: every record of the batch (of the shard), checked (passed, failed, skipped) or bad."""
    return (
        f"{document['records']} records: {document['passed']} passed, {document['failed']} failed, "
        f"{document['skipped']} skipped, {document['bad']} bad"
    )


def _no_turns(source: str) -> InvalidInputError:
    """The error of a batch input with no turn records (the command exits 2; ``--allow-empty`` accepts it)."""
    from norma.errors import InvalidInputError

    if source == "-":
        return InvalidInputError(
            "no turn records: the input is empty or has only blank lines",
            source="<stdin>",
            hint="check what is piped in, or pass --allow-empty to accept an empty batch",
        )
    return InvalidInputError(
        "no turn records: the file is empty or has only blank lines",
        source=source,
        hint="check the path, or pass --allow-empty to accept an empty batch",
    )


def _read_turns(source: str) -> list[Any]:
    """The turn records of a JSON Lines file (``-``: stdin), each a :class:`~norma.batch.BatchRecord` holding its
    payload or its error."""
    from norma.batch import BatchRecord, text_lines, turn_payload
    from norma.errors import InvalidInputError, NormaError

    try:
        if source == "-":
            lines = list(text_lines(sys.stdin.buffer, "<stdin>", MAX_TURN_LINE_BYTES))
        else:
            with open(source, "rb") as handle:
                lines = list(text_lines(handle, source, MAX_TURN_LINE_BYTES))
    except OSError as exc:
        raise InvalidInputError(f"cannot read it: {exc.strerror or exc}", source=source) from None
    name = "<stdin>" if source == "-" else source
    records: list[Any] = []
    for index, (number, text) in enumerate(lines):
        where = f"{name}:{number}"
        try:
            records.append(BatchRecord(index, where, turn_payload(json.loads(text))))
        except json.JSONDecodeError as exc:
            records.append(BatchRecord(index, where, InvalidInputError(f"not valid JSON ({exc.msg})", source=where)))
        except NormaError as exc:
            exc.source = where
            records.append(BatchRecord(index, where, exc))
    return records


_DEMO_TURNS = ("good-fraud", "bad-asks-for-pin")
"""The turns of ``turns/banking.jsonl`` the demo checks: one that passes, one that fails."""


def _demo_section(examples: Path) -> tuple[dict[str, Any], Callable[[Console], None]]:
    """The turn check on the banking rulebook: a passing and a failing turn of the examples, no judge."""
    from norma.turns import TurnChecker

    rulebook = examples / "rulebooks" / "banking-support.yaml"
    turns_file = examples / "turns" / "banking.jsonl"
    records = [json.loads(line) for line in turns_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    chosen = [r for wanted in _DEMO_TURNS for r in records if r.get("id") == wanted]
    checker = TurnChecker(rulebook)  # judge checks (none on these turns' rules) would be skipped
    reports = checker.check_many([(r["message"], r["output"], None) for r in chosen])
    summary = {
        "rulebook": rulebook.name,
        "turns": [
            {
                "id": record["id"],
                "message": record["message"],
                "verdict": report.verdict.value,
                "reward": None if report.reward is None else round(report.reward, 4),
                "failed": [f"{f.rule_id}/{f.check_id}" for f in report.failures],
            }
            for record, report in zip(chosen, reports, strict=True)
        ],
    }

    def render(con: Console) -> None:
        con.print(f"{rulebook.name}: each turn's output checked against the rules its message matched", markup=False)
        for record, report in zip(chosen, reports, strict=True):
            reward = "none" if report.reward is None else f"{report.reward:.3f}"
            con.print(f"{record['id']}: {record['message']!r}", markup=False)
            con.print(f"  verdict {report.verdict.value.upper()}, reward {reward}", markup=False)
            for failure in report.failures:
                con.print(f"  failed {failure.rule_id}/{failure.check_id}: {_message(failure)}", markup=False)
        con.print(f"more: norma check --rules {rulebook} --batch {turns_file}", markup=False)

    return summary, render


SECTIONS["turn check"] = _demo_section
