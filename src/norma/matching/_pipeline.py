"""The matching pipeline of :class:`~norma.matching.RuleMatcher` for one message (run under the matcher's lock).

Candidates by scope, enabled and tags -> similarity (exact scan or HNSW) -> the top ``max_candidates`` rescored
exactly in float64 -> BM25 -> hybrid and final scores -> threshold -> session filters -> sort -> top ``max_matched``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from norma.errors import InvalidInputError
from norma.matching._config import MatchConfig
from norma.matching._explain import explain_dropped
from norma.matching._models import SessionState
from norma.matching._results import MatchedRule, MatchExplanation, MatchResult
from norma.matching._scoring import (
    final_scores,
    hybrid_scores,
    kth_floor,
    kth_largest,
    normalize_bm25,
    normalize_priority,
    top_k_by_id,
    top_with_ties,
)
from norma.matching._vectors import int8_scan_available
from norma.rules import Scope

if TYPE_CHECKING:
    from norma.matching._matcher import RuleMatcher

__all__ = ["match_one"]

_SCOPES = (Scope.GLOBAL, Scope.SCENARIO, Scope.STEP)
_TIE_MARGIN = 1e-5  # float32 similarities this close to the cut are rescored in float64 before the cut
_INT8_MIN_ROWS = 2048  # vector_scan="auto": from this many rule vectors on the int8 scan is the faster
_BOUNDED_LIMIT = 32  # the int8 scan hands at most this many times max_candidates (and >= 1024) to exact rescoring


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


def rescore(matcher: RuleMatcher, slots: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact float64 similarity of each slot (max over its rows and the query windows) and its best row (the
    first one reaching the max: 0 is the rule's own text, ``i`` its example ``i - 1``), aligned with ``slots``."""
    assert matcher._vectors is not None
    chosen = np.asarray(slots, dtype=np.intp)
    if not len(chosen):
        return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.intp)
    index = matcher._vectors
    one_row = index.one_row_per_slot(len(matcher._rule_at))  # row i is slot i's only vector
    groups = None if one_row else [index.row_ids(int(slot)) for slot in chosen]
    rows = index.matrix_rows(chosen if groups is None else np.concatenate(groups))
    # einsum without BLAS: each row's float64 sum is the same whatever other rows are computed with it
    per_row = np.einsum("rd,d->r", rows, query[0], dtype=np.float64)
    for q in query[1:]:
        np.maximum(per_row, np.einsum("rd,d->r", rows, q, dtype=np.float64), out=per_row)
    if groups is None or len(per_row) == len(chosen):  # one vector per rule
        return per_row, np.zeros(len(chosen), dtype=np.intp)
    lengths = np.fromiter((len(group) for group in groups), dtype=np.intp, count=len(groups))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.intp)
    best = np.maximum.reduceat(per_row, starts)
    owner = np.repeat(np.arange(len(chosen), dtype=np.intp), lengths)
    at_max = np.flatnonzero(per_row == best[owner])
    _, first = np.unique(owner[at_max], return_index=True)  # each group's first row reaching its max
    return best, at_max[first] - starts


