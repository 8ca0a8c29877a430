"""Rubric criteria judged by an LLM: what ``norma rubric judge`` does.

Criteria that the events or outcome give a reward keep it; every other criterion is scored by a
:class:`norma.llm.Judge` from its description (and the rubric's goal) with the whole input as the evidence; then
the reward is :func:`evaluate_values`, the arithmetic of every rubric evaluation. A rubric may also be in synth-ai's
backend judge format (``{"event": [...], "outcome": [...]}``, criteria with ``id``, ``description``, ``weight``
and ``scale``): its ``event`` criteria are judged on events, its ``outcome`` criteria on an outcome, combined by
``weighted_sum``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pydantic

from norma.errors import RubricError
from norma.rubrics._evaluation import AggregatorChoice, _from_events, _from_outcome, evaluate_values
from norma.rubrics._files import _read_data, load_rubric_file
from norma.rubrics._loaders import _is_backend_judge, parse_rubric_text, read_rubric_file
from norma.rubrics._models import Criterion, Rubric
from norma.rubrics._validate import validation_issues

if TYPE_CHECKING:
    from norma.llm import Judge

__all__ = ["BACKEND_JUDGE_SCALES", "backend_judge_rubric", "judge_rubric", "judge_rubric_file"]

BACKEND_JUDGE_SCALES = ("bounded", "unbounded")
"""The ``scale`` values of synth-ai's backend judge criteria (the judge scores both on [0, 1])."""

Section = Literal["event", "outcome"]


def backend_judge_rubric(data: Mapping[str, Any], section: Section, *, source: str | None = None) -> Rubric:
    """The ``event`` or ``outcome`` criteria of a backend judge rubric as a ``weighted_sum`` :class:`Rubric`.

    Each criterion needs an ``id`` and a ``description``; ``weight`` defaults to 1 and ``scale``, when given, is
    ``bounded`` or ``unbounded``. Raises :class:`RubricError` naming the field (``outcome[2].scale``).
    """
    items = data.get(section)
    if not isinstance(items, list):
        raise RubricError(f"'{section}' must be a list of criteria", source=source, location=section)
    if not items:
        other = "--events" if section == "event" else "--outcome"
        raise RubricError(
            f"the backend judge rubric has no '{section}' criteria",
            source=source,
            location=section,
            hint=f"'{section}' criteria are judged with {other}",
        )
    criteria = []
    for index, item in enumerate(items):
        where = f"{section}[{index}]"
        if not isinstance(item, Mapping):
            raise RubricError("a criterion must be an object", source=source, location=where)
        scale = item.get("scale")
        if scale is not None and scale not in BACKEND_JUDGE_SCALES:
            raise RubricError(
                f"scale is {scale!r}, not 'bounded' or 'unbounded'", source=source, location=f"{where}.scale"
            )
        fields = {key: item[key] for key in ("id", "description", "weight") if key in item}
        try:
            criteria.append(Criterion.model_validate(fields))
        except pydantic.ValidationError as exc:
            issue = validation_issues(exc)[0]
            raise RubricError(issue.message, source=source, location=f"{where}.{issue.path}".rstrip(".")) from None
    try:
        return Rubric(version="backend-judge", criteria=criteria, aggregation="weighted_sum")
    except pydantic.ValidationError as exc:
        raise RubricError(validation_issues(exc)[0].message, source=source, location=section) from None


def _criterion_text(criterion: Criterion, rubric: Rubric) -> str:
    text = criterion.description.strip() or criterion.id
    return f"{text}\n(The goal of the whole rubric: {rubric.goal_text.strip()})" if rubric.goal_text else text


