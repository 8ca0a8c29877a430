"""``explain=True``: which rules were left out of a match, and why."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from norma.matching._config import MatchConfig
from norma.matching._models import SessionState
from norma.matching._results import DroppedRule
from norma.rules import Rule, Scope

__all__ = ["explain_dropped", "gate_reason"]


def gate_reason(rule: Rule, session: SessionState | None, tags: list[str] | None) -> tuple[str, str]:
    """Why a rule was not a candidate: ``disabled``, ``scope`` or ``tags``, with the detail."""
    if not rule.enabled:
        return "disabled", "the rule is disabled"
    if rule.scope is Scope.SCENARIO:
        active = session.active_scenario_id if session else None
        if active != rule.scenario_id:
            return "scope", f"scenario {rule.scenario_id!r} is not active (active: {active!r})"
    if rule.scope is Scope.STEP:
        step = session.active_step_id if session else None
        scenario = session.active_scenario_id if session else None
        if step != rule.step_id:
            return "scope", f"step {rule.step_id!r} is not active (active: {step!r})"
        if rule.scenario_id is not None and scenario != rule.scenario_id:
            return "scope", f"step {rule.step_id!r} belongs to scenario {rule.scenario_id!r} (active: {scenario!r})"
    if tags is not None:
        return "tags", f"none of the rule's tags {list(rule.tags)} is among {tags}"
    return "scope", "not a candidate"


def explain_dropped(
    *,
    matcher_rules: Sequence[Rule | None],
    approx: np.ndarray,
    mask: np.ndarray,
    alive: np.ndarray,
    session: SessionState | None,
    tags: list[str] | None,
    scored: np.ndarray,
    final: np.ndarray,
    gate: np.ndarray,
    passed: np.ndarray,
    blocked: dict[int, str],
    chosen: set[int],
    config: MatchConfig,
) -> list[DroppedRule]:
    """The nearest non-candidates (by similarity, up to ``max_candidates``) and the scored rules not returned.

    Non-candidates first (by similarity), then scored ones (by final score); each with its reason.
    """
    out: list[DroppedRule] = []
    gated = np.flatnonzero(alive & ~mask & np.isfinite(approx))
    if gated.size:
        order = gated[np.lexsort((gated, -approx[gated]))][: config.max_candidates]
        for slot in order:
            rule = matcher_rules[int(slot)]
            assert rule is not None
            reason, detail = gate_reason(rule, session, tags)
            out.append(DroppedRule(rule.id, reason, detail, float(approx[slot])))
    order = np.argsort(-final, kind="stable")
    left = [i for i in order if int(scored[i]) not in chosen][: config.max_candidates]
    for i in left:
        slot = int(scored[i])
        rule = matcher_rules[slot]
        assert rule is not None
        similarity = float(approx[slot]) if np.isfinite(approx[slot]) else 0.0
        if slot in blocked:
            reason, detail = blocked[slot].split(":", 1)
            detail = detail.strip()
        elif not passed[i]:
            reason = "threshold"
            detail = f"{config.threshold_on} score {float(gate[i]):.4f} < threshold {config.threshold}"
        else:
            reason, detail = "max_matched", f"ranked past max_matched={config.max_matched}"
        out.append(DroppedRule(rule.id, reason, detail, similarity, float(final[i])))
    return out
