"""``norma match --batch FILE`` (or ``norma match -``): many messages against one rulebook, on any engine.

The input is JSON Lines (each line ``{"message": ..., "session": {...}, "id": ...}``) or plain text (one message
per line): a file whose first non-blank line is a JSON object is JSON Lines. The output is one row per message
(``--format json``: with totals; ``jsonl``: one line each, written as it is matched; table: the best rules of each
message). An input with no messages is bad input (exit 2) unless ``--allow-empty``; SIGINT or SIGTERM keeps the
messages matched (:mod:`norma.cli._batch_run`, as ``norma check --batch``; no ``--resume`` here).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from norma.batch import BatchRecord, BatchResult, MatchJob, is_parquet, match_document, match_payload, parquet_rows
from norma.cli._batch_run import BatchRun, no_records, rows_lines, stopped, write_rows_output
from norma.cli._engine import EngineOptions, record_line, succeeded
from norma.errors import InvalidInputError, NormaError

if TYPE_CHECKING:
    from norma.reports import Incomplete

__all__ = ["MAX_MESSAGE_LINE_BYTES", "match_batch", "read_messages", "totals"]

MAX_MESSAGE_LINE_BYTES = 1024 * 1024
"""Longest line read from a messages file."""


def read_messages(source: str) -> list[BatchRecord]:
    """The message records of a file (``-``: stdin): JSON Lines, plain lines or Parquet rows.

    Raises:
        InvalidInputError: a line that is not UTF-8; LimitExceededError: a line over 1 MiB.
    """
    from norma.batch import text_lines

    if source != "-" and is_parquet(source):
        return [_record(index, f"{source}:row {index + 1}", row) for index, row in enumerate(parquet_rows(source))]
    handle: IO[bytes]
    if source == "-":
        handle = sys.stdin.buffer
        name = "<stdin>"
        lines = list(text_lines(handle, name, MAX_MESSAGE_LINE_BYTES))
    else:
        name = source
        try:
            with open(source, "rb") as handle:
                lines = list(text_lines(handle, name, MAX_MESSAGE_LINE_BYTES))
        except OSError as exc:
            raise InvalidInputError(f"cannot read it: {exc.strerror or exc}", source=source) from None
    as_json = bool(lines) and lines[0][1].lstrip().startswith("{")
    records: list[BatchRecord] = []
    for index, (number, text) in enumerate(lines):
        where = f"{name}:{number}"
        if not as_json:
            records.append(BatchRecord(index, where, match_payload(text)))
            continue
        try:
            value: Any = json.loads(text)
        except json.JSONDecodeError as exc:
            error = InvalidInputError(f"not valid JSON: {exc.msg}", source=name, line=number, column=exc.colno)
            records.append(BatchRecord(index, where, error))
            continue
        records.append(_record(index, where, value))
    return records


def _record(index: int, where: str, value: Any) -> BatchRecord:
    try:
        return BatchRecord(index, where, match_payload(value))
    except NormaError as exc:
        file, _, number = where.rpartition(":")
        exc.source, exc.line = (file, int(number)) if number.isdigit() else (where, None)
        return BatchRecord(index, where, exc)


def _found(match: dict[str, Any]) -> str:
    """A match in the table: its id, whether it governs the turn and its confidence (as ``norma match`` shows it)."""
    enforcement = match.get("enforcement", {})
    label = "governs" if enforcement.get("enforced", True) else "neighbour"
    confidence = enforcement.get("confidence")
    return f"{match['rule_id']} ({label}{'' if confidence is None else f' {confidence:.2f}'})"


def totals(document: dict[str, Any]) -> str:
    """The table's last line: every record of the batch (of the shard), matched, unmatched or bad."""
    return (
        f"{document['records']} records: {document['matched']} matched, {document['unmatched']} unmatched, "
        f"{document['bad']} bad"
    )


def _table(con: Console, document: dict[str, Any], incomplete: Incomplete | None = None) -> None:
    table = Table("line", "message", "matched rules (final score)")
    for row in document["results"]:
        found = ", ".join(_found(m) for m in row["matches"]) or "none"
        table.add_row(str(row["line"]), row["message"], found)
    con.print(table)
    con.print(totals(document) + ("" if incomplete is None else f" (incomplete: {incomplete.describe()})"))


def _row(done: BatchResult) -> dict[str, Any]:
    return {"line": record_line(done.where), **done.result}


def match_batch(
    source: str,
    job: MatchJob,
    *,
    fmt: str,
    output_path: Path | None,
    options: EngineOptions,
    allow_empty: bool = False,
) -> int:
    """Run the batch form of ``norma match`` (``job``: a rules file's or a stored tenant's); exit 0 when a message
    matched a rule, 1 when none did, 2 on a bad record (the others are still written) or an input with no messages
    (unless ``allow_empty``), 130 / 143 when SIGINT / SIGTERM stopped it (what finished is written)."""
    from norma.reports import mark_incomplete

    records = read_messages(source)
    if not records and not allow_empty:
        raise no_records(source, "messages")
    job.check()
    with BatchRun(records, options, _row, lines=rows_lines(fmt, output_path), verb="matched") as batch:
        incomplete = batch.run(job, "matching")
        _, errors = succeeded([item for item, _ in batch.finished])  # each bad record: a line on stderr
        rows = [row for _, row in batch.finished if row is not None]
        document = match_document(rows, job.rule_count(), errors)
        if job.tenant_id is not None:
            document["tenant"] = job.tenant_id
        document = mark_incomplete(document, incomplete)

        def table(con: Console, shown: dict[str, Any]) -> None:
            _table(con, shown, incomplete)

        write_rows_output(
            fmt, document, rows, output_path, table, lambda row: {**row, "matches": json.dumps(row["matches"])}
        )
        if incomplete is not None:
            return stopped(incomplete, fmt, output_path)
    if errors:
        return 2
    return 0 if document["matched"] or not rows else 1
