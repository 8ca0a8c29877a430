"""The matching pipeline of :class:`~norma.matching.RuleMatcher` for one message (run under the matcher's lock).

Candidates by scope, enabled and tags -> similarity (exact scan or HNSW) -> the top ``max_candidates`` rescored
exactly in float64 -> BM25 -> hybrid and final scores -> threshold -> session filters -> sort -> top ``max_matched``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

from norma.errors import InvalidInputError
from norma.matching._config import MatchConfig
from norma.matching._explain import explain_dropped
from norma.matching._models import Scope, SessionState, rule_texts
from norma.matching._results import MatchedRule, MatchExplanation, MatchResult
from norma.matching._scoring import (
    final_scores,
    hybrid_scores,
    normalize_bm25,
    normalize_priority,
    top_k_by_id,
    top_with_ties,
)

if TYPE_CHECKING:
    from norma.matching._matcher import RuleMatcher

__all__ = ["match_one"]

_SCOPES = (Scope.GLOBAL, Scope.SCENARIO, Scope.STEP)
_TIE_MARGIN = 1e-5  # float32 similarities this close to the cut are rescored in float64 before the cut


def candidates(matcher: RuleMatcher, session: SessionState | None, tags: list[str] | None) -> np.ndarray:
    size = len(matcher._rule_at)
    if matcher._global_usable is None:
        matcher._global_usable = matcher._usable[:size] & (matcher._scope[:size] == 0)
    mask = matcher._global_usable.copy()
    if session is not None:
        extra: list[int] = []
        if session.active_scenario_id is not None:
            extra.extend(matcher._by_scenario.get(session.active_scenario_id, ()))
        if session.active_step_id is not None:
            for slot in matcher._by_step.get(session.active_step_id, ()):
                rule = matcher._rule_at[slot]
                if rule is not None and rule.scenario_id in (None, session.active_scenario_id):
                    extra.append(slot)
        if extra:
            chosen = np.asarray(extra, dtype=np.intp)
            mask[chosen] = matcher._usable[chosen]
    if tags is not None:
        tagged = np.zeros(size, dtype=bool)
        for tag in tags:
            slots = matcher._by_tag.get(tag)
            if slots:
                tagged[np.fromiter(slots, dtype=np.intp, count=len(slots))] = True
        mask &= tagged
    return mask


def priorities(matcher: RuleMatcher, cfg: MatchConfig) -> np.ndarray:
    size = len(matcher._rule_at)
    if cfg.priority_range is None and matcher._priority_norm is not None:
        return matcher._priority_norm
    if cfg.priority_range is not None:
        low, high = float(cfg.priority_range[0]), float(cfg.priority_range[1])
    else:
        if matcher._priority_bounds is None:
            alive = matcher._priority[:size][matcher._alive[:size]]
            matcher._priority_bounds = (float(alive.min()), float(alive.max())) if alive.size else (0.0, 0.0)
        low, high = matcher._priority_bounds
    normalized = normalize_priority(matcher._priority[:size], low, high)
    if cfg.priority_range is None:
        matcher._priority_norm = normalized
    return normalized


def exact_similarities(matcher: RuleMatcher, slots: Iterable[int], query: np.ndarray) -> dict[int, tuple[float, int]]:
    """Exact float64 similarity (max over rows and windows) and the best row of each slot."""
    assert matcher._vectors is not None
    chosen = [int(s) for s in slots]
    if not chosen:
        return {}
    index = matcher._vectors
    if index.one_row_per_slot(len(matcher._rule_at)):  # row i is slot i's only vector
        rows = index.matrix_rows(np.asarray(chosen, dtype=np.intp)).astype(np.float64)
        groups = None
    else:
        groups = [index.row_ids(slot) for slot in chosen]
        rows = index.matrix_rows(np.concatenate(groups)).astype(np.float64)
    # elementwise product and a per-row sum: each row's result is independent of the others (deterministic)
    sims = np.max([(rows * q).sum(axis=1) for q in query.astype(np.float64)], axis=0)
    out: dict[int, tuple[float, int]] = {}
    start = 0
    if groups is None or len(sims) == len(chosen):  # one vector per rule
        return {slot: (float(value), 0) for slot, value in zip(chosen, sims.tolist(), strict=True)}
    for slot, group in zip(chosen, groups, strict=True):
        part = sims[start : start + len(group)]
        best = int(np.argmax(part))
        out[slot] = (float(part[best]), best)
        start += len(group)
    return out


def centroid_similarities(matcher: RuleMatcher, slots: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of the query to the normalised mean of each slot's examples (max over windows); NaN for slots with
    fewer than two examples. ``q . mean(e) / |mean(e)|``: the mean of the example rows' dot products over the
    cached length of their mean, so no centroid vector is stored."""
    assert matcher._vectors is not None
    index = matcher._vectors
    out = np.full(len(slots), np.nan, dtype=np.float64)
    picked = [(i, index.row_ids(int(slot))[1:], norm) for i, slot in enumerate(slots)
              if (norm := index.centroid_norm(int(slot)))]  # fmt: skip
    if not picked:
        return out
    rows = index.matrix_rows(np.concatenate([group for _, group, _ in picked])).astype(np.float64)
    sums = np.max([np.add.reduceat((rows * q).sum(axis=1), _starts(picked)) for q in query.astype(np.float64)], axis=0)
    for (i, group, norm), total in zip(picked, sums.tolist(), strict=True):
        out[i] = total / len(group) / norm
    return out


