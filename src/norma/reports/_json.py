"""JSON: one report as §2's object; several (or a batch with bad records, or stopped before its end) as
``{"reports": [{"name": ..., **report}], "summary": {...}}`` (:func:`audit_document`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from norma.audit import AuditReport, verdict_label
from norma.reports._bad import BadRecord
from norma.reports._incomplete import Incomplete, mark_incomplete

__all__ = ["audit_document", "to_json"]


def audit_document(
    items: Sequence[tuple[str, AuditReport]], bad: int = 0, incomplete: Incomplete | None = None
) -> dict[str, Any]:
    """A batch's reports and their ``summary``: ``total`` (the reports), ``PASS``, ``FAIL``, ``SKIP``, ``records``
    (every record, the bad ones too) and ``bad`` (the records that could not be audited: they have no report);
    marked incomplete (:func:`~norma.reports.mark_incomplete`) when the batch was stopped before its end."""
    counts: dict[str, int] = {"PASS": 0, "FAIL": 0, "SKIP": 0}
    for _, report in items:
        counts[verdict_label(report.result)] += 1
    document = {
        "reports": [{"name": name, **report.model_dump(mode="json")} for name, report in items],
        "summary": {"total": len(items), **counts, "records": len(items) + bad, "bad": bad},
    }
    return mark_incomplete(document, incomplete)


def to_json(
    items: Sequence[tuple[str, AuditReport]],
    fail_on: str = "error",
    bad: Sequence[BadRecord] = (),
    *,
    incomplete: Incomplete | None = None,
) -> str:
    """JSON text (two-space indent, UTF-8 kept): one report alone, else :func:`audit_document`."""
    payload: Any
    if len(items) == 1 and not bad and incomplete is None:
        payload = items[0][1].model_dump(mode="json")
    else:
        payload = audit_document(items, len(bad), incomplete)
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
