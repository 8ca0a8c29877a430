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

from norma.cli._demo import SECTIONS
from norma.cli._engine import EngineOptions, engine_options
from norma.cli._output import (
    F,
    check_rules_source,
    console,
    fail_on_option,
    report_option,
    rules_source_options,
)
from norma.cli._turn_output import check_message, render_turn, write_report

if TYPE_CHECKING:
    from norma.turns import Norma

__all__ = ["check"]


def _text_file_option(name: str, what: str, inline: str) -> Callable[[F], F]:
    """``--X-file FILE``: ``what`` read from a UTF-8 file instead of ``inline``."""
    return click.option(
        name,
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        default=None,
        help=f"Read {what} from this file (UTF-8) instead of {inline}.",
    )


FORMATS = ("table", "json", "jsonl", "sarif", "junit", "markdown")


@click.command()
@rules_source_options(
    rules_help="A rulebook file (YAML or JSON) whose rules carry checks.",
    tenant_help="Check against a stored tenant's rules.",
)
@click.option("--message", "-m", default=None, help="The user's message ('-': read it from stdin).")
@_text_file_option("--message-file", "the user's message", "--message")
@click.option("--output", "-o", "output_text", default=None, help="The AI's answer to check.")
@_text_file_option("--output-file", "the AI's answer", "--output")
@click.option("--session", "session_json", default=None, metavar="JSON", help="The session state as a JSON object.")
@click.option(
    "--threshold",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="Match at a similarity threshold instead of the default gate (the rules that govern the message); the "
    "rules it lets through that do not govern are neighbours: their prohibitions apply, their requirements skip.",
)
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
    help="Write the --format output here instead of stdout (JSON Lines: each turn as it is checked; the other "
    "formats: all at once, when the command ends).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="With --batch, --format jsonl and --out FILE: keep the turns an interrupted run wrote to FILE, check the "
    "others and append them.",
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
    message_file: Path | None,
    output_text: str | None,
    output_file: Path | None,
    session_json: str | None,
    threshold: float | None,
    batch_file: str | None,
    allow_empty: bool,
    run_audit: bool,
    documents: Path | None,
    fail_on: str,
    output_format: str | None,
    out_path: Path | None,
    resume: bool,
    reports_to_write: list[tuple[str, Path]],
    show_all: bool,
    **engine: Any,
) -> int:
    """Check a turn: the rules that apply to --message, the --output checked against each, a verdict and a reward.

    The rules are those of --rules FILE or of the stored --tenant TENANT. Judge checks use the LLM of
    $NORMA_LLM_URL (docs/llm.md); without one they are skipped. Exit 0 when every turn passes, 1 when one fails
    (an error check failed; with --fail-on warning a warning one too), 2 on bad input: with --batch, a record that
    cannot be checked (the others are still checked and reported), or a FILE with no records (unless --allow-empty).
    A batch stopped by Ctrl-C (exit 130) or SIGTERM (exit 143) writes every turn it finished; --resume goes on.
    """
    from norma.reports import turns_exit_code

    check_rules_source(rules_file, tenant_id, db_url)
    if documents is not None and not run_audit:
        raise click.UsageError("--documents goes with --audit (the audit reads them; without --audit nothing does)")
    if allow_empty and batch_file is None:
        raise click.UsageError("--allow-empty goes with --batch (it lets a batch file with no turns exit 0)")
    if resume and batch_file is None:
        raise click.UsageError("--resume goes with --batch (it goes on with an interrupted batch)")
    fmt = output_format or ((ctx.find_root().obj or {}).get("format") or "table")
    options = EngineOptions.pop(engine)
    everything = show_all or options.verbose or sys.stdout.isatty()  # a log or a CI job: what needs a look
    if batch_file is not None:
        single = (message, message_file, output_text, output_file, session_json)
        if any(value is not None for value in single):
            raise click.UsageError("with --batch, each turn's message, output and session are in its JSON Lines record")
        if resume and (fmt != "jsonl" or out_path is None):
            raise click.UsageError(
                "--resume needs --format jsonl --out FILE (it keeps the turns an interrupted run wrote to FILE and "
                "appends the others; the other formats are written whole when the command ends)"
            )
        from norma.cli._check_batch import BatchOutput, check_batch

        writes = BatchOutput(fmt, out_path, reports_to_write, fail_on, everything, resume)
        return check_batch(
            batch_file, allow_empty, rules_file, tenant_id, db_url, run_audit, documents, writes, options, threshold
        )
    if fmt == "jsonl":
        raise click.UsageError("--format jsonl goes with --batch")
    if message is not None and message_file is not None:
        raise click.UsageError("give the user's message once: --message TEXT or --message-file FILE")
    if message is None and message_file is None:
        raise click.UsageError("give the user's --message (or --message-file FILE, or --batch FILE)")
    message = _read_message(message, message_file)
    if (output_text is None) == (output_file is None):
        raise click.UsageError("give the AI's answer: --output TEXT or --output-file FILE (one of them)")
    output, name = _read_output(output_text, output_file)
    session = _parse_session(session_json)
    checker = _checker(rules_file, tenant_id, db_url, run_audit, documents, threshold)
    report = checker.check(message, output, session)
    items = [(name, report)]
    if fmt == "table":
        render_turn(console(), name, report, everything)
    else:
        write_report(fmt, items, fail_on, out_path)
    for report_fmt, path in reports_to_write:
        write_report(report_fmt, items, fail_on, path)
    return turns_exit_code([report], fail_on)


