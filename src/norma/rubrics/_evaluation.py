"""Turning per-criterion values into one number: events or an outcome, evaluated against a flexible rubric.

The compatible rules (synth-ai's): only the rubric's criteria count, a missing one counts 0.0 and still appears in
``per_criterion``; ``sum`` adds the values, ``weighted_sum`` is Σ v·w / Σ w (0.0 for an empty rubric), ``inherit``
behaves and is reported as ``weighted_sum``, ``custom`` gives ``None``. Values are not clamped.

norma's reading of the aggregations synth-ai 0.9.11 declared: ``mean`` is Σ v / n and ``weighted_mean`` is
Σ v·w / Σ w (each 0.0 for an empty rubric, each reported under its own name). synth-ai 0.9.11 accepts both names
but its aggregator only handles ``sum`` and ``weighted_sum``, so it reports 0.0 for them whatever the values: a bug
not copied (see docs/design/020-rubrics.md).

Opt-in extras (keyword-only, off by default so results stay identical):

* ``aggregator``: for ``custom`` rubrics, a built-in aggregator's name (``norma.rubrics._aggregators``) or a
  function that computes the value; the result then also has ``"aggregator"`` (the name, or the function's
  ``__name__``).
* ``pass_threshold``: adds ``"passed"``: the value reaches the threshold.
* ``enforce_required``: adds ``"failed_required"`` (the required criteria whose value is below
  ``required_threshold``, default ``pass_threshold`` or else 0.5) and ``"passed"``, false when any failed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from norma._trace import span
from norma.errors import RubricError
from norma.rubrics._aggregators import Aggregator, get_aggregator
from norma.rubrics._loaders import load_rubric
from norma.rubrics._models import Criterion, Rubric

__all__ = [
    "DEFAULT_REQUIRED_THRESHOLD",
    "AggregatorChoice",
    "CriterionScore",
    "RubricScore",
    "evaluate_events_against_rubric",
    "evaluate_outcome_against_rubric",
    "evaluate_rubric",
    "evaluate_values",
    "score_events_against_rubric",
    "score_outcome_against_rubric",
]

DEFAULT_REQUIRED_THRESHOLD = 0.5
"""Value a required criterion must reach under ``enforce_required`` when no threshold is given."""

AggregatorChoice = str | Aggregator | None
"""An aggregator for ``custom`` rubrics: a built-in name, a function, or ``None`` (value stays ``None``)."""


_DATA = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


def _absent(value: object) -> bool:
    """An optional key left out of the JSON (absent, not null) when it was not given."""
    return value is None


class CriterionScore(BaseModel):
    """One criterion of a :class:`RubricScore`: its value, weight and whether it is required."""

    model_config = _DATA
    reward: float | None
    """The criterion's value (0.0 when the input gave none); ``score`` in the older functions' mappings."""
    weight: float
    required: bool

    def to_dict(self, key: str = "reward") -> dict[str, Any]:
        """``{key: value, "weight", "required"}``: the criterion's entry of :meth:`RubricScore.to_dict`."""
        return {key: self.reward, "weight": self.weight, "required": self.required}


