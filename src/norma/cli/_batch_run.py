"""What every batch command does around its run (``norma check``, ``norma match``, ``norma rubric eval`` and
``norma audit`` with ``--batch``): nothing finished is ever lost, and an empty input is bad input.

* :class:`BatchRun` runs the job (:func:`~norma.cli._engine.run_batch`) under :class:`~norma.cli._signals.StopSignals`
  and keeps the results in input order as they finish (an engine may finish them in another order: the bad records
  first, Ray as it goes), each turned into its row at once; with :class:`JsonLines` each row is written and flushed
  as soon as it and every record before it are done. SIGINT or SIGTERM stops the run: :meth:`BatchRun.run` returns
  the :class:`~norma.reports.Incomplete` that the command's other formats are marked with, and the command writes
  what finished (``--out`` / ``--output`` atomically: :func:`~norma.cli._output.write_text`), says so in one stderr
  line (:func:`say_interrupted`) and exits 130 or 143.
* :func:`rows_lines`, :func:`write_rows_output` and :func:`stopped`: the outputs of a batch whose results are JSON
  rows (``match``, ``rubric eval``), a Parquet ``--output`` included (written at the end, atomically, unmarked).
* :func:`no_records`: the error of an input with no records (exit 2; ``--allow-empty``, :func:`allow_empty_option`,
  accepts it).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TextIO, TypeVar

import click

from norma.cli._output import replace_file, unwritable, write_document
from norma.cli._signals import StopSignals, signal_name

if TYPE_CHECKING:
    from rich.console import Console

    from norma.batch import BatchRecord, BatchResult, Job
    from norma.cli._engine import EngineOptions
    from norma.errors import InvalidInputError
    from norma.reports import Incomplete

__all__ = [
    "BatchRun",
    "JsonLines",
    "allow_empty_option",
    "interrupted_line",
    "no_records",
    "rows_lines",
    "say_interrupted",
    "stopped",
    "write_rows_output",
]

R = TypeVar("R")
F = TypeVar("F", bound=Callable[..., Any])


class JsonLines:
    """Where JSON Lines rows go as they finish: ``path`` (emptied first, or appended to with ``append``, after cutting
    it to its first ``keep_bytes``), else stdout; each line flushed as it is written."""

    def __init__(self, path: Path | None, *, append: bool = False, keep_bytes: int | None = None) -> None:
        self._handle: TextIO | None = None
        self._stdout = sys.stdout  # before the progress bar, which sends what is printed in a terminal to stderr
        self._terminal = self._stdout.isatty()
        if path is None:
            return
        try:
            if keep_bytes is not None:
                os.truncate(path, keep_bytes)  # a line a killed run cut short
            self._handle = path.open("a" if append else "w", encoding="utf-8")
        except OSError as exc:
            raise unwritable("the JSON Lines", path, exc) from None

    def write(self, row: dict[str, Any]) -> None:
        """One row, as one line of JSON, flushed."""
        line = json.dumps(row, ensure_ascii=False) + "\n"
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


class _InOrder(Generic[R]):
    """The results of the batch in input order: each as soon as it and every record before it are done, turned into
    its row (``row``; a bad record has none) and written (``write``). Taking a result is held against signals
    (:meth:`StopSignals.held`): a row is written whole or not at all, and is in :attr:`finished` exactly when it is
    in the output."""

    def __init__(
        self,
        order: Sequence[int],
        signals: StopSignals,
        row: Callable[[BatchResult], R],
        write: Callable[[R], None] | None,
    ) -> None:
        self._order = order
        self._next = 0
        self._waiting: dict[int, BatchResult] = {}
        self._signals = signals
        self._row = row
        self._write = write
        self.finished: list[tuple[BatchResult, R | None]] = []

    @property
    def complete(self) -> bool:
        return self._next == len(self._order)

    def take(self, item: BatchResult) -> None:
        with self._signals.held():
            self._waiting[item.index] = item
            while self._next < len(self._order) and self._order[self._next] in self._waiting:
                done = self._waiting.pop(self._order[self._next])
                row = None
                if done.error is None and done.result is not None:
                    row = self._row(done)
                    if self._write is not None:
                        self._write(row)
                self.finished.append((done, row))
                self._next += 1


class BatchRun(Generic[R]):
    """One run of a batch command that keeps what finished (see the module); used as a ``with`` block around the
    run and the writing of its outputs, during which SIGINT and SIGTERM stop the run, then are only recorded.

    ``row`` turns a record's result into what the command writes (a bad record has none); ``lines`` (``--format
    jsonl``) writes each row as it finishes; ``skip``: the records done before (``--resume``), counted as done.
    """

    def __init__(
        self,
        records: Sequence[BatchRecord],
        options: EngineOptions,
        row: Callable[[BatchResult], R],
        *,
        lines: JsonLines | None = None,
        skip: Collection[int] = (),
        verb: str = "checked",
    ) -> None:
        chosen = list(records) if options.shard is None else options.shard.select(records)
        self._records = records
        self._options = options
        self._skip = skip
        self._lines = lines
        self._verb = verb
        self.total = len(chosen)
        """The records of the input (of the shard, with ``--shard``)."""
        self.before = sum(1 for record in chosen if record.index in skip)
        """The records done before (``skip``)."""
        self.signals = StopSignals()
        write: Callable[[Any], None] | None = None if lines is None else lines.write
        self._sink = _InOrder([r.index for r in chosen if r.index not in skip], self.signals, row, write)

    @property
    def finished(self) -> list[tuple[BatchResult, R | None]]:
        """The records done, in input order, up to the first one that was not: each result and its row (None for a
        bad record)."""
        return self._sink.finished

    def __enter__(self) -> BatchRun[R]:
        self.signals.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        try:
            self.signals.__exit__(kind, value, traceback)
        finally:
            if self._lines is not None:
                self._lines.close()

    def run(self, job: Job, label: str) -> Incomplete | None:
        """Run ``job`` (a progress bar labelled ``label``); None when every record is done, else what the outputs are
        marked with (a signal stopped it). An error that is no signal is raised (the rows written stay)."""
        from norma.cli._engine import run_batch

        try:
            run_batch(job, self._records, self._options, label, skip=self._skip, on_result=self._sink.take)
        except BaseException:
            self.signals.stop()  # from here on a signal is only recorded: what finished is written whatever comes
            if self.signals.received is None:
                raise
        self.signals.stop()
        if self._lines is not None:
            self._lines.close()
        if self._sink.complete or self.signals.received is None:
            return None
        from norma.reports import Incomplete

        done = self.before + len(self._sink.finished)
        received = self.signals.received
        return Incomplete(done, self.total, signal_name(received), self.signals.exit_code, self._verb)


def interrupted_line(incomplete: Incomplete, where: str) -> str:
    """``norma: interrupted: 37 of 120 records written to out.jsonl`` (``norma: interrupted (SIGTERM): ...``)."""
    said = "norma: interrupted" if incomplete.signal == "SIGINT" else f"norma: interrupted ({incomplete.signal})"
    return f"{said}: {incomplete.done} of {incomplete.total} records written to {where}"


def say_interrupted(incomplete: Incomplete, where: str, more: str = "") -> None:
    """The one stderr line of a batch stopped by a signal (:func:`interrupted_line`, then ``more``)."""
    click.echo(interrupted_line(incomplete, where) + more, err=True)


def no_records(source: str, what: str) -> InvalidInputError:
    """The error of a batch input with no records (``what``: ``turn records``, ``messages``): the command exits 2;
    ``--allow-empty`` accepts it."""
    from norma.errors import InvalidInputError

    if source == "-":
        return InvalidInputError(
            f"no {what}: the input is empty or has only blank lines",
            source="<stdin>",
            hint="check what is piped in, or pass --allow-empty to accept an empty batch",
        )
    from norma.batch import is_parquet

    empty = "the Parquet file has no rows" if is_parquet(source) else "the file is empty or has only blank lines"
    return InvalidInputError(
        f"no {what}: {empty}", source=source, hint="check the path, or pass --allow-empty to accept an empty batch"
    )


def allow_empty_option(what: str, does: str, file: str = "With --batch: a FILE") -> Callable[[F], F]:
    """``--allow-empty``: ``file`` with no ``what`` ``does`` (``matches nothing``) and exits 0."""
    return click.option(
        "--allow-empty",
        is_flag=True,
        help=f"{file} with no {what} (empty, or only blank lines) {does} and exits 0 (without it: exit 2).",
    )


def rows_lines(fmt: str, path: Path | None) -> JsonLines | None:
    """Where ``--format jsonl`` rows go as they finish (None: another format, or a Parquet ``--output``, which is
    written when the command ends)."""
    from norma.batch import is_parquet

    if fmt != "jsonl" or (path is not None and is_parquet(path)):
        return None
    return JsonLines(path)


def write_rows_output(
    fmt: str,
    document: dict[str, Any],
    rows: list[dict[str, Any]],
    path: Path | None,
    table: Callable[[Console, dict[str, Any]], None],
    parquet_row: Callable[[dict[str, Any]], dict[str, Any]],
) -> None:
    """A batch's output when the command ends (JSON Lines rows are written already: :func:`rows_lines`): a Parquet
    ``--output`` (``parquet_row`` of each row; not marked incomplete: a Parquet table has no place for it), the JSON
    ``document`` or the ``table``; to ``path`` atomically, or stdout."""
    from norma.batch import is_parquet

    if path is not None and is_parquet(path):
        from norma.batch import parquet_bytes

        data = parquet_bytes([parquet_row(row) for row in rows])
        try:
            replace_file(path, data)
        except OSError as exc:
            raise unwritable("the Parquet output", path, exc) from None
    elif fmt != "jsonl":
        write_document(fmt, document, rows, path, table)


def stopped(incomplete: Incomplete, fmt: str, path: Path | None) -> int:
    """Say what a batch writing rows (:func:`write_rows_output`) wrote when a signal stopped it; its exit code."""
    from norma.batch import is_parquet

    marked = fmt != "jsonl" and not (path is not None and is_parquet(path))
    say_interrupted(incomplete, "stdout" if path is None else str(path), ", marked incomplete" if marked else "")
    return incomplete.exit_code
