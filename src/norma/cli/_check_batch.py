"""``norma check --batch FILE``: every turn of a JSON Lines file checked on the batch engines, and nothing finished
ever lost.

* ``--format jsonl`` writes each turn's row as soon as it is checked and every turn before it is done (input order,
  whatever order the engine finishes them in), flushed line by line, to ``--out FILE`` or stdout. The other formats
  are written when the command ends, ``--out FILE`` atomically (a temporary file renamed over it).
* SIGINT (Ctrl-C) or SIGTERM mid-batch stops the checking; the turns finished (in input order, up to the first one
  that was not) are written, the other formats marked incomplete (:class:`~norma.reports.Incomplete`), one line on
  stderr says how many and how to go on, and the command exits 130 (SIGINT) or 143 (SIGTERM).
* ``--resume`` (``--format jsonl --out FILE``) reads the rows already in FILE, checks that they are the first turns
  of this input (their ``line``, ``message`` and ``id``; their ``audit`` and ``failing`` as ``--audit`` and
  ``--fail-on`` give), drops a last line cut short (the run was killed while writing it), checks only the other
  turns and appends them; the exit code and the totals count every row of FILE.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from norma.cli._batch_run import BatchRun, JsonLines, no_records, say_interrupted
from norma.cli._engine import EngineOptions, record_line
from norma.cli._output import console, write_text
from norma.cli._turn_output import render_turn, write_report

if TYPE_CHECKING:
    from norma.batch import BatchRecord, BatchResult
    from norma.errors import InvalidInputError
    from norma.reports import Incomplete
    from norma.turns import TurnReport

__all__ = ["MAX_TURN_LINE_BYTES", "BatchOutput", "check_batch"]

MAX_TURN_LINE_BYTES = 4 * 1024 * 1024
"""Longest line read from a turns file (a message and an output)."""

_RESUMABLE = "only --format jsonl --out FILE can be resumed"


@dataclass(frozen=True)
class BatchOutput:
    """What the batch writes, and where."""

    fmt: str
    """``table``, ``json``, ``jsonl``, ``sarif``, ``junit`` or ``markdown``."""
    path: Path | None
    """``--out FILE`` (None: stdout)."""
    reports: list[tuple[str, Path]]
    """``--report FORMAT=FILE``."""
    fail_on: str
    everything: bool
    """The table lists every check (else only those that did not pass)."""
    resume: bool
    """``--resume``: go on with the rows already in :attr:`path`."""

    @property
    def where(self) -> str:
        """Where the output goes, for people (the table is printed, whatever ``--out`` says)."""
        return "stdout" if self.path is None or self.fmt == "table" else str(self.path)


def check_batch(
    source: str,
    allow_empty: bool,
    rules_file: Path | None,
    tenant_id: str | None,
    db_url: str | None,
    run_audit: bool,
    documents: Path | None,
    output: BatchOutput,
    options: EngineOptions,
    threshold: float | None = None,
) -> int:
    """Check every turn of ``source`` (``-``: stdin) and write them as ``output`` says (matched at a similarity
    ``threshold`` when given); the exit code."""
    from norma.batch import CheckJob, MatchJob
    from norma.matching import MatchConfig

    records = read_turns(source)
    if not records and not allow_empty:
        raise no_records(source, "turn records")
    config = None if threshold is None else MatchConfig(threshold=threshold)
    if tenant_id is not None:
        match = MatchJob.for_tenant(tenant_id, db_url, config)
    else:
        match = MatchJob.make(str(rules_file), config)
    job = CheckJob(match, audit=run_audit, documents=None if documents is None else str(documents), judge=True)
    job.check()
    name = "<stdin>" if source == "-" else source
    chosen = list(records) if options.shard is None else options.shard.select(records)
    earlier = _Earlier()
    if output.resume:
        assert output.path is not None
        earlier = _read_earlier(output.path, chosen, name, output.fail_on, run_audit)
    lines = None
    if output.fmt == "jsonl":
        lines = JsonLines(output.path, append=output.resume, keep_bytes=earlier.complete_bytes)

    def row(done: BatchResult) -> dict[str, Any]:
        turn = done.result  # the reports stay typed until here, the writer
        return {"line": record_line(done.where), **turn.row(), "failing": turn.report.failing(output.fail_on)}

    with BatchRun(records, options, row, lines=lines, skip=earlier.indexes) as batch:
        incomplete = batch.run(job, "checking")
        return _finish(job.rule_count(), tenant_id, name, earlier, batch.finished, output, incomplete)


def _finish(
    rules: int,
    tenant_id: str | None,
    name: str,
    earlier: _Earlier,
    finished: list[tuple[BatchResult, dict[str, Any] | None]],
    output: BatchOutput,
    incomplete: Incomplete | None,
) -> int:
    """Write the outputs from the rows of FILE (``--resume``) and the turns finished now; say what was done."""
    from norma.cli._engine import succeeded
    from norma.reports import mark_incomplete, turn_document

    results = [item for item, _ in finished]
    good, errors = succeeded(results)  # each bad record: a line on stderr
    bad = [(item.where, str(item.error)) for item in results if item.error is not None or item.result is None]
    rows = [*earlier.rows, *(row for _, row in finished if row is not None)]
    items: list[tuple[str, TurnReport]] = [
        *((f"{name}:{row['line']}", report) for row, report in zip(earlier.rows, earlier.reports, strict=True)),
        *((f"{name}:{line}", turn.report) for line, turn in good),
    ]
    document = turn_document(rows, rules, bad=len(bad))
    if tenant_id is not None:
        document["tenant"] = tenant_id
    document = mark_incomplete(document, incomplete)
    fmt = output.fmt
    if fmt == "table":
        con = console()
        ids = [row.get("id") for row in earlier.rows] + [turn.id for _, turn in good]
        for (item_name, report), turn_id in zip(items, ids, strict=True):  # the table names the turn's id too
            shown = item_name if turn_id is None else f"{item_name} ({turn_id})"
            render_turn(con, shown, report, output.everything, one_line=not output.everything)
        con.print(totals(document) + ("" if incomplete is None else f" (incomplete: {incomplete.describe()})"))
    elif fmt == "json":
        write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", output.path, "the json report")
    elif fmt != "jsonl":  # JSON Lines: every row is written already
        write_report(fmt, items, output.fail_on, output.path, bad, incomplete)
    for report_fmt, path in output.reports:
        if report_fmt == "json":  # the same document as --format json (norma merge reads it)
            write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", path, "the json report")
        else:
            write_report(report_fmt, items, output.fail_on, path, bad, incomplete)
    if incomplete is not None:
        _say_interrupted(incomplete, output)
        return incomplete.exit_code
    if output.resume:
        kept = f"{len(earlier.rows)} turns were in {output.where}" if earlier.rows else f"nothing was in {output.where}"
        click.echo(f"norma: resumed: {kept}, {len(finished)} records done now; {totals(document)}", err=True)
    if errors:
        return 2
    return 1 if any(row["failing"] for row in rows) else 0


def _say_interrupted(incomplete: Incomplete, output: BatchOutput) -> None:
    """The one stderr line of a batch stopped by a signal: how many records the output holds, how to go on."""
    if output.fmt == "jsonl" and output.path is not None:
        rest = incomplete.total - incomplete.done
        more = f"; add --resume to the same command to check the other {rest}"
    elif output.fmt == "jsonl":
        more = f" ({_RESUMABLE})"
    else:
        more = f", marked incomplete ({_RESUMABLE})"
    say_interrupted(incomplete, output.where, more)


def totals(document: dict[str, Any]) -> str:
    """The table's last line: every record of the batch (of the shard), checked (passed, failed, skipped) or bad."""
    return (
        f"{document['records']} records: {document['passed']} passed, {document['failed']} failed, "
        f"{document['skipped']} skipped, {document['bad']} bad"
    )