class RubricScore(BaseModel):
    """A rubric evaluated, typed: the mapping every evaluation returns (:func:`evaluate_values`, whose value is under
    a key its caller names: ``reward``, ``score`` for the older functions) read with :meth:`from_dict` and written back
    with :meth:`to_dict`; and the JSON of :func:`evaluate_rubric`: what ``norma rubric eval --format json``, the
    service's ``POST /v1/rubrics/evaluate`` and the MCP tool ``score_rubric`` answer. The optional keys are absent
    unless their option was used."""

    model_config = _DATA
    aggregation: str
    """weighted_sum, weighted_mean, custom..."""
    reward: float | None
    """The rubric's value (None: a ``custom`` rubric without an aggregator); ``score`` in the older functions'
    mappings."""
    per_criterion: dict[str, CriterionScore]
    """Each criterion of the rubric, by id, in the rubric's order."""
    aggregator: str | None = Field(default=None, exclude_if=_absent)
    """The aggregator of a ``custom`` rubric."""
    failed_required: list[str] | None = Field(default=None, exclude_if=_absent)
    """With ``enforce_required``: the required criteria below the threshold."""
    passed: bool | None = Field(default=None, exclude_if=_absent)
    """The verdict, when one was asked for (``pass_threshold``, ``enforce_required``)."""

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], key: str = "reward") -> RubricScore:
        """An evaluation's mapping, typed (validated): its value, and each criterion's, read under ``key``
        (``score`` for :func:`score_events_against_rubric` and :func:`score_outcome_against_rubric`).
        ``RubricScore.from_dict(d, key).to_dict(key) == d``.

        Raises:
            pydantic.ValidationError: a mapping that is not an evaluation's.
        """
        if key == "reward":
            return cls.model_validate(data)

        def renamed(part: Any) -> Any:
            return {"reward" if k == key else k: v for k, v in part.items()} if isinstance(part, Mapping) else part

        typed = renamed(data)
        if isinstance(typed, dict) and isinstance(typed.get("per_criterion"), Mapping):
            typed["per_criterion"] = {cid: renamed(entry) for cid, entry in typed["per_criterion"].items()}
        return cls.model_validate(typed)

    def to_dict(self, key: str = "reward") -> dict[str, Any]:
        """The mapping the evaluation functions return, its value under ``key`` in the rubric and in each criterion
        (as :func:`evaluate_values` writes it); with ``reward``, this model's JSON."""
        data: dict[str, Any] = {
            "aggregation": self.aggregation,
            key: self.reward,
            "per_criterion": {cid: criterion.to_dict(key) for cid, criterion in self.per_criterion.items()},
        }
        if self.aggregator is not None:
            data["aggregator"] = self.aggregator
        if self.failed_required is not None:
            data["failed_required"] = list(self.failed_required)
        if self.passed is not None:
            data["passed"] = self.passed
        return data


def _as_float(value: Any) -> float | None:
    try:
        return float(value)
    except Exception:  # anything float() refuses is skipped, as the compatible scorer does
        return None


def _check_threshold(name: str, value: float | None) -> None:
    if value is not None and (isinstance(value, bool) or not math.isfinite(value)):
        raise RubricError(f"{name} must be a finite number, got {value!r}")


def _resolve(aggregator: AggregatorChoice) -> tuple[str, Aggregator] | None:
    if aggregator is None:
        return None
    if isinstance(aggregator, str):
        return aggregator, get_aggregator(aggregator)
    return getattr(aggregator, "__name__", "custom"), aggregator


def evaluate_values(
    criteria: Iterable[Criterion],
    values: Mapping[str, float],
    aggregation: str,
    *,
    key: str = "reward",
    enforce_required: bool = False,
    pass_threshold: float | None = None,
    required_threshold: float | None = None,
    aggregator: AggregatorChoice = None,
) -> dict[str, Any]:
    """Combine ``values`` (criterion id -> value) over ``criteria`` with ``aggregation``.

    Returns:
        ``{"aggregation", key, "per_criterion": {id: {key, "weight", "required"}}}``, plus ``"aggregator"``,
        ``"passed"`` and ``"failed_required"`` when the matching option is used (see the module documentation):
        :meth:`RubricScore.to_dict` with ``key`` (``RubricScore.from_dict(result, key)`` reads it typed).

    Raises:
        RubricError: an unknown aggregator name, or a threshold that is not a finite number.
    """
    with span("norma.rubric") as traced:
        result = _combine(
            criteria, values, aggregation, key, enforce_required, pass_threshold, required_threshold, aggregator
        )
        if traced.recording:
            reward = result[key]
            traced.set(
                {
                    "norma.rubric.aggregation": result["aggregation"],
                    "norma.rubric.criteria.count": len(result["per_criterion"]),
                    "norma.rubric.reward": float(reward) if isinstance(reward, int | float) else None,
                    "norma.rubric.passed": result.get("passed"),
                }
            )
    return result


