"""Asserting that a rubric reward reaches a bar (:func:`norma.rubrics.evaluate_rubric`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from norma.testing._failures import RubricAssertionError

if TYPE_CHECKING:
    from norma.rubrics import AggregatorChoice, Rubric

__all__ = ["assert_rubric_reward"]


def assert_rubric_reward(
    rubric: Rubric | Mapping[str, Any] | str | os.PathLike[str],
    *,
    events: Iterable[Any] | None = None,
    outcome: Mapping[str, Any] | None = None,
    at_least: float,
    enforce_required: bool = False,
    aggregator: AggregatorChoice = None,
) -> dict[str, Any]:
    """Assert that the reward of ``events`` or ``outcome`` (exactly one) against ``rubric`` is at least ``at_least``.

    Args:
        rubric: a :class:`~norma.rubrics.Rubric`, a mapping of one, or a rubric file (JSON or YAML).
        events: judgement events (``{"criterion_id": ..., "reward": ...}``).
        outcome: ``{criterion_id: value}`` or ``{"criteria": {...}}``.
        at_least: the lowest reward that passes.
        enforce_required: also fail when a required criterion is below ``at_least``.
        aggregator: the aggregator of a ``custom`` rubric: a built-in's name (``"min"``, ``"max"``,
            ``"geometric_mean"``, ``"harmonic_mean"``) or a function ``fn(values, weights) -> float``.

    Returns:
        The evaluation (``"reward"``, ``"per_criterion"``, ``"passed"``...), as :func:`~norma.rubrics.evaluate_rubric`.

    Raises:
        RubricAssertionError: the reward is below ``at_least`` (or a required criterion is, with
            ``enforce_required``); the message lists every criterion with its value, weight and whether it is
            required, and what the evaluation skipped (ids that match no criterion, criteria nothing judged).
        RubricError: an unreadable or invalid rubric (naming the field), neither or both of ``events`` and
            ``outcome``, a ``custom`` rubric without an aggregator.
    """
    __tracebackhide__ = True
    from norma.errors import RubricError
    from norma.rubrics import evaluate_rubric, validate_rubric_inputs

    loaded = _load(rubric)
    events = None if events is None else list(events)
    result = evaluate_rubric(
        loaded,
        events=events,
        outcome=outcome,
        enforce_required=enforce_required,
        pass_threshold=at_least,
        aggregator=aggregator,
    )
    reward = result["reward"]
    if reward is None:
        raise RubricError(
            f"a {loaded.aggregation} rubric gives no reward without an aggregator",
            hint="pass aggregator='min' (or another built-in's name, or a function)",
        )
    if result["passed"]:
        return result
    failed_required = result.get("failed_required", [])
    summary = f"rubric reward {reward:.4g} < {at_least:g} ({result['aggregation']} of {len(loaded.criteria)} criteria)"
    if reward >= at_least:
        summary = f"rubric reward {reward:.4g} >= {at_least:g}, but required criteria are below it: " + ", ".join(
            failed_required
        )
    details = []
    for cid, entry in result["per_criterion"].items():
        marks = ["required"] if entry["required"] else []
        if entry["reward"] < at_least:
            marks.append(f"below {at_least:g}")
        details.append(f"{cid} {entry['reward']:.4g} weight {entry['weight']:g}" + "".join(f", {m}" for m in marks))
    for issue in validate_rubric_inputs(loaded, events=events, outcome=None if outcome is None else dict(outcome)):
        details.append(f"input {issue.path or '(all)'}: {issue.message}")
    raise RubricAssertionError(summary, details, result)


def _load(rubric: Rubric | Mapping[str, Any] | str | os.PathLike[str]) -> Rubric:
    """The rubric, from a file or a mapping; what does not fit the model is a :class:`RubricError` naming the field."""
    import pydantic

    from norma.errors import RubricError
    from norma.rubrics import Rubric, load_rubric, load_rubric_file, validation_issues

    if isinstance(rubric, Rubric):
        return rubric
    if isinstance(rubric, str | os.PathLike):
        return load_rubric_file(rubric)
    try:
        loaded = load_rubric(dict(rubric))
    except pydantic.ValidationError as exc:
        first = validation_issues(exc)[0]
        raise RubricError(
            first.message, source="<dict>", location=first.path or None, hint="norma.rubrics.validate_rubric lists all"
        ) from None
    assert loaded is not None  # a mapping gives a rubric or raises
    return loaded
