"""Evaluating a rubric over many outcomes (or event lists) as a batch job (:class:`RubricJob`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from norma.batch._job import Worker, per_record
from norma.errors import RubricError
from norma.rubrics import evaluate_rubric, load_rubric_file, validate_rubric_inputs

__all__ = ["RubricJob"]


@dataclass(frozen=True)
class RubricJob:
    """Evaluate one rubric over records: each an outcome (``{criterion_id: value}``) or ``{"events": [...]}``.

    The result of a record is :func:`norma.rubrics.evaluate_rubric`'s, with ``issues`` (what the evaluation
    skipped or took as is, :func:`~norma.rubrics.validate_rubric_inputs`) when there are any; with ``strict_inputs``
    the first issue is the record's error instead.
    """

    rubric_path: str
    """The rubric file (JSON or YAML), at the same path on every worker."""
    enforce_required: bool = False
    pass_threshold: float | None = None
    aggregator: str | None = None
    strict_inputs: bool = False
    """The first input issue is the record's error (otherwise the issues are listed in its result)."""

    fork_safe = True
    uses_all_cores = False
    batch_size = 256
    record_seconds = 0.0002

    @classmethod
    def make(
        cls,
        rubric_path: str | os.PathLike[str],
        *,
        enforce_required: bool = False,
        pass_threshold: float | None = None,
        aggregator: str | None = None,
        strict_inputs: bool = False,
    ) -> RubricJob:
        """A job for the rubric at ``rubric_path``."""
        return cls(os.fspath(rubric_path), bool(enforce_required), pass_threshold, aggregator, bool(strict_inputs))

    def check(self) -> None:
        """Load the rubric once here."""
        load_rubric_file(self.rubric_path)

    def start(self) -> Worker:
        """Load the rubric, then evaluate each record."""
        rubric = load_rubric_file(self.rubric_path)
        options: dict[str, Any] = {
            "enforce_required": self.enforce_required,
            "pass_threshold": self.pass_threshold,
            "aggregator": self.aggregator,
        }

        def evaluate(record: Any) -> dict[str, Any]:
            if isinstance(record, dict) and set(record) == {"events"}:
                events = record["events"]
                if not isinstance(events, list):
                    raise RubricError("events must be a list of {criterion_id, reward} objects", location="events")
                issues = validate_rubric_inputs(rubric, events=events)
                inputs: dict[str, Any] = {"events": events}
            elif isinstance(record, dict):
                issues = validate_rubric_inputs(rubric, outcome=record)
                inputs = {"outcome": record}
            else:
                raise RubricError(
                    f'a record must be an outcome mapping or {{"events": [...]}}, not {type(record).__name__}'
                )
            if self.strict_inputs and issues:
                more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
                raise RubricError(issues[0].message + more, location=issues[0].path or None)
            result = evaluate_rubric(rubric, **inputs, **options)
            if issues:
                result["issues"] = [issue.model_dump() for issue in issues]
            return result

        return per_record(evaluate)