def judge_rubric(
    rubric: Rubric,
    judge: Judge,
    *,
    events: Iterable[Any] | None = None,
    outcome: Mapping[str, Any] | None = None,
    votes: int = 1,
    enforce_required: bool = False,
    pass_threshold: float | None = None,
    aggregator: AggregatorChoice = None,
) -> dict[str, Any]:
    """Score the criteria that ``events`` or ``outcome`` (exactly one) give no reward with ``judge``, then evaluate.

    Rewards given are read as :func:`evaluate_rubric` reads them (events: ``criterion_id``/``id``/``criterion`` and
    ``reward``; an outcome: ``{id: value}`` or ``{"criteria": {...}}``). Each other criterion is judged ``votes``
    times on the whole input (as indented JSON, the evidence), its reward being the verdict's mean score.

    Returns:
        :func:`evaluate_values`'s result (``reward``, ``per_criterion``, ``passed``...), plus ``given`` (the ids
        whose reward came from the input), ``judged`` (id -> :meth:`norma.llm.Verdict.to_dict`), ``model`` and
        ``model_calls`` (votes not read from the judge's cache).

    Raises:
        RubricError: neither or both of ``events`` and ``outcome``.
        JudgeError: a reply that is not a verdict; ``BackendError``: the model did not answer.
    """
    if (events is None) == (outcome is None):
        raise RubricError("give exactly one of events and outcome", location="events")
    data: Any = list(events) if events is not None else dict(outcome or {})
    given = _from_events(data, "reward") if events is not None else _from_outcome(data)
    evidence = json.dumps(data, ensure_ascii=False, indent=2, default=str)
    values = {criterion.id: given[criterion.id] for criterion in rubric.criteria if criterion.id in given}
    judged: dict[str, dict[str, Any]] = {}
    calls = 0
    for criterion in rubric.criteria:
        if criterion.id in values:
            continue
        verdict = judge.judge(evidence, _criterion_text(criterion, rubric), votes=votes)
        values[criterion.id] = verdict.score
        judged[criterion.id] = verdict.to_dict()
        calls += len(verdict.votes) - verdict.cached
    result = evaluate_values(
        rubric.criteria,
        values,
        rubric.aggregation,
        enforce_required=enforce_required,
        pass_threshold=pass_threshold,
        aggregator=aggregator,
    )
    result["given"] = [criterion.id for criterion in rubric.criteria if criterion.id not in judged]
    result["judged"] = judged
    result["model"] = judge.model
    result["model_calls"] = calls
    return result


def judge_rubric_file(
    rubric_path: str | os.PathLike[str],
    judge: Judge,
    *,
    events_path: str | os.PathLike[str] | None = None,
    outcome_path: str | os.PathLike[str] | None = None,
    votes: int = 1,
    enforce_required: bool = False,
    pass_threshold: float | None = None,
    aggregator: AggregatorChoice = None,
) -> dict[str, Any]:
    """:func:`judge_rubric` on files: a task rubric or a backend judge rubric, and an events file (JSON list, JSON
    Lines or YAML list) or an outcome file (JSON or YAML mapping). A backend judge rubric gives its ``event``
    criteria with ``events_path``, its ``outcome`` criteria with ``outcome_path``. The result also says
    ``rubric_format`` (``task`` or ``backend_judge``).

    Raises:
        RubricError: an unreadable or invalid rubric or input file (naming the file and field).
    """
    if (events_path is None) == (outcome_path is None):
        raise RubricError("give exactly one of an events file and an outcome file")
    path = Path(rubric_path)
    data = parse_rubric_text(read_rubric_file(path), path.suffix.lower(), source=str(path), fetch=False)
    backend = _is_backend_judge(data)
    section: Section = "event" if events_path is not None else "outcome"
    rubric = backend_judge_rubric(data, section, source=str(path)) if backend else load_rubric_file(path)
    options: dict[str, Any] = {
        "votes": votes,
        "enforce_required": enforce_required,
        "pass_threshold": pass_threshold,
        "aggregator": aggregator,
    }
    if events_path is not None:
        events, _ = _read_data(Path(events_path))
        if not isinstance(events, list):
            raise RubricError("events must be a list", source=str(events_path))
        result = judge_rubric(rubric, judge, events=events, **options)
    else:
        assert outcome_path is not None
        outcome, _ = _read_data(Path(outcome_path))
        if not isinstance(outcome, dict):
            raise RubricError("an outcome must be a mapping", source=str(outcome_path))
        result = judge_rubric(rubric, judge, outcome=outcome, **options)
    result["rubric_format"] = "backend_judge" if backend else "task"
    return result
