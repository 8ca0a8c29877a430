"""``norma rules diff OLD NEW --turns FILE``: every recorded turn checked against two versions of the rules, and what
the change does (:func:`norma.turns.diff_turns`; the renderers are in ``_rules_diff_output.py``).

OLD and NEW are each a rulebook file, or a stored tenant's version, ``TENANT@VERSION`` (``TENANT@latest`` or plain
``TENANT``: its current version) in ``--db``; an existing file wins. The turns are the JSON Lines of ``norma check
--batch``. Exit 0, or 1 when ``--fail-on`` forbids what the change does, 2 on bad input.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from norma.cli._batch_run import allow_empty_option
from norma.cli._output import db_option, wide_option

if TYPE_CHECKING:
    from norma.batch import BatchRecord
    from norma.errors import NormaError
    from norma.llm import Judge
    from norma.turns import Norma

__all__ = ["FAIL_ON", "diff_command", "fail_on_option", "limit_option"]

FORMATS = ("table", "json", "markdown", "junit")

FAIL_ON = ("newly-failing", "verdict-change", "never")
"""The values of :class:`norma.turns.DiffFailOn`, spelt out so that ``--help`` need not import the library
(tests/cli/test_rules_diff_cli.py keeps them equal)."""

fail_on_option = click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="never",
    show_default=True,
    help="Exit 1 when a turn newly fails (newly-failing), when a turn's verdict changes at all (verdict-change), or "
    "never.",
)
"""``--fail-on`` of ``norma rules diff`` and ``norma rules diff-git``."""
limit_option = click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=20,
    show_default=True,
    help="Rows of each table of the table and Markdown formats (turns, rules, edits), then 'and N more'; JSON lists "
    "every one.",
)
"""``--limit`` of both."""
turns_option = click.option(
    "--turns",
    "turns_file",
    required=True,
    metavar="FILE",
    help='The recorded turns: JSON Lines as norma check --batch reads them ({"message", "output", "session"?, '
    '"id"?}; "-": stdin).',
)
"""``--turns FILE`` of both."""

LABEL = "comparing"
"""The progress bar's label (and the log lines': ``norma: comparing: 2,560 of 10,000 records``)."""

_SPEC = re.compile(r"(?P<tenant>[^@]+)(?:@(?P<version>[^@]*))?")


@click.command("diff")
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@turns_option
@allow_empty_option("records", "compares nothing", file="A turns FILE")
@db_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default=None,
    help="A human table (default), JSON (every changed turn), a Markdown pull request comment, or JUnit XML (one "
    "test case per changed turn, a failure when it newly fails).",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Write the output here instead of stdout (at once, when the command ends).",
)
@fail_on_option
@limit_option
@wide_option
@click.pass_context
def diff_command(
    ctx: click.Context,
    /,
    old: str,
    new: str,
    turns_file: str,
    allow_empty: bool,
    db_url: str | None,
    output_format: str | None,
    out_path: Path | None,
    fail_on: str,
    limit: int,
) -> int:
    """Check recorded turns against two versions of a rulebook and report what the change does.

    OLD and NEW are rulebook files, or TENANT@VERSION of a stored tenant (TENANT@latest, or TENANT: its current
    version; a file of that name wins). Each turn of --turns is checked against both, as norma check does; the
    turns whose verdict, reward, governing or matched rules or failing checks differ are listed, worst first, with
    the evidence, then grouped by rule and by rule edit. Judge checks use the LLM of $NORMA_LLM_URL (docs/llm.md).
    Exit 0, 1 when --fail-on forbids what changed, 2 on bad input.
    """
    from norma.cli._check_batch import read_turns
    from norma.cli._engine import record_line
    from norma.cli._rules_diff_output import render
    from norma.errors import NormaError
    from norma.turns import diff_turns

    fmt = output_format or ((ctx.find_root().obj or {}).get("format") or "table")
    records: list[BatchRecord] = read_turns(turns_file)
    if not records and not allow_empty:
        from norma.cli._batch_run import no_records

        raise no_records(turns_file, "turn records")
    name = "<stdin>" if turns_file == "-" else turns_file
    lines: list[int] = []
    turns: list[dict[str, Any]] = []
    for record in records:
        if isinstance(record.payload, NormaError):
            raise record.payload  # FILE:LINE(:COL): field: message, as norma check --batch says it
        lines.append(record_line(record.where))
        turns.append(record.payload)
    before = _open_side("OLD", old, db_url, "user")
    after = _open_side("NEW", new, db_url, before.judge)  # one judge: the rules both have are judged once
    try:
        with _progress() as advance:
            diff = diff_turns(before, after, turns, progress=advance)
    except NormaError as exc:
        raise _placed(exc, name, lines) from None
    render(fmt, diff, name, lines, limit, out_path)
    return 1 if diff.failing(fail_on) else 0


def _spec(which: str, spec: str) -> tuple[str, int | None]:
    """``TENANT@VERSION`` as (tenant, version; None for ``latest`` or no version)."""
    from norma.errors import InvalidInputError

    found = _SPEC.fullmatch(spec)
    version = None if found is None else found["version"]
    if found is None or (version is not None and version != "latest" and not version.isdigit()):
        raise InvalidInputError(
            f"{which} {spec!r} is no rulebook file, and not TENANT@VERSION either",
            hint="give a rulebook file (YAML or JSON), or a stored tenant as TENANT@3, TENANT@latest or TENANT",
        )
    return found["tenant"], None if version in (None, "latest") else int(version)


def _open_side(which: str, spec: str, db_url: str | None, judge: Judge | Literal["user"] | None) -> Norma:
    """OLD or NEW: the rulebook file ``spec``, else the stored tenant version it names (judge checks asked of
    ``judge``: ``"user"``, the LLM of $NORMA_LLM_URL with votes in the user cache, or the other side's judge)."""
    from norma.errors import InvalidInputError, NotFoundError
    from norma.turns import open as open_rules

    path = Path(spec)
    if path.is_file():
        return open_rules(path, judge=judge)
    if path.exists():
        raise InvalidInputError(f"{which} {spec!r} is a folder, not a rulebook file", source=spec)
    tenant, version = _spec(which, spec)
    try:
        return open_rules(tenant=tenant, version=version, store=db_url, judge=judge)
    except (NotFoundError, InvalidInputError) as exc:  # a version written out was meant: say what the store says
        meant = "@" in spec and exc.hint
        raise NotFoundError(
            f"{which} {spec!r}: no such rulebook file, and no such stored tenant version: {exc.message}",
            hint=exc.hint if meant else "give a rulebook file (YAML or JSON), or TENANT@VERSION of a tenant in --db",
        ) from None


_TURN = re.compile(r"turns\[(?P<index>\d+)\](?:\.(?P<field>.+))?")


def _placed(exc: NormaError, name: str, lines: list[int]) -> NormaError:
    """A library error about turn ``i`` (``location``: ``turns[i].field``) at its line of the turns file."""
    found = _TURN.fullmatch(exc.location or "")
    if found is not None and int(found["index"]) < len(lines):
        exc.source, exc.line, exc.location = name, lines[int(found["index"])], found["field"]
    return exc


@contextmanager
def _progress() -> Iterator[Callable[[int, int], None]]:
    """What ``norma check --batch`` shows on stderr: a bar in a terminal (gone when done), else a line at the pace of
    ``$NORMA_PROGRESS_SECONDS`` (30 s; a CI log)."""
    from norma.cli._engine import _progress_every, progress_line

    terminal = sys.stderr.isatty()
    every = None if terminal else _progress_every()
    bar = Progress(
        TextColumn(LABEL),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
        disable=not terminal,
    )
    started = last = time.monotonic()
    with bar:
        task = bar.add_task(LABEL, total=None)

        def advance(done: int, total: int) -> None:
            nonlocal last
            bar.update(task, completed=done, total=total, refresh=True)
            now = time.monotonic()
            if every is not None and now - last >= every and done < total:
                last = now
                click.echo(progress_line(LABEL, done, total, now - started), err=True)

        yield advance