@dataclass
class _Earlier:
    """What an interrupted run left in ``--out FILE`` (``--resume``): its rows and their reports, in input order."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    reports: list[TurnReport] = field(default_factory=list)
    indexes: set[int] = field(default_factory=set)
    """The records those rows are of (not checked again)."""
    complete_bytes: int | None = None
    """Where FILE's last whole line ends, when a line cut short follows (it is cut off before appending)."""


def _read_earlier(path: Path, chosen: Sequence[BatchRecord], name: str, fail_on: str, audit: bool) -> _Earlier:
    """The rows an interrupted run of this batch wrote to ``path``: they must be its first turns, in order.

    Raises:
        InvalidInputError: ``path`` cannot be read, or is not the ``--format jsonl`` output of this batch.
    """
    from norma.errors import InvalidInputError, NormaError
    from norma.turns import TurnReport

    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _Earlier()  # nothing done yet: every turn is checked
    except OSError as exc:
        raise InvalidInputError(f"cannot read it: {exc.strerror or exc}", source=str(path)) from None
    end = data.rfind(b"\n") + 1  # after it, a line cut short: the run was killed while writing it
    turns = [record for record in chosen if not isinstance(record.payload, NormaError)]
    earlier = _Earlier(complete_bytes=end if end < len(data) else None)

    def foreign(number: int, why: str) -> InvalidInputError:
        return InvalidInputError(
            f"{why}: not the --format jsonl output of this batch",
            source=f"{path}:{number}",
            hint="--resume goes on with the --out FILE of an interrupted run of the same command (the same input, "
            "--shard, --audit and --fail-on); give that FILE, or drop --resume to check every turn again",
        )

    for number, raw in enumerate(data[:end].split(b"\n")[:-1], start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError:
            raise foreign(number, "not UTF-8 text") from None
        except json.JSONDecodeError as exc:
            raise foreign(number, f"not valid JSON ({exc.msg})") from None
        if (
            not isinstance(row, dict)
            or not isinstance(row.get("line"), int)
            or not isinstance(row.get("failing"), bool)
        ):
            raise foreign(number, "not a row of norma check --format jsonl")
        if len(earlier.rows) == len(turns):
            raise foreign(number, f"one row more than the {len(turns)} turns of {name}")
        record = turns[len(earlier.rows)]
        line = record_line(record.where)
        if row["line"] != line:
            raise foreign(number, f"the row of line {row['line']} of its input, where line {line} comes next")
        payload = record.payload
        if row.get("message") != payload["message"] or row.get("id", ...) != payload.get("id", ...):
            raise foreign(number, f"the message or the id is not that of line {line} of {name}")
        try:
            report = TurnReport.model_validate({key: row[key] for key in TurnReport.model_fields if key in row})
        except ValueError:
            raise foreign(number, "not a row of norma check --format jsonl") from None
        if (report.audit is not None) != audit:
            raise foreign(number, "checked with --audit" if report.audit is not None else "checked without --audit")
        if report.failing(fail_on) != row["failing"]:
            raise foreign(number, f"its failing is not what --fail-on {fail_on} says")
        earlier.rows.append(row)
        earlier.reports.append(report)
        earlier.indexes.add(record.index)
    return earlier


def read_turns(source: str) -> list[Any]:
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
            error = InvalidInputError(f"not valid JSON: {exc.msg}", source=name, line=number, column=exc.colno)
            records.append(BatchRecord(index, where, error))
        except NormaError as exc:
            exc.source, exc.line = name, number
            records.append(BatchRecord(index, where, exc))
    return records