def _starts(picked: list[tuple[int, np.ndarray, float]]) -> np.ndarray:
    lengths = np.fromiter((len(group) for _, group, _ in picked), dtype=np.intp, count=len(picked))
    return np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.intp)


def similarities(matcher: RuleMatcher, query: np.ndarray, mask: np.ndarray, cfg: MatchConfig) -> np.ndarray:
    """Approximate (float32) similarity of every slot; -inf where not computed (HNSW path) or dead."""
    assert matcher._vectors is not None
    size = len(matcher._rule_at)
    if matcher._vectors.rows < cfg.hnsw_min_rows:
        sims = matcher._vectors.rule_similarities(query, size, blas=cfg.blas)
        best: np.ndarray = sims[0] if len(sims) == 1 else sims.max(axis=0)
        return best  # float32: only ranks; the candidates' scores are recomputed exactly in float64
    count = max(200, cfg.hnsw_oversample * cfg.max_candidates)
    background = cfg.hnsw_build == "background"
    proposals = [matcher._vectors.hnsw_candidates(q, count, background=background) for q in query]
    if any(p is None for p in proposals):  # the index is being built: exact scan meanwhile
        scanned: np.ndarray = (
            matcher._vectors.rule_similarities(query, size, blas=cfg.blas).max(axis=0).astype(np.float64)
        )
        return scanned
    found = np.unique(np.concatenate([p for p in proposals if p is not None]))
    scoped = np.flatnonzero(mask & (matcher._scope[:size] != 0))
    chosen = np.union1d(found, scoped).astype(np.intp)
    sims = np.full(size, -np.inf, dtype=np.float64)
    if chosen.size:
        exact = exact_similarities(matcher, chosen, query)
        sims[chosen] = [exact[int(s)][0] for s in chosen]
    return sims


def threshold_scores(
    cfg: MatchConfig,
    final: np.ndarray,
    hybrid: np.ndarray,
    scored: np.ndarray,
    exact: dict[int, tuple[float, int]],
) -> np.ndarray:
    """The score ``cfg.threshold`` is compared with, for each scored slot (see :data:`ThresholdOn`)."""
    if cfg.threshold_on == "final":
        return final
    if cfg.threshold_on == "hybrid":
        return hybrid
    similarity = np.fromiter(
        (exact.get(int(s), (0.0, 0))[0] for s in scored), dtype=np.float64, count=len(scored)
    )  # the max over the rule's texts, as reported (0 for a slot the ADR pool left without a vector score)
    if cfg.threshold_on == "similarity":
        return similarity
    gate: np.ndarray = np.maximum(hybrid, similarity - cfg.similarity_slack)
    return gate


