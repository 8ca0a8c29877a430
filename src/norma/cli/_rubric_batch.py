"""``norma rubric eval RUBRIC --batch FILE``: one rubric over many outcomes (JSON Lines or Parquet), on any engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from norma.batch import RubricJob, is_parquet, json_records, rubric_document, write_rows
from norma.cli._engine import EngineOptions, run_batch, succeeded
from norma.cli._output import write_document

__all__ = ["rubric_batch"]


def _table(con: Console, document: dict[str, Any]) -> None:
    table = Table("line", "reward", "verdict")
    for row in document["results"]:
        reward = row.get("reward")
        verdict = {True: "PASS", False: "FAIL"}.get(row.get("passed"), "")
        table.add_row(str(row["line"]), "None" if reward is None else f"{reward:.6g}", verdict)
    con.print(table)
    mean = document["mean_reward"]
    shown = "None" if mean is None else f"{mean:.6g}"
    con.print(f"{document['records']} records, mean reward {shown}, {document['failed']} failed")


def rubric_batch(
    rubric_file: Path,
    source: str,
    job: RubricJob,
    *,
    fmt: str,
    output_path: Path | None,
    options: EngineOptions,
) -> int:
    """Evaluate every record; exit 1 when a verdict fails, 2 when a record is bad (the others are written)."""
    job.check()
    good, errors = succeeded(run_batch(job, json_records(source), options, "evaluating"))
    rows = [{"line": line, **result} for line, result in good]
    document = rubric_document(rows, str(rubric_file))
    if output_path is not None and is_parquet(output_path):
        write_rows(output_path, [{**row, "per_criterion": json.dumps(row.get("per_criterion"))} for row in rows])
    else:
        write_document(fmt, document, rows, output_path, _table)
    if errors:
        return 2
    return 1 if document["failed"] else 0