def centroid_similarities(matcher: RuleMatcher, slots: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of the query to the normalised mean of each slot's examples (max over windows); NaN for slots with
    fewer than two examples. ``q . mean(e) / |mean(e)|``: the mean of the example rows' dot products over the
    cached length of their mean, so no centroid vector is stored."""
    assert matcher._vectors is not None
    index = matcher._vectors
    out = np.full(len(slots), np.nan, dtype=np.float64)
    if not index.has_centroids:
        return out
    picked = [(i, index.row_ids(int(slot))[1:], norm) for i, slot in enumerate(slots)
              if (norm := index.centroid_norm(int(slot)))]  # fmt: skip
    if not picked:
        return out
    rows = index.matrix_rows(np.concatenate([group for _, group, _ in picked]))
    starts = _starts(picked)
    sums = np.max([np.add.reduceat(np.einsum("rd,d->r", rows, q, dtype=np.float64), starts) for q in query], axis=0)
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
    sims[chosen] = rescore(matcher, chosen, query)[0]
    return sims


def bounded_candidates(
    matcher: RuleMatcher, query: np.ndarray, mask: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Every candidate slot that can be among the ``k`` most similar, from the int8 scan's bounds: those whose upper
    bound reaches the k-th largest lower bound (a superset of the exact top ``k``, rescored by the caller), with
    their lower and upper bounds.

    None when that set is too large to rescore cheaply (many rules with nearly the same vector): the caller scans in
    float32 instead.
    """
    assert matcher._vectors is not None
    size = len(matcher._rule_at)
    lower, upper = matcher._vectors.similarity_bounds(query, size)
    if not mask.all():
        lower[~mask] = -np.inf
        upper[~mask] = -np.inf
    if np.count_nonzero(np.isfinite(lower)) <= k:
        near = np.flatnonzero(np.isfinite(lower))
    else:
        near = np.flatnonzero(upper >= kth_largest(lower, k))
    return (near, lower[near], upper[near]) if len(near) <= max(1024, _BOUNDED_LIMIT * k) else None


def score_buffers(matcher: RuleMatcher, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The matcher's by-slot work buffers for exact similarities (all NaN between matches) and best rows; reused
    from match to match (under the matcher's lock) so a match at 100k rules allocates no 100k-long arrays."""
    if matcher._exact_buffer is None or len(matcher._exact_buffer) < size:
        matcher._exact_buffer = np.full(max(size, 16) * 2, np.nan, dtype=np.float64)
        matcher._row_buffer = np.zeros(max(size, 16) * 2, dtype=np.intp)
    assert matcher._row_buffer is not None
    return matcher._exact_buffer[:size], matcher._row_buffer[:size]


def rescore_vector_top(
    matcher: RuleMatcher,
    query: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray],
    also: np.ndarray | None,
    k: int,
    exact: np.ndarray,
    best_row: np.ndarray,
) -> list[np.ndarray]:
    """Exact similarities (into ``exact`` and ``best_row``, by slot) of the candidates ``bounds`` leaves, skipping
    those that cannot be in the top ``k``, and of ``also`` (candidates scored anyway: the BM25 top); returns the
    slots written.

    The likeliest candidates (by the middle of their bounds) and ``also`` are rescored first; the k-th largest of
    those exact values is at most the k-th largest overall, so a candidate whose upper bound is below it cannot be
    in the top ``k`` and is not rescored.
    """
    near, lower, upper = bounds
    first = near
    if len(near) > 2 * k:
        likely = k + k // 2
        first = near[np.argpartition(-(lower + upper), likely)[:likely]]
    if also is not None:
        first = np.union1d(first, also)
    exact[first], best_row[first] = rescore(matcher, first, query)
    if len(first) < k or len(near) <= 2 * k:
        return [first]
    rest = near[(upper >= kth_largest(exact[first], k)) & np.isnan(exact[near])]
    exact[rest], best_row[rest] = rescore(matcher, rest, query)
    return [first, rest]


def lexical_hits(raw: np.ndarray, mask: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The candidate slots with a positive BM25 score, or at least those among them that can be in the top ``k``
    (every slot at or above a floor no higher than the k-th largest score), and their scores."""
    values = raw if mask.all() else np.where(mask, raw, 0.0)
    floor = kth_floor(values, k)
    slots = np.flatnonzero(values >= floor) if floor > 0 else np.flatnonzero(values > 0)
    return slots, values[slots]


def threshold_scores(cfg: MatchConfig, final: np.ndarray, hybrid: np.ndarray, similarity: np.ndarray) -> np.ndarray:
    """The score ``cfg.threshold`` is compared with, for each scored slot (see :data:`ThresholdOn`); ``similarity``
    is the max over the rule's texts, as reported (0 for a slot the ADR pool left without a vector score)."""
    if cfg.threshold_on == "final":
        return final
    if cfg.threshold_on == "hybrid":
        return hybrid
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
    if matcher._ids is None:
        matcher._ids = [r.id if r is not None else "" for r in matcher._rule_at]
    if matcher._id_rank is None:
        ids = matcher._ids
        rank = np.empty(len(ids), dtype=np.intp)
        rank[np.argsort(np.asarray(ids, dtype=object), kind="stable")] = np.arange(len(ids), dtype=np.intp)
        matcher._id_rank = rank
    id_rank = matcher._id_rank
    # vector over-fetch: top max_candidates by similarity, near-ties rescored exactly, ties broken by id
    assert matcher._vectors is not None
    approx: np.ndarray | None = None
    bounds = None
    rows = matcher._vectors.rows
    int8 = cfg.vector_scan == "int8" or (cfg.vector_scan == "auto" and rows >= _INT8_MIN_ROWS)
    if int8 and rows < cfg.hnsw_min_rows and int8_scan_available():
        bounds = bounded_candidates(matcher, query, mask, cfg.max_candidates)
    if bounds is not None:
        near = bounds[0]
    else:
        approx = similarities(matcher, query, mask, cfg)
        finite = np.flatnonzero(mask & np.isfinite(approx))
        near = top_with_ties(finite, approx[finite], cfg.max_candidates, _TIE_MARGIN)
        if len(near) > 2 * cfg.max_candidates:  # many rules with (nearly) the same vector: cut the tie by id
            near = near[np.lexsort((id_rank[near], -approx[near]))[: 2 * cfg.max_candidates]]
    lexical = matcher._lexical_index(cfg.bm25_text)
    terms = lexical.query_terms(message)
    raw = lexical.scores(terms, size, k1=cfg.bm25_k1, b=cfg.bm25_b)
    query_idf = lexical.idf(terms)
    lexical_top = None  # with the hybrid pool, the BM25 top is pooled with the vector top and rescored with it
    if cfg.candidate_pool == "hybrid":
        lexical_top = top_k_by_id(*lexical_hits(raw, mask, cfg.max_candidates), cfg.max_candidates, id_rank)
    exact, best_row = score_buffers(matcher, size)  # exact similarity (NaN: not rescored) and best row, by slot
    touched: list[np.ndarray] = []
    try:
        if bounds is not None:
            touched.extend(rescore_vector_top(matcher, query, bounds, lexical_top, cfg.max_candidates, exact, best_row))
            near = near[~np.isnan(exact[near])]
        else:
            pool = near if lexical_top is None else np.union1d(near, lexical_top)
            exact[pool], best_row[pool] = rescore(matcher, pool, query)
            touched.append(pool)
        vector_top = near[np.lexsort((id_rank[near], -exact[near]))[: cfg.max_candidates]]
        if lexical_top is None:  # ADR pool: every candidate is scored, the vector top alone has a vector score
            scored = np.flatnonzero(mask)
            pooled_at = np.searchsorted(scored, np.sort(vector_top))
        else:
            scored = np.union1d(vector_top, lexical_top).astype(np.intp)
            pooled_at = np.arange(len(scored))
        # from here on, arrays are aligned with `scored`
        bm25_raw = raw[scored]
        if cfg.bm25_normalization == "query" or lexical_top is None:  # "query" is per rule; ADR: scored = everyone
            normalized = normalize_bm25(bm25_raw, cfg.bm25_normalization, query_idf)
        else:  # min-max or max over every candidate
            everyone = np.flatnonzero(mask)
            normalized = normalize_bm25(raw[everyone], cfg.bm25_normalization, query_idf)
            normalized = normalized[np.searchsorted(everyone, scored)]
        similarity = exact[scored]
        vector = np.zeros(len(scored), dtype=np.float64)
        vector[pooled_at] = similarity[pooled_at]
        centroid = np.full(len(scored), np.nan, dtype=np.float64)
        if cfg.example_centroid_weight > 0 and len(pooled_at) and matcher._vectors.has_centroids:
            centroid[pooled_at] = centroid_similarities(matcher, scored[pooled_at], query)
            blended = pooled_at[np.isfinite(centroid[pooled_at])]
            weight = cfg.example_centroid_weight
            vector[blended] = (1.0 - weight) * vector[blended] + weight * centroid[blended]
        scope_weight = np.array([cfg.scope_weights[s] for s in _SCOPES], dtype=np.float64)[matcher._scope[scored]]
        hybrid = hybrid_scores(vector, normalized, cfg)
        priority = priorities(matcher, cfg)[scored]
        final = final_scores(hybrid, priority, scope_weight, cfg)
        if lexical_top is None:  # rules outside the ADR vector pool have no vector score
            similarity[np.isnan(similarity)] = 0.0
        gate = threshold_scores(cfg, final, hybrid, similarity)
        passed = np.ones(len(scored), dtype=bool) if cfg.threshold is None else gate >= cfg.threshold
        blocked = session_blocked(matcher, session)
        allowed = passed.copy()
        if blocked:
            allowed &= ~np.isin(scored, np.fromiter(blocked, dtype=np.intp, count=len(blocked)))
        keep = np.flatnonzero(allowed)
        if len(keep) > 4 * cfg.max_matched:  # only the best and their ties need sorting
            keep = top_with_ties(keep, final[keep], cfg.max_matched)
        kept = scored[keep]
        picked = keep[np.lexsort((id_rank[kept], -matcher._priority[kept], -final[keep]))[: cfg.max_matched]]
        slots = scored[picked]
        missing = slots[np.isnan(exact[slots])]
        if len(missing):  # the ADR pool: a chosen rule outside the vector top has no exact similarity yet
            exact[missing], best_row[missing] = rescore(matcher, missing, query)
            touched.append(missing)
        chosen_similarity, chosen_row = exact[slots].tolist(), best_row[slots].tolist()
    finally:
        for done in touched:  # leave the buffer all NaN for the next match
            exact[done] = np.nan
    weights = {
        "vector": cfg.vector_weight,
        "bm25": cfg.bm25_weight,
        "hybrid": cfg.hybrid_weight,
        "priority": cfg.priority_weight,
        "scope": cfg.scope_weight,
    }
    matches = []
    columns = zip(
        slots.tolist(),
        chosen_similarity,
        chosen_row,
        vector[picked].tolist(),
        bm25_raw[picked].tolist(),
        normalized[picked].tolist(),
        hybrid[picked].tolist(),
        priority[picked].tolist(),
        scope_weight[picked].tolist(),
        final[picked].tolist(),
        centroid[picked].tolist(),
        strict=True,
    )
    for slot, sim, row, vector_score, lexical_raw, bm25, hybrid_score, prio, scope_w, final_score, mean in columns:
        rule = matcher._rule_at[slot]
        assert rule is not None
        doc_terms = lexical.terms_of(slot)
        explanation = MatchExplanation(
            similarity=sim,
            vector_score=vector_score,
            matched_text=matcher._texts_at[slot][row],
            matched_example=None if row == 0 else row - 1,
            bm25_raw=lexical_raw,
            bm25_normalized=bm25,
            matched_terms=tuple(t for t in terms if t in doc_terms),
            hybrid=hybrid_score,
            priority_normalized=prio,
            scope_weight=scope_w,
            final=final_score,
            threshold=cfg.threshold,
            threshold_on=cfg.threshold_on,
            similarity_slack=cfg.similarity_slack,
            weights=weights,
            bm25_normalization=cfg.bm25_normalization,
            example_centroid=None if math.isnan(mean) else mean,
        )
        matches.append(MatchedRule(rule, sim, bm25, final_score, explanation))
    result = MatchResult(matches)
    if explain:
        if approx is None:  # the int8 scan gave bounds only: the dropped rules' similarities come from float32
            approx = similarities(matcher, query, mask, cfg)
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
            chosen=set(slots.tolist()),
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
