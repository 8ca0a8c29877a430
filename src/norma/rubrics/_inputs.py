"""What an evaluation silently skips or takes as is: events and outcome entries worth a warning.

The compatible evaluation (synth-ai's) never complains: an event or outcome id that matches no criterion is
ignored, a reward that is not a number is skipped, a criterion nothing judged counts 0.0 and a reward outside
[0, 1] is used unclamped. :func:`validate_rubric_inputs` lists each of those, so a command line can warn about them
(``norma rubric eval``) or refuse them (``--strict-inputs``); the evaluation itself stays silent.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from norma.rubrics._evaluation import _as_float, _event_id, _from_events, _from_outcome, _outcome_values
from norma.rubrics._models import Rubric
from norma.rubrics._validate import RubricIssue

__all__ = ["validate_rubric_inputs"]

_OLD_KEY = "score"


def _value_issue(path: str, holder: dict[Any, Any], field: Any, key: str) -> RubricIssue | None:
    if field not in holder:
        message = "missing"
        if key == "reward" and _OLD_KEY in holder:
            message += f" (the event has '{_OLD_KEY}', the synth-ai 0.2.x key: rename it to 'reward')"
        return RubricIssue(path=path, message=message)
    raw = holder[field]
    value = _as_float(raw)
    if value is None:
        return RubricIssue(path=path, message=f"{raw!r} is not a number")
    if not 0.0 <= value <= 1.0:
        return RubricIssue(path=path, message=f"{value:g} is outside [0, 1]")
    return None


def _unknown_id(path: str, cid: Any, ids: set[str]) -> RubricIssue:
    message = f"criterion id {str(cid)!r} matches no criterion"
    close = difflib.get_close_matches(str(cid), sorted(ids), n=1)
    if close:
        message += f" (did you mean {close[0]!r}?)"
    return RubricIssue(path=path, message=message)


def _event_issues(events: Iterable[Any], ids: set[str], key: str) -> list[RubricIssue]:
    issues: list[RubricIssue] = []
    for index, event in enumerate(events):
        where = f"[{index}]"
        if not isinstance(event, dict):
            issues.append(RubricIssue(path=where, message="not an object, so it matches no criterion"))
            continue
        cid = _event_id(event)
        if not cid:
            issues.append(RubricIssue(path=where, message="no criterion id (criterion_id, id or criterion)"))
            continue
        if str(cid) not in ids:
            issues.append(_unknown_id(where, cid, ids))
            continue
        issue = _value_issue(f"{where}.{key}", event, key, key)
        if issue is not None:
            issues.append(issue)
    return issues


def _outcome_issues(outcome: dict[str, Any], ids: set[str], key: str) -> list[RubricIssue]:
    prefix, entries = _outcome_values(outcome)
    issues: list[RubricIssue] = []
    for cid in entries:
        where = f"{prefix}{cid}"
        if str(cid) not in ids:
            issues.append(_unknown_id(where, cid, ids))
            continue
        issue = _value_issue(where, entries, cid, key)
        if issue is not None:
            issues.append(issue)
    return issues


def validate_rubric_inputs(
    rubric: Rubric,
    *,
    events: Iterable[Any] | None = None,
    outcome: dict[str, Any] | None = None,
    key: str = "reward",
) -> list[RubricIssue]:
    """What an evaluation of ``events`` or ``outcome`` against ``rubric`` would skip or take as is, in input order.

    Each issue is a path in the input (``[4]``, ``[2].reward`` for events; ``criteria.docs`` or ``docs`` for an
    outcome) and a message: an id that matches no criterion (with the nearest criterion id when one is close;
    for events also: not an object, or no id), a value that is missing or not a number (an event with only the
    0.2.x ``score`` key says so), a value outside [0, 1]. Then, with the path ``""`` (the input as a whole), each
    criterion of the rubric that no entry gave a number, in the rubric's order: "criterion 'docs' not judged: it
    counts 0". The evaluation functions do not call this: they stay as silent as synth-ai's.

    Args:
        rubric: the rubric the input is evaluated against.
        events: judgement events, as for :func:`evaluate_events_against_rubric`.
        outcome: ``{criterion_id: value}``, or ``{"criteria": {...}}``, as for
            :func:`evaluate_outcome_against_rubric`.
        key: the value's key in events (``"reward"``; ``"score"`` for the older ``score_*`` functions).
    """
    ids = {criterion.id for criterion in rubric.criteria}
    issues: list[RubricIssue] = []
    judged: set[str] = set()
    if events is not None:
        events = list(events)
        issues.extend(_event_issues(events, ids, key))
        judged.update(_from_events(events, key))
    if outcome is not None:
        issues.extend(_outcome_issues(outcome, ids, key))
        judged.update(_from_outcome(outcome))
    for criterion in rubric.criteria:
        if criterion.id not in judged:
            issues.append(RubricIssue(path="", message=f"criterion {criterion.id!r} not judged: it counts 0"))
    return issues