def match_one(
    matcher: RuleMatcher,
    message: str,
    query: np.ndarray | None,
    session: SessionState | None,
    tags: list[str] | None,
    cfg: MatchConfig,
    explain: bool,
) -> MatchResult:
    if query is None or matcher._vectors is None or not matcher._slot_of:
        return MatchResult()
    if query.shape[1] != matcher._vectors.dim:
        raise InvalidInputError(f"query vector of dim {query.shape[1]}, the rules' are {matcher._vectors.dim}")
    size = len(matcher._rule_at)
    mask = candidates(matcher, session, tags)
    cand = np.flatnonzero(mask)
    approx = similarities(matcher, query, mask, cfg)
    if matcher._ids is None:
        matcher._ids = [r.id if r is not None else "" for r in matcher._rule_at]
    ids = matcher._ids
    if matcher._id_rank is None:
        rank = np.empty(len(ids), dtype=np.intp)
        rank[np.argsort(np.asarray(ids, dtype=object), kind="stable")] = np.arange(len(ids), dtype=np.intp)
        matcher._id_rank = rank
    id_rank = matcher._id_rank
    # vector over-fetch: top max_candidates by similarity, near-ties rescored exactly, ties broken by id
    assert matcher._vectors is not None
    finite = np.flatnonzero(mask & np.isfinite(approx))
    near = top_with_ties(finite, approx[finite], cfg.max_candidates, _TIE_MARGIN)
    if len(near) > 2 * cfg.max_candidates:  # many rules with (nearly) the same vector: cut the tie by id, as below
        near = near[np.lexsort((id_rank[near], -approx[near]))[: 2 * cfg.max_candidates]]
    lexical = matcher._lexical_index(cfg.bm25_text)
    terms = lexical.query_terms(message)
    raw = lexical.scores(terms, size, k1=cfg.bm25_k1, b=cfg.bm25_b)
    query_idf = lexical.idf(terms)
    if cfg.candidate_pool == "vector":
        exact = exact_similarities(matcher, near, query)
    else:  # the BM25 top is pooled with the vector top: one exact rescoring for both
        hits = np.flatnonzero(mask & (raw > 0))
        lexical_top = top_k_by_id(hits, raw[hits], cfg.max_candidates, id_rank)
        exact = exact_similarities(matcher, np.union1d(near, lexical_top), query)
    vector_top = sorted(near.tolist(), key=lambda s: (-exact[s][0], ids[s]))[: cfg.max_candidates]
    normalized = np.zeros(size, dtype=np.float64)
    if cfg.bm25_normalization != "query":  # depends on every candidate
        normalized[cand] = normalize_bm25(raw[cand], cfg.bm25_normalization, query_idf)
    vector = np.zeros(size, dtype=np.float64)
    if cfg.candidate_pool == "vector":
        scored = cand
    else:
        scored = np.union1d(np.asarray(vector_top, dtype=np.intp), lexical_top).astype(np.intp)
    if cfg.bm25_normalization == "query":  # per rule: only the scored ones are needed
        normalized[scored] = normalize_bm25(raw[scored], "query", query_idf)
    pooled = np.asarray(vector_top if cfg.candidate_pool == "vector" else scored, dtype=np.intp)
    vector[pooled] = [exact[int(s)][0] for s in pooled]
    centroid = np.full(size, np.nan, dtype=np.float64)
    if cfg.example_centroid_weight > 0 and len(pooled):
        centroid[pooled] = centroid_similarities(matcher, pooled, query)
        blended = pooled[np.isfinite(centroid[pooled])]
        weight = cfg.example_centroid_weight
        vector[blended] = (1.0 - weight) * vector[blended] + weight * centroid[blended]
    scope_weights = np.array([cfg.scope_weights[s] for s in _SCOPES], dtype=np.float64)
    hybrid = hybrid_scores(vector[scored], normalized[scored], cfg)
    priority = priorities(matcher, cfg)[scored]
    final = final_scores(hybrid, priority, scope_weights[matcher._scope[scored]], cfg)
    gate = threshold_scores(cfg, final, hybrid, scored, exact)
    passed = np.ones(len(scored), dtype=bool) if cfg.threshold is None else gate >= cfg.threshold
    blocked = session_blocked(matcher, session)
    allowed = passed.copy()
    if blocked:
        allowed &= ~np.isin(scored, np.fromiter(blocked, dtype=np.intp, count=len(blocked)))
    keep_arr = np.flatnonzero(allowed)
    keep = [int(i) for i in top_with_ties(keep_arr, final[keep_arr], cfg.max_matched)]
    keep.sort(key=lambda i: (-final[i], -matcher._priority[scored[i]], ids[scored[i]]))
    chosen = keep[: cfg.max_matched]
    missing = [int(scored[i]) for i in chosen if int(scored[i]) not in exact]
    exact.update(exact_similarities(matcher, missing, query))
    weights = {
        "vector": cfg.vector_weight,
        "bm25": cfg.bm25_weight,
        "hybrid": cfg.hybrid_weight,
        "priority": cfg.priority_weight,
        "scope": cfg.scope_weight,
    }
    matches = []
    for i in chosen:
        slot = int(scored[i])
        rule = matcher._rule_at[slot]
        assert rule is not None
        similarity, row = exact[slot]
        doc_terms = lexical.terms_of(slot)
        explanation = MatchExplanation(
            similarity=similarity,
            vector_score=float(vector[slot]),
            matched_text=rule_texts(rule)[row],
            matched_example=None if row == 0 else row - 1,
            bm25_raw=float(raw[slot]),
            bm25_normalized=float(normalized[slot]),
            matched_terms=tuple(t for t in terms if t in doc_terms),
            hybrid=float(hybrid[i]),
            priority_normalized=float(priority[i]),
            scope_weight=float(scope_weights[matcher._scope[slot]]),
            final=float(final[i]),
            threshold=cfg.threshold,
            threshold_on=cfg.threshold_on,
            similarity_slack=cfg.similarity_slack,
            weights=weights,
            bm25_normalization=cfg.bm25_normalization,
            example_centroid=None if np.isnan(centroid[slot]) else float(centroid[slot]),
        )
        matches.append(MatchedRule(rule, similarity, float(normalized[slot]), float(final[i]), explanation))
    result = MatchResult(matches)
    if explain:
        result.dropped = explain_dropped(
            matcher_rules=matcher._rule_at,
            approx=approx,
            mask=mask,
            alive=matcher._alive[:size],
            session=session,
            tags=tags,
            scored=scored,
            final=final,
            gate=gate,
            passed=passed,
            blocked=blocked,
            chosen={int(scored[i]) for i in chosen},
            config=cfg,
        )
    return result


def session_blocked(matcher: RuleMatcher, session: SessionState | None) -> dict[int, str]:
    """Slots a session filter drops, with the filter's name and why."""
    out: dict[int, str] = {}
    if session is None:
        return out
    for rule_id, count in session.fire_counts.items():
        slot = matcher._slot_of.get(rule_id)
        rule = matcher._rule_at[slot] if slot is not None else None
        if rule is not None and rule.max_fires_per_session is not None and count >= rule.max_fires_per_session:
            out[slot] = f"max_fires_per_session: fired {count} of {rule.max_fires_per_session} times"  # type: ignore[index]
    for rule_id, turn in session.last_fired_turn.items():
        slot = matcher._slot_of.get(rule_id)
        rule = matcher._rule_at[slot] if slot is not None else None
        if rule is not None and rule.cooldown_turns is not None and session.turn - turn <= rule.cooldown_turns:
            out.setdefault(
                slot,  # type: ignore[arg-type]
                f"cooldown: fired on turn {turn}, cooldown {rule.cooldown_turns} turns, now turn {session.turn}",
            )
    return out
