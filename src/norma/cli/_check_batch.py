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
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from norma.cli._engine import EngineOptions, record_line
from norma.cli._output import console, unwritable, write_text
from norma.cli._signals import StopSignals, signal_name
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
) -> int:
    """Check every turn of ``source`` (``-``: stdin) and write them as ``output`` says; the exit code."""
    from norma.batch import CheckJob, MatchJob
    from norma.cli._engine import run_batch

    records = read_turns(source)
    if not records and not allow_empty:
        raise no_turns(source)
    match = MatchJob.for_tenant(tenant_id, db_url) if tenant_id is not None else MatchJob.make(str(rules_file))
    job = CheckJob(match, audit=run_audit, documents=None if documents is None else str(documents), judge=True)
    job.check()
    name = "<stdin>" if source == "-" else source
    chosen = list(records) if options.shard is None else options.shard.select(records)
    earlier = _Earlier()
    if output.resume:
        assert output.path is not None
        earlier = _read_earlier(output.path, chosen, name, output.fail_on, run_audit)
    lines = _Lines(output.path, earlier, output.resume) if output.fmt == "jsonl" else None
    signals = StopSignals()
    sink = _Sink([r.index for r in chosen if r.index not in earlier.indexes], output.fail_on, signals, lines)
    try:
        with signals:
            try:
                run_batch(job, records, options, "checking", skip=earlier.indexes, on_result=sink.take)
            except BaseException:
                signals.stop()  # from here on a signal is only recorded: what finished is written whatever comes
                if signals.received is None:
                    raise  # not stopped by a signal: an error, reported as ever (the rows written stay)
            signals.stop()
            if lines is not None:
                lines.close()
            incomplete = None
            if not sink.complete and signals.received is not None:
                from norma.reports import Incomplete

                done = len(earlier.rows) + len(sink.finished)
                incomplete = Incomplete(done, len(chosen), signal_name(signals.received), signals.exit_code)
            return _finish(job.rule_count(), tenant_id, name, earlier, sink, output, incomplete)
    finally:
        if lines is not None:
            lines.close()


def _finish(
    rules: int,
    tenant_id: str | None,
    name: str,
    earlier: _Earlier,
    sink: _Sink,
    output: BatchOutput,
    incomplete: Incomplete | None,
) -> int:
    """Write the outputs from the rows of FILE (``--resume``) and the turns finished now; say what was done."""
    from norma.cli._engine import succeeded
    from norma.reports import mark_incomplete, turn_document

    results = [item for item, _ in sink.finished]
    good, errors = succeeded(results)  # each bad record: a line on stderr
    bad = [(item.where, str(item.error)) for item in results if item.error is not None or item.result is None]
    rows = [*earlier.rows, *(row for _, row in sink.finished if row is not None)]
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
        click.echo(f"norma: resumed: {kept}, {len(sink.finished)} records done now; {totals(document)}", err=True)
    if errors:
        return 2
    return 1 if any(row["failing"] for row in rows) else 0


def _say_interrupted(incomplete: Incomplete, output: BatchOutput) -> None:
    """The one stderr line of a batch stopped by a signal: how many records the output holds, how to go on."""
    said = "norma: interrupted" if incomplete.signal == "SIGINT" else f"norma: interrupted ({incomplete.signal})"
    written = f"{incomplete.done} of {incomplete.total} records written to {output.where}"
    if output.fmt == "jsonl" and output.path is not None:
        rest = incomplete.total - incomplete.done
        line = f"{said}: {written}; add --resume to the same command to check the other {rest}"
    elif output.fmt == "jsonl":
        line = f"{said}: {written} ({_RESUMABLE})"
    else:
        line = f"{said}: {written}, marked incomplete ({_RESUMABLE})"
    click.echo(line, err=True)


def totals(document: dict[str, Any]) -> str:
    """The table's last line: every record of the batch (of the shard), checked (passed, failed, skipped) or bad."""
    return (
        f"{document['records']} records: {document['passed']} passed, {document['failed']} failed, "
        f"{document['skipped']} skipped, {document['bad']} bad"
    )


class _Sink:
    """The results of the batch in input order: each as soon as it and every record before it are done (an engine
    may finish them in another order: the bad records first, Ray as it goes), its JSON Lines row written at once.
    Taking a result is held against signals (:meth:`StopSignals.held`): a row is written whole or not at all, and
    is in :attr:`finished` exactly when it is in the output."""

    def __init__(self, order: Sequence[int], fail_on: str, signals: StopSignals, lines: _Lines | None) -> None:
        self._order = order
        self._next = 0
        self._waiting: dict[int, BatchResult] = {}
        self._fail_on = fail_on
        self._signals = signals
        self._lines = lines
        self.finished: list[tuple[BatchResult, dict[str, Any] | None]] = []
        """The records done, in input order: each result and its row (None for a bad record)."""

    @property
    def complete(self) -> bool:
        """Whether every record is done."""
        return self._next == len(self._order)

    def take(self, item: BatchResult) -> None:
        with self._signals.held():
            self._waiting[item.index] = item
            while self._next < len(self._order) and self._order[self._next] in self._waiting:
                done = self._waiting.pop(self._order[self._next])
                row = None
                if done.error is None and done.result is not None:
                    turn = done.result  # the reports stay typed until here, the writer
                    row = {"line": record_line(done.where), **turn.row(), "failing": turn.report.failing(self._fail_on)}
                    if self._lines is not None:
                        self._lines.write(json.dumps(row, ensure_ascii=False) + "\n")
                self.finished.append((done, row))
                self._next += 1


@dataclass
class _Earlier:
    """What an interrupted run left in ``--out FILE`` (``--resume``): its rows and their reports, in input order."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    reports: list[TurnReport] = field(default_factory=list)
    indexes: set[int] = field(default_factory=set)
    """The records those rows are of (not checked again)."""
    complete_bytes: int | None = None
    """Where FILE's last whole line ends, when a line cut short follows (it is cut off before appending)."""


class _Lines:
    """Where the JSON Lines rows go: ``--out FILE`` (emptied first, or appended to with ``--resume``), else stdout;
    each line flushed as it is written."""

    def __init__(self, path: Path | None, earlier: _Earlier, append: bool) -> None:
        self._handle: TextIO | None = None
        self._stdout = sys.stdout  # before the progress bar, which sends what is printed in a terminal to stderr
        self._terminal = self._stdout.isatty()
        if path is None:
            return
        try:
            if earlier.complete_bytes is not None:
                os.truncate(path, earlier.complete_bytes)  # the line a killed run cut short: checked again
            self._handle = path.open("a" if append else "w", encoding="utf-8")
        except OSError as exc:
            raise unwritable("the JSON Lines", path, exc) from None

    def write(self, line: str) -> None:
        if self._handle is not None:
            self._handle.write(line)
            self._handle.flush()
            return
        out = sys.stdout if self._terminal else self._stdout  # a terminal: above the progress bar
        out.write(line)
        out.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


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


def no_turns(source: str) -> InvalidInputError:
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
            records.append(BatchRecord(index, where, InvalidInputError(f"not valid JSON ({exc.msg})", source=where)))
        except NormaError as exc:
            exc.source = where
            records.append(BatchRecord(index, where, exc))
    return records