def _read_message(message: str | None, message_file: Path | None) -> str:
    """The user's message: --message TEXT, --message - (stdin) or --message-file FILE (UTF-8; one line end at the
    end, which editors and ``echo`` add, is not part of it)."""
    if message is not None and message != "-":
        return message
    return _read_text(message_file, "the message").removesuffix("\n").removesuffix("\r")


def _read_output(output_text: str | None, output_file: Path | None) -> tuple[str, str]:
    if output_file is None:
        assert output_text is not None
        return output_text, "<output>"  # no file holds it: reports give no location
    return _read_text(output_file, "the output file"), str(output_file)


def _read_text(path: Path | None, what: str) -> str:
    """The UTF-8 text of ``path`` (None: stdin); an InvalidInputError naming ``what`` and where when it is not."""
    from norma.errors import InvalidInputError

    source = "<stdin>" if path is None else str(path)
    try:
        return sys.stdin.buffer.read().decode("utf-8") if path is None else path.read_text("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{what} is not UTF-8 text", source=source) from None
    except OSError as exc:
        raise InvalidInputError(f"cannot read it: {exc.strerror or exc}", source=source) from None


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
    rules_file: Path | None,
    tenant_id: str | None,
    db_url: str | None,
    run_audit: bool,
    documents: Path | None,
    threshold: float | None = None,
) -> Norma:
    """The rules of --rules FILE or --tenant (at its current version), opened once (:func:`norma.open`), matched at
    ``threshold`` when given; judge checks ask the LLM of $NORMA_LLM_URL, votes kept in the user cache (a re-run
    asks the model nothing)."""
    from norma.matching import MatchConfig
    from norma.turns import open as open_rules

    config = None if threshold is None else MatchConfig(threshold=threshold)
    if tenant_id is not None:
        return open_rules(tenant=tenant_id, store=db_url, config=config, audit=run_audit, documents=documents)
    return open_rules(rules_file, config=config, audit=run_audit, documents=documents)


_DEMO_TURNS = ("good-fraud", "bad-asks-for-pin")
"""The turns of ``turns/banking.jsonl`` the demo checks: one that passes, one that fails."""


def _demo_section(examples: Path) -> tuple[dict[str, Any], Callable[[Console], None]]:
    """The turn check on the banking rulebook: a passing and a failing turn of the examples, no judge."""
    from norma._safety import json_lines
    from norma.turns import open as open_rules

    rulebook = examples / "rulebooks" / "banking-support.yaml"
    turns_file = examples / "turns" / "banking.jsonl"
    records = [json.loads(line) for line in json_lines(turns_file.read_text(encoding="utf-8")) if line.strip()]
    chosen = [r for wanted in _DEMO_TURNS for r in records if r.get("id") == wanted]
    opened = open_rules(rulebook, judge=None)  # judge checks (none on these turns' rules) would be skipped
    reports = opened.check_many([(r["message"], r["output"], None) for r in chosen])
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
                con.print(f"  failed {failure.rule_id}/{failure.check_id}: {check_message(failure)}", markup=False)
        con.print(f"more: norma check --rules {rulebook} --batch {turns_file}", markup=False)

    return summary, render


SECTIONS["turn check"] = _demo_section
