"""The explain stage: a :class:`MatchExplanation` for each match and, with ``explain=True``, the rules left out."""

from __future__ import annotations

import math

import numpy as np

from norma.matching._config import MatchConfig
from norma.matching._enforce import enforcement
from norma.matching._index import MatchIndex
from norma.matching._models import SessionState
from norma.matching._results import DroppedRule, MatchedRule, MatchExplanation
from norma.matching._stages import Chosen, Gated, LexicalScores, Pool, Scores
from norma.rules import Rule, Scope

__all__ = ["explain_dropped", "explain_matches", "gate_reason"]


def explain_matches(
    index: MatchIndex,
    lexical: LexicalScores,
    scores: Scores,
    confidence: np.ndarray,
    chosen: Chosen,
    cfg: MatchConfig,
    on: str = "similarity",
) -> list[MatchedRule]:
    """The chosen rules, best first, each with every component of its score and its enforcement (read from its
    ``confidence``, aligned with the scored rules); ``on``: the score the threshold compared."""
    weights = {
        "vector": cfg.vector_weight,
        "bm25": cfg.bm25_weight,
        "hybrid": cfg.hybrid_weight,
        "priority": cfg.priority_weight,
        "scope": cfg.scope_weight,
    }
    picked, slots = chosen.picked, chosen.slots.tolist()
    columns = zip(
        slots,
        index.rule_at.items_at(slots),
        index.texts_at.items_at(slots),
        chosen.similarity,
        chosen.row,
        scores.vector[picked].tolist(),
        scores.bm25_raw[picked].tolist(),
        scores.bm25[picked].tolist(),
        scores.hybrid[picked].tolist(),
        scores.priority[picked].tolist(),
        scores.scope_weight[picked].tolist(),
        scores.final[picked].tolist(),
        scores.centroid[picked].tolist(),
        confidence[picked].tolist(),
        strict=True,
    )
    matches: list[MatchedRule] = []
    terms_of, terms = lexical.bm25_index.terms_of, lexical.terms
    for slot, rule, texts, sim, row, vector_score, raw, bm25, hybrid_score, prio, scope_w, final, mean, sure in columns:
        assert rule is not None
        explanation = MatchExplanation(
            similarity=sim,
            vector_score=vector_score,
            matched_text=texts[row],
            matched_example=None if row == 0 else row - 1,
            bm25_raw=raw,
            bm25_normalized=bm25,
            matched_terms=tuple(filter(terms_of(slot).__contains__, terms)),
            hybrid=hybrid_score,
            priority_normalized=prio,
            scope_weight=scope_w,
            final=final,
            threshold=None if cfg.threshold == "auto" else cfg.threshold,
            threshold_on=on,
            weights=weights,
            bm25_normalization=cfg.bm25_normalization,
            example_centroid=None if math.isnan(mean) else mean,
        )
        matches.append(MatchedRule(rule, sim, bm25, final, explanation, enforcement(sure)))
    return matches


def gate_reason(rule: Rule, session: SessionState | None, tags: list[str] | None) -> tuple[str, str]:
    """Why a rule was not a candidate: ``disabled``, ``scope`` or ``tags``, with the detail."""
    if not rule.enabled:
        return "disabled", "the rule is disabled"
    if rule.scope is Scope.SCENARIO:
        active = session.active_scenario_id if session else None
        if active != rule.scenario_id:
            now = "no scenario is active" if active is None else f"the active scenario is {active!r}"
            return "scope", f"scenario {rule.scenario_id!r} is not active ({now})"
    if rule.scope is Scope.STEP:
        step = session.active_step_id if session else None
        scenario = session.active_scenario_id if session else None
        if step != rule.step_id:
            now = "no step is active" if step is None else f"the active step is {step!r}"
            return "scope", f"step {rule.step_id!r} is not active ({now})"
        if rule.scenario_id is not None and scenario != rule.scenario_id:
            now = "no scenario is active" if scenario is None else f"the active scenario is {scenario!r}"
            return "scope", f"step {rule.step_id!r} belongs to scenario {rule.scenario_id!r} ({now})"
    if tags is not None:
        return "tags", f"none of the rule's tags {list(rule.tags)} is among {tags}"
    return "scope", "not a candidate"


def threshold_detail(
    config: MatchConfig, on: str, scores: Scores, i: int, score: float, below: float | None = None
) -> str:
    """Why scored candidate ``i`` failed the gate, with the score ``on`` names that it was compared on. ``below``:
    the ADR pool left ``i`` outside its vector top (no vector score, so similarity 0 for the gate), whose last
    similarity is ``below``."""
    if on == "confidence":
        return (
            f"confidence {score:.2f} < {config.threshold:g} that it governs the message (similarity "
            f"{float(scores.similarity[i]):.4f})"
        )
    if below is not None and on == "similarity":
        return (
            f"outside the vector top of {config.max_candidates} (candidate_pool='vector'; similarity <= {below:.4f}): "
            f"no vector score, similarity 0 < threshold {config.threshold}"
        )
    return f"{on} {score:.4f} < threshold {config.threshold}"


def explain_dropped(
    index: MatchIndex,
    approx: np.ndarray,
    mask: np.ndarray,
    pooled: Pool,
    scores: Scores,
    gated: Gated,
    chosen: Chosen,
    session: SessionState | None,
    tags: list[str] | None,
    config: MatchConfig,
    on: str = "similarity",
) -> list[DroppedRule]:
    """The nearest non-candidates (by ``approx``, the similarity by slot; up to ``max_candidates``) and the scored
    rules not returned.

    Non-candidates first (by similarity), then scored ones (by final score); each with its reason (``on``: the score
    the threshold compared).
    """
    out: list[DroppedRule] = []
    gated_out = np.flatnonzero(index.alive[: index.size] & ~mask & np.isfinite(approx))
    if gated_out.size:
        nearest = gated_out[np.lexsort((gated_out, -approx[gated_out]))][: config.max_candidates]
        for slot in nearest:
            rule = index.rule(int(slot))
            reason, detail = gate_reason(rule, session, tags)
            out.append(DroppedRule(rule.id, reason, detail, float(approx[slot])))
    scored, final = pooled.scored, scores.final
    picked = set(chosen.slots.tolist())
    below = _outside_top(pooled, scores, config)
    by_final = np.argsort(-final, kind="stable")
    left = [i for i in by_final if int(scored[i]) not in picked][: config.max_candidates]
    for i in left:
        slot = int(scored[i])
        rule = index.rule(slot)
        similarity = float(approx[slot]) if np.isfinite(approx[slot]) else 0.0
        if slot in gated.blocked:
            reason, detail = gated.blocked[slot].split(":", 1)
            detail = detail.strip()
        elif not gated.passed[i]:
            top_last = below[0] if below is not None and below[1][i] else None
            reason, detail = "threshold", threshold_detail(config, on, scores, i, float(gated.score[i]), top_last)
        else:
            reason, detail = "max_matched", f"ranked past max_matched={config.max_matched}"
        out.append(DroppedRule(rule.id, reason, detail, similarity, float(final[i])))
    return out


def _outside_top(pooled: Pool, scores: Scores, config: MatchConfig) -> tuple[float, np.ndarray] | None:
    """The ADR pool's vector top, when it left scored rules without a similarity: its last similarity, and which
    scored rules are outside it with none."""
    if len(pooled.pooled_at) == len(pooled.scored) or not len(pooled.pooled_at):
        return None
    outside = np.ones(len(pooled.scored), dtype=bool)
    outside[pooled.pooled_at] = False
    outside &= scores.similarity == 0.0
    return float(scores.similarity[pooled.pooled_at].min()), outside
