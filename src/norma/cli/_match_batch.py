"""``norma match --batch FILE`` (or ``norma match -``): many messages against one rulebook, on any engine.

The input is JSON Lines (each line ``{"message": ..., "session": {...}, "id": ...}``) or plain text (one message
per line): a file whose first non-blank line is a JSON object is JSON Lines. The output is one row per message
(``--format json``: with totals; ``jsonl``: one line each; table: the best rules of each message).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.table import Table

from norma.batch import BatchRecord, MatchJob, is_parquet, match_document, match_payload, parquet_rows, write_rows
from norma.cli._engine import EngineOptions, run_batch, succeeded
from norma.cli._output import write_document
from norma.errors import InvalidInputError, NormaError

__all__ = ["MAX_MESSAGE_LINE_BYTES", "match_batch", "read_messages"]

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
            error = InvalidInputError(f"not valid JSON ({exc.msg} at column {exc.colno})", source=where)
            records.append(BatchRecord(index, where, error))
            continue
        records.append(_record(index, where, value))
    return records


def _record(index: int, where: str, value: Any) -> BatchRecord:
    try:
        return BatchRecord(index, where, match_payload(value))
    except NormaError as exc:
        exc.source = where
        return BatchRecord(index, where, exc)


def _found(match: dict[str, Any]) -> str:
    """A match in the table: its id, whether it governs the turn and its confidence (as ``norma match`` shows it)."""
    enforcement = match.get("enforcement", {})
    label = "governs" if enforcement.get("enforced", True) else "neighbour"
    confidence = enforcement.get("confidence")
    return f"{match['rule_id']} ({label}{'' if confidence is None else f' {confidence:.2f}'})"


def _table(con: Console, document: dict[str, Any]) -> None:
    table = Table("line", "message", "matched rules (final score)")
    for row in document["results"]:
        found = ", ".join(_found(m) for m in row["matches"]) or "none"
        table.add_row(str(row["line"]), row["message"], found)
    con.print(table)
    con.print(
        f"{document['messages']} messages, {document['matched']} matched at least one of {document['rules']} rules"
    )


def match_batch(
    source: str,
    job: MatchJob,
    *,
    fmt: str,
    output_path: Path | None,
    options: EngineOptions,
) -> int:
    """Run the batch form of ``norma match`` (``job``: a rules file's or a stored tenant's); exit 0 when a message
    matched a rule, 1 when none did, 2 on a bad record (the others are still written)."""
    records = read_messages(source)
    job.check()
    good, errors = succeeded(run_batch(job, records, options, "matching"))
    rows = [{"line": line, **result} for line, result in good]
    document = match_document(rows, job.rule_count())
    if job.tenant_id is not None:
        document["tenant"] = job.tenant_id
    if output_path is not None and is_parquet(output_path):
        write_rows(output_path, [{**row, "matches": json.dumps(row["matches"])} for row in rows])
    else:
        _write(fmt, document, output_path)
    if errors:
        return 2
    return 0 if document["matched"] or not rows else 1


def _write(fmt: str, document: dict[str, Any], output_path: Path | None) -> None:
    write_document(fmt, document, document["results"], output_path, _table)
