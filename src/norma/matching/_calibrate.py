"""A tenant's gate calibrated from labelled messages (0..n expected rules per message).

Every message is matched once without a gate (every scored rule returned, with its confidence); then the
calibration is made from what came back, exactly and deterministically. The confidence is refitted first on the
candidates (:func:`refit_confidence`: two numbers, held to the shipped confidence by a prior), then:

* no target (``balanced``, the default): the default gate on the refitted confidence (a rule is returned when it
  governs the message: its confidence reaches ``GOVERNS``). The messages must hold both kinds: some that expect a
  rule, some that expect none (or near misses). acc@1 counts a message that expects some rule when the first rule
  returned is one it expects; rejection counts a message that expects none when nothing is returned (a near miss:
  when its rule is not the first returned);
* ``target_precision=P``: the lowest single threshold whose precision is >= P (the most recall at that precision);
* ``target_recall=R``: the highest single threshold whose recall is >= R (the most precision at that recall);
* ``best_f1``: the single threshold with the best F1 (ties: the higher threshold).

Precision and recall are micro-averaged over every rule returned: one expected is a true positive, one not
expected a false positive, an expected rule not returned a false negative.

A target's threshold is the gate alone, like a number the user sets: nothing passes under it; which of the rules
returned govern the turn still reads the refitted confidence.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from norma.errors import InvalidInputError
from norma.matching._confidence import GOVERNS, REFIT_PRIOR, Refit, fit_refit
from norma.matching._config import MatchConfig
from norma.matching._gate import CalibratedGate
from norma.matching._labelled import LabelledMessage, check_labelled
from norma.matching._matcher import RuleMatcher
from norma.matching._models import SessionState
from norma.matching._synthetic import NearMiss

__all__ = ["Observed", "calibrate_gate", "fit_gate", "observe", "refit_confidence"]

_MAX_MATCHED = MatchConfig().max_matched


@dataclass(frozen=True, slots=True)
class Observed:
    """One labelled message matched without a gate: every scored rule (id, similarity), best final score first."""

    candidates: tuple[tuple[str, float], ...]
    expected: frozenset[str]
    """The rules that should apply (empty: none should)."""
    near_miss: str | None = None
    """For a near miss, the one rule that must not apply (``expected`` is then ignored)."""
    confidences: tuple[float, ...] = ()
    """The shipped confidence of each candidate (before any refit), aligned with ``candidates``."""


def _target(value: float | None, name: str) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or not math.isfinite(value) or not 0 < value <= 1:
        raise InvalidInputError(f"{name} must be a number in (0, 1], not {value!r}", location=name)
    return float(value)


def _targets(precision: float | None, recall: float | None, best_f1: bool) -> tuple[float | None, float | None]:
    """The checked precision and recall goals; InvalidInputError for a bad one, or more than one target."""
    precision_goal, recall_goal = _target(precision, "target_precision"), _target(recall, "target_recall")
    if (precision_goal is not None) + (recall_goal is not None) + bool(best_f1) > 1:
        raise InvalidInputError("give one target: a precision, a recall or the best F1")
    return precision_goal, recall_goal


def _reaching(values: np.ndarray, goal: float, name: str, advice: str) -> list[int]:
    """The indices whose ``values`` reach ``goal``; InvalidInputError when none does."""
    ok = np.flatnonzero(values >= goal - 1e-12)
    if not len(ok):
        raise InvalidInputError(
            f"no threshold reaches {name} {goal:g} on these messages (best {name} {float(values.max()):.3f})",
            hint=f"lower --target-{name}, or {advice}",
        )
    return [int(i) for i in ok]


def observe(
    matcher: RuleMatcher,
    labelled: Sequence[LabelledMessage],
    near_misses: Sequence[NearMiss] = (),
    config: MatchConfig | None = None,
) -> list[Observed]:
    """Each message (then each near miss) matched without a gate, in its scenario and step: every rule scored for
    it, best final score first, with its similarity (what a gate compares) and its shipped confidence (the
    matcher's refit, if any, undone)."""
    cfg = (config or matcher.config).with_(threshold=None, max_matched=max(len(matcher), 1))
    texts = [item.message for item in labelled] + [m.message for m in near_misses]
    sessions = [SessionState(active_scenario_id=i.scenario, active_step_id=i.step) for i in labelled] + [
        SessionState(active_scenario_id=m.scenario, active_step_id=m.step) for m in near_misses
    ]
    results = matcher.match_many(texts, sessions, config=cfg) if texts else []
    found = [tuple((match.rule.id, float(match.similarity_score)) for match in result) for result in results]
    refit = matcher.refit
    shipped = [np.array([match.confidence for match in result], dtype=np.float64) for result in results]
    raw = [tuple((c if refit is None else refit.undo(c)).tolist()) for c in shipped]
    return [
        Observed(c, frozenset(item.expected), None, r) for item, c, r in zip(labelled, found, raw, strict=False)
    ] + [
        Observed(c, frozenset(), miss.rule_id, r)
        for miss, c, r in zip(near_misses, found[len(labelled) :], raw[len(labelled) :], strict=True)
    ]


class _Table:
    """The observations as arrays: similarities (messages x candidates, -inf padded), whether each candidate is an
    expected rule (``good``) or the near miss's rule (``bad``), whether it governs the message (``governs``: its
    confidence, refitted by ``refit``, reaches ``GOVERNS``)."""

    def __init__(self, observed: Sequence[Observed], refit: Refit | None = None) -> None:
        width = max((len(o.candidates) for o in observed), default=0) or 1
        self.sims = np.full((len(observed), width), -np.inf)
        self.good = np.zeros((len(observed), width), dtype=bool)
        self.bad = np.zeros((len(observed), width), dtype=bool)
        self.governs = np.zeros((len(observed), width), dtype=bool)
        for m, o in enumerate(observed):
            if len(o.confidences) == len(o.candidates) and o.confidences:
                values = np.asarray(o.confidences, dtype=np.float64)
                self.governs[m, : len(values)] = (values if refit is None else refit.apply(values)) >= GOVERNS
            for j, (rule_id, similarity) in enumerate(o.candidates):
                self.sims[m, j] = similarity
                if o.near_miss is None:
                    self.good[m, j] = rule_id in o.expected
                else:
                    self.bad[m, j] = rule_id == o.near_miss
        self.miss = np.array([o.near_miss is not None for o in observed], dtype=bool)
        self.inside = np.array([o.near_miss is None and bool(o.expected) for o in observed], dtype=bool)
        self.outside = ~self.inside  # expect no rule, or are near misses
        self.expected_total = sum(len(o.expected) for o in observed if o.near_miss is None)

    def passing(self, threshold: float | None) -> np.ndarray:
        """Which candidates a gate returns: those at or above a similarity ``threshold``, or (None) those that
        govern (the confidence gate)."""
        return self.governs.copy() if threshold is None else self.sims >= threshold

    def balance(self, passed: np.ndarray) -> tuple[float, float]:
        """(acc@1, rejection) when the ``passed`` candidates are returned."""
        some = passed.any(axis=1)
        rows = np.arange(len(passed))
        first = passed.argmax(axis=1)
        hit = some & self.good[rows, first]
        refused = ~some | (self.miss & ~self.bad[rows, first])
        return float(hit[self.inside].mean()), float(refused[self.outside].mean())

    def micro(self, passed: np.ndarray, max_matched: int) -> tuple[float, float, float]:
        """Micro (precision, recall, F1) of every rule returned when the ``passed`` candidates are: the first
        ``max_matched`` of them, as the matcher returns them."""
        passed = passed & (np.cumsum(passed, axis=1) <= max_matched)
        tp = int((passed & self.good).sum())
        fp = int((passed & ~self.good & ~self.miss[:, None]).sum() + (passed & self.bad).sum())
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / self.expected_total if self.expected_total else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return precision, recall, f1


def _both_kinds(table: _Table) -> None:
    """InvalidInputError unless the messages hold both kinds, as a balanced calibration needs."""
    inside, outside = int(table.inside.sum()), int(table.outside.sum())
    if not inside or not outside:
        missing = "no rule (or near misses)" if not outside else "some rule"
        raise InvalidInputError(
            f"a balanced calibration needs messages that expect {missing}: {inside} expect a rule, {outside} none",
            hint='add messages with "expected": [] (traffic the rules must not match) and messages the rules '
            "should match, or give a target (a precision, a recall or the best F1)",
        )


def _single(
    table: _Table,
    observed: Sequence[Observed],
    precision_goal: float | None,
    recall_goal: float | None,
    max_matched: int,
) -> tuple[float, dict[str, Any]]:
    """The single threshold of a precision or recall target or of the best F1: one of the observed similarities.
    Each message counts the first ``max_matched`` rules matched without a gate (what a gated match returns, unless
    rules further down pass the threshold while these do not). A target's threshold is the gate alone, as a number
    the user sets: a rule that governs is not let through under it."""
    similarities: list[float] = []
    correct: list[bool] = []
    for o in observed:
        for rule_id, similarity in o.candidates[:max_matched]:
            if o.near_miss is None:
                similarities.append(similarity)
                correct.append(rule_id in o.expected)
            elif rule_id == o.near_miss:  # the one rule a near miss says something about
                similarities.append(similarity)
                correct.append(False)
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
    recall = tp / table.expected_total if table.expected_total else np.ones_like(precision)
    f1 = np.where(precision + recall > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    if precision_goal is not None:  # the lowest threshold (thresholds fall with the index) that reaches it
        pick = _reaching(precision, precision_goal, "precision", "improve the rules (norma rules eval / doctor)")[-1]
        return float(thresholds[pick]), {"target": "precision", "goal": precision_goal}
    if recall_goal is not None:  # the highest threshold that reaches it
        advice = "add examples to the rules that are missed (norma rules eval)"
        pick = _reaching(recall, recall_goal, "recall", advice)[0]
        return float(thresholds[pick]), {"target": "recall", "goal": recall_goal}
    best = float(f1.max())
    return float(thresholds[int(np.flatnonzero(f1 >= best - 1e-12)[0])]), {"target": "best_f1"}


def fit_gate(
    observed: Sequence[Observed],
    *,
    target_precision: float | None = None,
    target_recall: float | None = None,
    best_f1: bool = False,
    max_matched: int = _MAX_MATCHED,
    confidence_prior: float = REFIT_PRIOR,
) -> CalibratedGate:
    """The ``calibrated`` gate for messages already matched without a gate (:func:`observe`); see the module
    docstring. ``max_matched``: how many rules a match returns (the config's), for the precision and recall counted.
    The terms hold the target, the counts and the sample's precision, recall, F1, acc@1 and rejection at the chosen
    gate (the caller adds the rules, their version and the model), and the confidence refitted on the same
    candidates (:func:`refit_confidence`, held to the shipped one by ``confidence_prior`` candidates' worth).
    InvalidInputError for two targets, an unmet target, or a balanced calibration without messages on both sides."""
    precision_goal, recall_goal = _targets(target_precision, target_recall, best_f1)
    if not observed:
        raise InvalidInputError("no labelled messages to calibrate on", hint="give at least one message")
    refit = refit_confidence(observed, confidence_prior)
    table = _Table(observed, refit)
    fields: dict[str, Any]
    if precision_goal is None and recall_goal is None and not best_f1:
        _both_kinds(table)
        threshold, limit = GOVERNS, None
        fields = {"target": "balanced", "on": "confidence", "expecting_none": int(table.outside.sum())}
    else:
        threshold, fields = _single(table, observed, precision_goal, recall_goal, max_matched)
        limit = threshold
    passed = table.passing(limit)
    precision, recall, f1 = table.micro(passed, max_matched)
    misses = int(table.miss.sum())
    fields.update(messages=len(observed) - misses, near_misses=misses)
    fields.update(precision=round(precision, 6), recall=round(recall, 6), f1=round(f1, 6))
    if table.inside.any() and table.outside.any():
        acc, rejection = table.balance(passed)
        fields.update(acc_at_1=round(acc, 6), rejection=round(rejection, 6))
    return CalibratedGate(threshold, refit=refit, **fields)


def refit_confidence(observed: Sequence[Observed], prior: float = REFIT_PRIOR) -> Refit | None:
    """The confidence refitted on the observed candidates (:func:`~norma.matching.fit_refit`): a rule scored for a
    message governs it when the message expects it; for a near miss, only its rule is labelled (it does not). None
    when the labels are not of both kinds."""
    values: list[float] = []
    right: list[bool] = []
    for o in observed:
        if len(o.confidences) != len(o.candidates):
            continue
        for (rule_id, _), confidence in zip(o.candidates, o.confidences, strict=True):
            if o.near_miss is None:
                values.append(confidence)
                right.append(rule_id in o.expected)
            elif rule_id == o.near_miss:
                values.append(confidence)
                right.append(False)
    if not values or all(right) or not any(right):
        return None
    return fit_refit(np.array(values), np.array(right), prior)


def calibrate_gate(
    matcher: RuleMatcher,
    labelled: Iterable[LabelledMessage | tuple[str, Collection[str]]],
    *,
    target_precision: float | None = None,
    target_recall: float | None = None,
    best_f1: bool = False,
    config: MatchConfig | None = None,
    source: str = "labelled messages",
    rules_version: int | None = None,
    near_misses: Iterable[NearMiss] = (),
) -> CalibratedGate:
    """The ``calibrated`` gate for ``matcher``'s rules from ``labelled`` messages (:class:`LabelledMessage`, from
    :func:`load_labelled`, or ``(message, expected rule ids)`` pairs; see the module docstring: without a target,
    the default gate on the confidence refitted to them). A message with a scenario or step is matched in that
    scenario or step. ``near_misses`` (:func:`synthesize_labelled`): messages one rule must not apply to; that rule
    returned for one is a false positive, any other rule returned is ignored. ``rules_version`` (default the
    matcher's own version) is recorded in the terms: pass the tenant's store version. Set it with
    :meth:`RuleMatcher.set_gate`, or store it for a tenant (``store.save_gate``) so that every matcher of the tenant
    uses it.

    Raises InvalidInputError for no messages, an unknown rule id, two targets, a target no threshold reaches, or a
    balanced calibration without messages that expect no rule (or without messages that expect one).
    """
    _targets(target_precision, target_recall, best_f1)
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
    cfg = config or matcher.config
    gate = fit_gate(
        observe(matcher, items, misses, cfg),
        target_precision=target_precision,
        target_recall=target_recall,
        best_f1=best_f1,
        max_matched=cfg.max_matched,
    )
    return gate.with_context(
        rules=len(matcher),
        rules_version=matcher.version if rules_version is None else rules_version,
        model=matcher.model_id,
    )
