"""JSON: one report as §2's object; several as ``{"reports": [{"name": ..., **report}], "summary": {...}}``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from norma.audit import AuditReport, verdict_label

__all__ = ["to_json"]


def to_json(items: Sequence[tuple[str, AuditReport]], fail_on: str = "error") -> str:
    """JSON text (two-space indent, UTF-8 kept)."""
    payload: Any
    if len(items) == 1:
        payload = items[0][1].model_dump(mode="json")
    else:
        counts: dict[str, int] = {"PASS": 0, "FAIL": 0, "SKIP": 0}
        for _, report in items:
            counts[verdict_label(report.result)] += 1
        payload = {
            "reports": [{"name": name, **report.model_dump(mode="json")} for name, report in items],
            "summary": {"total": len(items), **counts},
        }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
