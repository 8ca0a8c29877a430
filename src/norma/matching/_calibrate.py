"""A tenant's gate calibrated from labelled messages: the similarity threshold that meets a precision or recall
target (or the best F1) on messages whose applicable rules are known.

Every message is matched once without a gate; a rule returned for a message is a true positive when it is among
the message's expected rules (a message may expect 0..n rules) and a false positive otherwise; an expected rule
not returned at the threshold is a false negative (micro-averaged over the messages). The threshold is one of the
observed similarities, so the choice is exact and deterministic:

* ``target_precision=P``: the lowest threshold whose precision is >= P (the most recall at that precision);
* ``target_recall=R``: the highest threshold whose recall is >= R (the most precision at that recall);
* neither: the threshold of the best F1 (ties: the higher threshold).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable

import numpy as np

from norma.errors import InvalidInputError
from norma.matching._config import MatchConfig
from norma.matching._gate import AppliedGate
from norma.matching._labelled import LabelledMessage, check_labelled
from norma.matching._matcher import RuleMatcher
from norma.matching._models import SessionState
from norma.matching._synthetic import NearMiss

__all__ = ["calibrate_gate"]


def _target(value: float | None, name: str) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 < value <= 1:
        raise InvalidInputError(f"{name} must be a number in (0, 1], not {value!r}", location=name)
    return float(value)


def _reaching(values: np.ndarray, goal: float, name: str, advice: str) -> list[int]:
    """The indices whose ``values`` reach ``goal``; InvalidInputError when none does."""
    ok = np.flatnonzero(values >= goal - 1e-12)
    if not len(ok):
        raise InvalidInputError(
            f"no threshold reaches {name} {goal:g} on these messages (best {name} {float(values.max()):.3f})",
            hint=f"lower --target-{name}, or {advice}",
        )
    return [int(i) for i in ok]


def calibrate_gate(
    matcher: RuleMatcher,
    labelled: Iterable[LabelledMessage | tuple[str, Collection[str]]],
    *,
    target_precision: float | None = None,
    target_recall: float | None = None,
    config: MatchConfig | None = None,
    source: str = "labelled messages",
    rules_version: int | None = None,
    near_misses: Iterable[NearMiss] = (),
) -> AppliedGate:
    """The ``calibrated`` similarity gate for ``matcher``'s rules from ``labelled`` messages
    (:class:`LabelledMessage`, from :func:`load_labelled`, or ``(message, expected rule ids)`` pairs; see the module
    docstring). A message with a scenario or step is matched in that scenario or step. ``near_misses``
    (:func:`synthesize_labelled`): messages one rule must not apply to; that rule returned for one is a false
    positive, any other rule returned is ignored. ``rules_version`` (default
    the matcher's own version) is recorded in the terms: pass the tenant's store version. Set it with
    :meth:`RuleMatcher.set_calibration`, or store it for a tenant
    (``store.save_gate``) so that every matcher of the tenant uses it.

    Raises InvalidInputError for no messages, an unknown rule id, both targets, or a target no threshold reaches.
    """
    precision_goal = _target(target_precision, "target_precision")
    recall_goal = _target(target_recall, "target_recall")
    if precision_goal is not None and recall_goal is not None:
        raise InvalidInputError("give a target precision or a target recall, not both")
    items = [
        item if isinstance(item, LabelledMessage) else LabelledMessage(message=item[0], expected=tuple(item[1]))
        for item in labelled
    ]
    misses = list(near_misses)
    if not items and not misses:
        raise InvalidInputError("no labelled messages to calibrate on", hint="give at least one message")
    if items:
        check_labelled(items, matcher.rules, source=source)
    unknown = sorted({m.rule_id for m in misses} - {rule.id for rule in matcher.rules})
    if unknown:
        raise InvalidInputError(f"near misses name unknown rule(s) {', '.join(map(repr, unknown))}")
    cfg = (config or matcher.config).with_(threshold=None)
    texts = [item.message for item in items] + [m.message for m in misses]
    sessions = [SessionState(active_scenario_id=i.scenario, active_step_id=i.step) for i in items] + [
        SessionState(active_scenario_id=m.scenario, active_step_id=m.step) for m in misses
    ]
    results = matcher.match_many(texts, sessions, config=cfg)
    similarities: list[float] = []
    correct: list[bool] = []
    for item, result in zip(items, results, strict=False):
        for match in result:
            similarities.append(match.similarity_score)
            correct.append(match.rule.id in item.expected)
    for miss, result in zip(misses, results[len(items) :], strict=True):
        for match in result:
            if match.rule.id == miss.rule_id:  # the one rule a near miss says something about
                similarities.append(match.similarity_score)
                correct.append(False)
    expected_total = sum(len(item.expected) for item in items)
    if not similarities:
        raise InvalidInputError("no message matched any rule, even without a gate", hint="check the rulebook")
    order = np.lexsort((np.array(correct), -np.array(similarities)))
    sims = np.array(similarities)[order]
    hits = np.array(correct)[order]
    tp = np.cumsum(hits)
    fp = np.cumsum(~hits)
    last = np.r_[sims[1:] != sims[:-1], True]  # a threshold admits every candidate of its similarity
    thresholds, tp, fp = sims[last], tp[last], fp[last]
    precision = tp / (tp + fp)
    recall = tp / expected_total if expected_total else np.ones_like(precision)
    f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    if precision_goal is not None:  # the lowest threshold (thresholds fall with the index) that reaches it
        pick = _reaching(precision, precision_goal, "precision", "improve the rules (norma rules eval / doctor)")[-1]
        target = f"precision >= {precision_goal:g}"
    elif recall_goal is not None:  # the highest threshold that reaches it
        pick = _reaching(recall, recall_goal, "recall", "add examples to the rules that are missed (norma rules eval)")[
            0
        ]
        target = f"recall >= {recall_goal:g}"
    else:
        best = float(f1.max())
        pick, target = int(np.flatnonzero(f1 >= best - 1e-12)[0]), "best F1"
    return AppliedGate(
        "calibrated",
        "similarity",
        float(thresholds[pick]),
        {
            "target": target,
            "messages": len(items),
            "near_misses": len(misses),
            "precision": round(float(precision[pick]), 6),
            "recall": round(float(recall[pick]), 6),
            "f1": round(float(f1[pick]), 6),
            "rules": len(matcher),
            "rules_version": matcher.version if rules_version is None else rules_version,
            "model": matcher.model_id,
        },
    )