def _combine(
    criteria: Iterable[Criterion],
    values: Mapping[str, float],
    aggregation: str,
    key: str,
    enforce_required: bool,
    pass_threshold: float | None,
    required_threshold: float | None,
    aggregator: AggregatorChoice,
) -> dict[str, Any]:
    _check_threshold("pass_threshold", pass_threshold)
    _check_threshold("required_threshold", required_threshold)
    chosen = _resolve(aggregator)
    if aggregation == "inherit":
        aggregation = "weighted_sum"
    per_criterion: dict[str, dict[str, Any]] = {}
    ordered: list[tuple[Criterion, float]] = []
    total = 0.0
    total_weight = 0.0
    for criterion in criteria:
        value = values.get(criterion.id, 0.0)
        per_criterion[criterion.id] = {key: value, "weight": criterion.weight, "required": criterion.required}
        ordered.append((criterion, value))
        if aggregation in ("sum", "mean"):
            total += value
        elif aggregation in ("weighted_sum", "weighted_mean"):
            total += value * criterion.weight
            total_weight += criterion.weight
    result_value: float | None = None
    if aggregation == "sum":
        result_value = total
    elif aggregation == "mean":
        result_value = total / len(ordered) if ordered else total
    elif aggregation in ("weighted_sum", "weighted_mean"):
        result_value = total / total_weight if total_weight > 0 else total
    result: dict[str, Any] = {"aggregation": aggregation, key: result_value, "per_criterion": per_criterion}
    if aggregation == "custom" and chosen is not None:
        name, fn = chosen
        result[key] = float(fn([v for _, v in ordered], [c.weight for c, _ in ordered]))
        result["aggregator"] = name
    return _verdict(result, ordered, key, enforce_required, pass_threshold, required_threshold)


def _verdict(
    result: dict[str, Any],
    ordered: list[tuple[Criterion, float]],
    key: str,
    enforce_required: bool,
    pass_threshold: float | None,
    required_threshold: float | None,
) -> dict[str, Any]:
    if not enforce_required and pass_threshold is None:
        return result
    value = result[key]
    passed = pass_threshold is None or (value is not None and value >= pass_threshold)
    if enforce_required:
        bar = required_threshold if required_threshold is not None else pass_threshold
        bar = DEFAULT_REQUIRED_THRESHOLD if bar is None else bar
        failed = [criterion.id for criterion, v in ordered if criterion.required and not v >= bar]
        result["failed_required"] = failed
        passed = passed and not failed
    result["passed"] = passed
    return result


def _event_id(event: dict[str, Any]) -> Any:
    """The criterion an event is about: the first truthy of ``criterion_id``, ``id`` and ``criterion``."""
    return event.get("criterion_id") or event.get("id") or event.get("criterion")


def _outcome_values(outcome: dict[str, Any]) -> tuple[str, dict[Any, Any]]:
    """The ``{id: value}`` entries of an outcome and their path prefix: its ``"criteria"`` mapping, else itself."""
    nested = outcome.get("criteria")
    return ("criteria.", nested) if isinstance(nested, dict) else ("", outcome)


def _from_events(events: Iterable[Any] | None, key: str) -> dict[str, float]:
    values: dict[str, float] = {}
    for event in events or []:
        if not isinstance(event, dict):
            continue
        cid = _event_id(event)
        value = _as_float(event.get(key))
        if cid and value is not None:
            values[str(cid)] = value
    return values


def _from_outcome(outcome: Any) -> dict[str, float]:
    values: dict[str, float] = {}
    if isinstance(outcome, dict):
        _, candidates = _outcome_values(outcome)
        for cid, raw in candidates.items():
            value = _as_float(raw)
            if value is not None:
                values[str(cid)] = value
    return values


def _run(values: Mapping[str, float], rubric: Rubric | None, key: str, options: dict[str, Any]) -> dict[str, Any]:
    if rubric is None:
        return evaluate_values([], {}, "none", key=key, **options)
    return evaluate_values(rubric.criteria, values, rubric.aggregation, key=key, **options)


def evaluate_events_against_rubric(
    events: Iterable[Any] | None,
    rubric: Rubric | None,
    *,
    enforce_required: bool = False,
    pass_threshold: float | None = None,
    required_threshold: float | None = None,
    aggregator: AggregatorChoice = None,
) -> dict[str, Any]:
    """Evaluate judgement events (``{"criterion_id"|"id"|"criterion": ..., "reward": ...}``) against ``rubric``.

    Non-dict events and events without an id or a number are skipped; the last event for an id wins. The result
    key is ``"reward"``; without a rubric the aggregation is ``"none"`` and the reward ``None``.
    """
    options = _options(enforce_required, pass_threshold, required_threshold, aggregator)
    return _run(_from_events(events, "reward") if rubric is not None else {}, rubric, "reward", options)


