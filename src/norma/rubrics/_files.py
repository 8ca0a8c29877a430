"""Rubric work on files, for the CLI and CI scripts: load with field paths, evaluate, blend (checks: ``_check``).

These wrap the compatible API with what a command line needs: pydantic errors turned into field paths
(``criteria[1].weight``) and :class:`~norma.errors.RubricError`\\ s that name the file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic

from norma._safety import json_lines
from norma.errors import RubricError
from norma.rubrics._blend import blend_rubrics
from norma.rubrics._errors import RubricJSONError
from norma.rubrics._evaluation import AggregatorChoice, evaluate_rubric
from norma.rubrics._inputs import validate_rubric_inputs
from norma.rubrics._loaders import _load, parse_rubric_text, read_rubric_file, unicode_checked
from norma.rubrics._models import Rubric
from norma.rubrics._validate import RubricIssue, validation_issues

__all__ = ["blend_rubric_files", "evaluate_rubric_file", "load_rubric_file"]


def load_rubric_file(path: str | os.PathLike[str]) -> Rubric:
    """Load a flexible rubric file; any problem is a :class:`RubricError` naming the file and field path."""
    file = Path(path)
    read_rubric_file(file)
    try:
        rubric = _load(file)  # JSON that is not a mapping: RubricError, like YAML
    except pydantic.ValidationError as exc:
        first = validation_issues(exc)[0]
        more = len(exc.errors()) - 1
        raise RubricError(
            first.message + (f" (and {more} more)" if more else ""),
            source=str(path),
            location=first.path or None,
            hint="run `norma rubric validate` on it to see every problem",
        ) from exc
    assert rubric is not None  # a file always yields a rubric or raises
    return rubric


def _read_data(path: Path) -> tuple[Any, list[int] | None]:
    """The file's data, and for JSON Lines the line of each record (blank lines are skipped)."""
    text = read_rubric_file(path)
    if path.suffix.lower() in (".yaml", ".yml"):
        return parse_rubric_text(text, path.suffix.lower(), source=str(path), fetch=False), None
    if path.suffix.lower() == ".jsonl":
        records, lines = [], []
        for number, line in enumerate(json_lines(text), start=1):
            if line.strip():
                try:
                    records.append(unicode_checked(json.loads(line), str(path), line=number))
                except json.JSONDecodeError as exc:
                    raise RubricError(
                        f"malformed JSON: {exc.msg}", source=str(path), line=number, column=exc.colno
                    ) from exc
                lines.append(number)
        return records, lines
    try:
        return unicode_checked(json.loads(text), str(path)), None
    except json.JSONDecodeError as exc:
        raise RubricJSONError(exc, source=str(path)) from exc


_POSITION = re.compile(r"\[(\d+)\]\.?")


def _at_lines(issues: list[RubricIssue], lines: list[int] | None) -> list[RubricIssue]:
    """Issues whose path starts with a record's index (``[3].reward``) as that record's line (``line 5, reward``)."""
    if lines is None:
        return issues
    placed = []
    for issue in issues:
        found = _POSITION.match(issue.path)
        if found is not None:
            rest = issue.path[found.end() :]
            path = f"line {lines[int(found.group(1))]}" + (f", {rest}" if rest else "")
            issue = RubricIssue(path=path, message=issue.message)
        placed.append(issue)
    return placed


def _report_inputs(
    issues: list[RubricIssue],
    source: str,
    strict_inputs: bool,
    on_issue: Callable[[RubricIssue], None] | None,
) -> None:
    if strict_inputs and issues:
        first = issues[0]
        more = len(issues) - 1
        raise RubricError(
            first.message + (f" (and {more} more)" if more else ""),
            source=source,
            location=first.path or None,
            hint="fix the input, or drop the strict check to evaluate it as synth-ai does",
        )
    if on_issue is not None:
        for issue in issues:
            on_issue(issue)


def evaluate_rubric_file(
    rubric_path: str | os.PathLike[str],
    *,
    events_path: str | os.PathLike[str] | None = None,
    outcome_path: str | os.PathLike[str] | None = None,
    enforce_required: bool = False,
    pass_threshold: float | None = None,
    aggregator: AggregatorChoice = None,
    strict_inputs: bool = False,
    on_issue: Callable[[RubricIssue], None] | None = None,
) -> dict[str, Any]:
    """Evaluate an events file (JSON list, JSON Lines or YAML list) or an outcome file (JSON/YAML mapping).

    Exactly one of ``events_path`` and ``outcome_path`` is given. Returns the evaluation result (key
    ``"reward"``) with the options of :func:`evaluate_events_against_rubric`.

    What the evaluation would silently skip or take as is (:func:`validate_rubric_inputs`: ids that match no
    criterion, rewards that are not numbers or outside [0, 1], criteria nothing judged) is passed to ``on_issue``
    one by one, in input order, before evaluating; with ``strict_inputs`` the first one raises instead. In a JSON
    Lines events file an event's path is its line (``line 5``, ``line 5, reward``), not its index.

    Raises:
        RubricError: an unreadable or invalid rubric, events that are not a list, an outcome that is not a mapping;
            with ``strict_inputs``, the first input issue (naming the input file and the entry's path).
    """
    if (events_path is None) == (outcome_path is None):
        raise RubricError("give exactly one of an events file and an outcome file")
    rubric = load_rubric_file(rubric_path)
    options: dict[str, Any] = {
        "enforce_required": enforce_required,
        "pass_threshold": pass_threshold,
        "aggregator": aggregator,
    }
    if events_path is not None:
        events, lines = _read_data(Path(events_path))
        if not isinstance(events, list):
            raise RubricError("events must be a list of {criterion_id, reward} objects", source=str(events_path))
        issues = _at_lines(validate_rubric_inputs(rubric, events=events), lines)
        _report_inputs(issues, str(events_path), strict_inputs, on_issue)
        return evaluate_rubric(rubric, events=events, **options)
    assert outcome_path is not None
    outcome, _ = _read_data(Path(outcome_path))
    if not isinstance(outcome, dict):
        raise RubricError("an outcome must be a mapping of criterion id to value", source=str(outcome_path))
    _report_inputs(validate_rubric_inputs(rubric, outcome=outcome), str(outcome_path), strict_inputs, on_issue)
    return evaluate_rubric(rubric, outcome=outcome, **options)


def blend_rubric_files(base_path: str | os.PathLike[str], override_path: str | os.PathLike[str]) -> Rubric:
    """Load two rubric files and blend them with :func:`blend_rubrics` (override wins)."""
    blended = blend_rubrics(load_rubric_file(base_path), load_rubric_file(override_path))
    assert blended is not None
    return blended
