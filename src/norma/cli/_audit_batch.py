"""``norma audit --batch FILE.jsonl`` (or several files): every request audited on the batch engines, and nothing
finished ever lost.

The reports (``--format`` on stdout, each ``--report FORMAT=FILE`` atomically) are written when the command ends,
from the records finished, in input order. An input with no requests is bad input (exit 2) unless
``--allow-empty``. SIGINT or SIGTERM mid-batch stops the auditing; the requests finished are reported, marked
incomplete (:class:`~norma.reports.Incomplete`), one stderr line says how many, and the command exits 130 or 143
(:mod:`norma.cli._batch_run`, as ``norma check --batch``; no ``--resume`` here).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from norma.cli._batch_run import BatchRun, no_records, say_interrupted
from norma.cli._output import console, write_text

if TYPE_CHECKING:
    from norma.audit import AuditReport
    from norma.batch import BatchRecord, BatchResult, Job
    from norma.cli._engine import EngineOptions

__all__ = ["audit_batch", "totals"]


def totals(document: dict[str, Any]) -> str:
    """The table's last line: every record of the batch (of the shard), by verdict, or bad."""
    summary = document["summary"]
    return (
        f"{summary['records']} records: {summary['PASS']} PASS, {summary['FAIL']} FAIL, {summary['SKIP']} SKIP, "
        f"{summary['bad']} bad"
    )


def _report(done: BatchResult) -> AuditReport:
    from norma.audit import AuditReport

    return AuditReport.model_validate(done.result)


def audit_batch(
    records: list[BatchRecord],
    sources: list[str],
    job: Job,
    *,
    fmt: str,
    fail_on: str,
    reports_to_write: list[tuple[str, Path]],
    options: EngineOptions,
    allow_empty: bool,
) -> int:
    """Audit every record; exit 1 on a FAIL (``--fail-on``), 2 after a bad record (the others are reported) or on an
    input with no requests (unless ``allow_empty``), 130 / 143 when SIGINT / SIGTERM stopped it."""
    from norma.batch import audit_shard_json
    from norma.cli._errors import ErrorLine, echo_errors
    from norma.reports import audit_document, exit_code, render, render_table

    if not records and not allow_empty:
        raise no_records(", ".join(sources), "requests")
    with BatchRun(records, options, _report, verb="audited") as batch:
        incomplete = batch.run(job, "auditing")
        errors = [item for item, _ in batch.finished if item.error is not None or item.result is None]
        for item in errors:
            echo_errors([ErrorLine.of_record(item.where, str(item.error))])
        reports = [(item.where, report) for item, report in batch.finished if report is not None]
        bad = [(item.where, str(item.error)) for item in errors]
        if options.shard is not None and fmt == "json":
            sys.stdout.write(audit_shard_json(reports, fail_on, bad, incomplete=incomplete))
        elif fmt == "table":
            con = console()
            render_table(con, reports, summary=False)
            stopped = "" if incomplete is None else f" (incomplete: {incomplete.describe()})"
            con.print(totals(audit_document(reports, len(bad))) + stopped)
        else:
            sys.stdout.write(render(fmt, reports, fail_on, bad, incomplete=incomplete))
        for report_fmt, path in reports_to_write:
            text = render(report_fmt, reports, fail_on, bad, incomplete=incomplete)
            write_text(text, path, f"the {report_fmt} report")
        if incomplete is not None:
            say_interrupted(incomplete, "stdout", ", marked incomplete")
            return incomplete.exit_code
    if errors:
        return 2
    return exit_code([report for _, report in reports], fail_on)
