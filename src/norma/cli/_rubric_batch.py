"""``norma rubric eval RUBRIC --batch FILE``: one rubric over many outcomes (JSON Lines or Parquet), on any engine.

``--format jsonl`` writes each record's result as it is evaluated; an input with no records is bad input (exit 2)
unless ``--allow-empty``; SIGINT or SIGTERM keeps the records evaluated (:mod:`norma.cli._batch_run`, as
``norma check --batch``; no ``--resume`` here).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from norma.batch import BatchResult, RubricJob, json_records, rubric_document
from norma.cli._batch_run import BatchRun, no_records, rows_lines, stopped, write_rows_output
from norma.cli._engine import EngineOptions, record_line, succeeded

if TYPE_CHECKING:
    from norma.reports import Incomplete

__all__ = ["rubric_batch", "totals"]


def totals(document: dict[str, Any]) -> str:
    """The table's last line: every record of the batch (of the shard), by verdict (none without
    ``--pass-threshold`` or ``--enforce-required``) or bad, and the mean reward of those evaluated."""
    mean = document["mean_reward"]
    unjudged = document["evaluated"] - document["passed"] - document["failed"]
    return (
        f"{document['records']} records: {document['passed']} passed, {document['failed']} failed, "
        f"{unjudged} without a verdict, {document['bad']} bad; mean reward {'None' if mean is None else f'{mean:.6g}'}"
    )


def _table(con: Console, document: dict[str, Any], incomplete: Incomplete | None = None) -> None:
    table = Table("line", "reward", "verdict")
    for row in document["results"]:
        reward = row.get("reward")
        verdict = {True: "PASS", False: "FAIL"}.get(row.get("passed"), "")
        table.add_row(str(row["line"]), "None" if reward is None else f"{reward:.6g}", verdict)
    con.print(table)
    con.print(totals(document) + ("" if incomplete is None else f" (incomplete: {incomplete.describe()})"))


def _row(done: BatchResult) -> dict[str, Any]:
    return {"line": record_line(done.where), **done.result}


def rubric_batch(
    rubric_file: Path,
    source: str,
    job: RubricJob,
    *,
    fmt: str,
    output_path: Path | None,
    options: EngineOptions,
    allow_empty: bool = False,
) -> int:
    """Evaluate every record; exit 1 when a verdict fails, 2 when a record is bad (the others are written) or the
    input has none (unless ``allow_empty``), 130 / 143 when SIGINT / SIGTERM stopped it (what finished is written)."""
    from norma.reports import mark_incomplete

    job.check()
    records = json_records(source)
    if not records and not allow_empty:
        raise no_records(source, "records")
    with BatchRun(records, options, _row, lines=rows_lines(fmt, output_path), verb="evaluated") as batch:
        incomplete = batch.run(job, "evaluating")
        _, errors = succeeded([item for item, _ in batch.finished])  # each bad record: a line on stderr
        rows = [row for _, row in batch.finished if row is not None]
        document = mark_incomplete(rubric_document(rows, str(rubric_file), errors), incomplete)

        def table(con: Console, shown: dict[str, Any]) -> None:
            _table(con, shown, incomplete)

        write_rows_output(
            fmt,
            document,
            rows,
            output_path,
            table,
            lambda row: {**row, "per_criterion": json.dumps(row.get("per_criterion"))},
        )
        if incomplete is not None:
            return stopped(incomplete, fmt, output_path)
    if errors:
        return 2
    return 1 if document["failed"] else 0