def evaluate_outcome_against_rubric(
    outcome: Any,
    rubric: Rubric | None,
    *,
    enforce_required: bool = False,
    pass_threshold: float | None = None,
    required_threshold: float | None = None,
    aggregator: AggregatorChoice = None,
) -> dict[str, Any]:
    """Evaluate an outcome (``{id: value}``, or ``{"criteria": {id: value}}``) against ``rubric``; key ``"reward"``."""
    options = _options(enforce_required, pass_threshold, required_threshold, aggregator)
    return _run(_from_outcome(outcome) if rubric is not None else {}, rubric, "reward", options)


def score_events_against_rubric(
    events: Iterable[Any] | None,
    rubric: Rubric | None,
    *,
    enforce_required: bool = False,
    pass_threshold: float | None = None,
    required_threshold: float | None = None,
    aggregator: AggregatorChoice = None,
) -> dict[str, Any]:
    """The older name of :func:`evaluate_events_against_rubric`: reads and reports ``"score"`` instead."""
    options = _options(enforce_required, pass_threshold, required_threshold, aggregator)
    return _run(_from_events(events, "score") if rubric is not None else {}, rubric, "score", options)


def score_outcome_against_rubric(
    outcome: Any,
    rubric: Rubric | None,
    *,
    enforce_required: bool = False,
    pass_threshold: float | None = None,
    required_threshold: float | None = None,
    aggregator: AggregatorChoice = None,
) -> dict[str, Any]:
    """The older name of :func:`evaluate_outcome_against_rubric`: reports ``"score"`` instead of ``"reward"``."""
    options = _options(enforce_required, pass_threshold, required_threshold, aggregator)
    return _run(_from_outcome(outcome) if rubric is not None else {}, rubric, "score", options)


def evaluate_rubric(
    rubric: Rubric | Mapping[str, Any],
    *,
    events: Iterable[Any] | None = None,
    outcome: Mapping[str, Any] | None = None,
    enforce_required: bool = False,
    pass_threshold: float | None = None,
    aggregator: AggregatorChoice = None,
) -> dict[str, Any]:
    """Evaluate ``events`` or ``outcome`` (exactly one) against ``rubric``: what ``norma rubric eval`` and the
    service's ``POST /v1/rubrics/evaluate`` both answer.

    Args:
        rubric: a loaded rubric, or one as a mapping (validated with :func:`load_rubric`; never a path or text).
        events: judgement events, as for :func:`evaluate_events_against_rubric`.
        outcome: ``{criterion_id: value}``, as for :func:`evaluate_outcome_against_rubric`.
        enforce_required: fail when a required criterion is below the threshold.
        pass_threshold: give a ``"passed"`` verdict at this reward.
        aggregator: the aggregator of a ``custom`` rubric.

    Raises:
        RubricError: neither or both of ``events`` and ``outcome`` (``location="events"``), the backend judge
            format, an unknown aggregator or a threshold that is not a finite number.
        pydantic.ValidationError: a mapping that does not fit the :class:`Rubric` model.
    """
    if (events is None) == (outcome is None):
        raise RubricError("give exactly one of events and outcome", location="events")
    loaded = rubric if isinstance(rubric, Rubric) else load_rubric(rubric)
    options: dict[str, Any] = {
        "enforce_required": enforce_required,
        "pass_threshold": pass_threshold,
        "aggregator": aggregator,
    }
    if events is not None:
        return evaluate_events_against_rubric(events, loaded, **options)
    return evaluate_outcome_against_rubric(outcome, loaded, **options)


def _options(
    enforce_required: bool,
    pass_threshold: float | None,
    required_threshold: float | None,
    aggregator: AggregatorChoice,
) -> dict[str, Any]:
    return {
        "enforce_required": enforce_required,
        "pass_threshold": pass_threshold,
        "required_threshold": required_threshold,
        "aggregator": aggregator,
    }
