"""The matching pipeline for one message: small named stages over a :class:`~norma.matching._index.MatchIndex`.

:func:`match_one` runs, in order (each stage's output is a value of ``_stages.py``):

1. :func:`candidates` — the slots the scope, ``enabled`` and the tag filter allow (a bool mask);
2. :func:`vector_candidates` — the slots that can be in the top ``max_candidates`` by similarity: the int8 scan's
   bounds, a float32 scan, or HNSW past ``hnsw_min_rows``;
3. :func:`lexical_scores` — BM25 of every slot, and the BM25 top for the hybrid pool;
4. :func:`pool` — the vector top and the BM25 top rescored exactly in float64: the slots that get scores;
5. :func:`fuse` — BM25 normalisation, vector score (with the example centroid), hybrid, priority, scope, final;
   :func:`confide` — each scored rule's confidence that it governs the message (``_confidence.py``);
6. :func:`gate` — the threshold (by default on the confidence: the rules that govern the message) and the session
   filters (max fires, cooldown);
7. :func:`order` — sort by (-final, -priority, id), the first ``max_matched``;
8. explain (``_explain.py``) — a :class:`~norma.matching.MatchExplanation` per match and, with ``explain=True``,
   the rules left out and why (:func:`dropped`).

Stages read the index and never change it, apart from the lazily built parts of its shared vector and BM25 indexes;
the matcher runs them under its lock, with its :class:`~norma.matching._buffers.ScoreBuffers`.
"""

from __future__ import annotations

import numpy as np

from norma.errors import InvalidInputError
from norma.matching._buffers import ExactScores, ScoreBuffers
from norma.matching._confidence import Refit, RulebookStats, confidences
from norma.matching._config import MatchConfig
from norma.matching._explain import explain_dropped, explain_matches
from norma.matching._gate import GateScore
from norma.matching._index import SCOPES, MatchIndex
from norma.matching._models import SessionState
from norma.matching._packed import scan_kernel
from norma.matching._results import DroppedRule, MatchResult
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
from norma.matching._stages import Chosen, Gated, LexicalScores, Pool, Scores, VectorCandidates
from norma.matching._vectors import VectorIndex, int8_scan_available

__all__ = [
    "candidates",
    "confide",
    "describe_scan",
    "dropped",
    "fuse",
    "gate",
    "lexical_scores",
    "match_one",
    "order",
    "pool",
    "vector_candidates",
]

_TIE_MARGIN = 1e-5  # float32 similarities this close to the cut are rescored in float64 before the cut
_INT8_MIN_ROWS = 2048  # from this many rule vectors on the int8 scan is the faster (the same candidates)
SCAN = "auto"
"""How vector candidates are found below ``hnsw_min_rows``: ``auto`` (int8 bounds from ``_INT8_MIN_ROWS`` rule
vectors on, float32 below), ``int8`` or ``float32``. The results are identical; tests set it to compare them."""
HNSW_BACKGROUND = True
"""Past ``hnsw_min_rows`` the first match starts building the HNSW index in a thread and scans exactly until it is
ready; False builds it first (tests)."""
_BOUNDED_LIMIT = 32  # the int8 scan hands at most this many times max_candidates (and >= 1024) to exact rescoring


def match_one(
    index: MatchIndex,
    buffers: ScoreBuffers,
    message: str,
    query: np.ndarray | None,
    session: SessionState | None,
    tags: list[str] | None,
    cfg: MatchConfig,
    explain: bool,
    stats: RulebookStats,
    on: GateScore = "similarity",
    refit: Refit | None = None,
) -> MatchResult:
    """The rules of ``index`` that apply to ``message`` (``query``: its ``(windows, dim)`` vectors, None for an
    empty message), best first. ``stats``: the rulebook's statistics for the confidence (measured on ``index``).
    ``cfg.threshold`` is the gate's threshold (a number or None) on the score ``on`` names: the similarity, the final
    score or the confidence. ``refit``: the tenant's confidence refit (``norma rules calibrate``)."""
    if query is None or index.vectors is None or not len(index):
        return MatchResult()
    if query.shape[1] != index.vectors.dim:
        raise InvalidInputError(f"query vector of dim {query.shape[1]}, the rules' are {index.vectors.dim}")
    mask = candidates(index, session, tags)
    vector = vector_candidates(index, query, mask, cfg)
    lexical = lexical_scores(index, message, mask, cfg)
    exact = buffers.exact_scores(index.size)
    try:
        pooled = pool(index, query, mask, vector, lexical, cfg, exact)
        scores = fuse(index, query, pooled, lexical, mask, cfg, exact)
        confidence = confide(index, pooled, scores, stats, refit)
        gated = gate(index, pooled, scores, confidence, session, cfg, on)
        chosen = order(index, query, pooled, scores, gated, cfg, exact)
    finally:
        exact.clear()
    result = MatchResult(explain_matches(index, lexical, scores, confidence, chosen, cfg, on))
    if explain:
        result.dropped = dropped(index, query, mask, vector, pooled, scores, gated, chosen, session, tags, cfg, on)
    return result


# -- 1. candidates -------------------------------------------------------------------------------------------------


def candidates(index: MatchIndex, session: SessionState | None, tags: list[str] | None) -> np.ndarray:
    """bool by slot: enabled GLOBAL rules, SCENARIO rules of the active scenario, STEP rules of the active step (and
    of the active scenario when they name one); with ``tags``, only rules carrying one of them."""
    mask = index.global_usable.copy()
    if session is not None:
        extra: list[np.ndarray] = []
        if session.active_scenario_id is not None:
            scenario = index.by_scenario.get(session.active_scenario_id)
            if scenario is not None:
                extra.append(scenario)
        if session.active_step_id is not None:
            step = index.by_step.get(session.active_step_id)
            if step is not None:
                active = (None, session.active_scenario_id)
                extra.append(np.asarray([s for s in step.tolist() if index.rule(s).scenario_id in active], np.intp))
        if extra:
            chosen = extra[0] if len(extra) == 1 else np.concatenate(extra)
            mask[chosen] = index.usable[chosen]
    if tags is not None:
        tagged = np.zeros(index.size, dtype=bool)
        for tag in tags:
            slots = index.by_tag.get(tag)
            if slots is not None:
                tagged[slots] = True
        mask &= tagged
    return mask


# -- 2. vector -----------------------------------------------------------------------------------------------------


def vector_candidates(index: MatchIndex, query: np.ndarray, mask: np.ndarray, cfg: MatchConfig) -> VectorCandidates:
    """The slots that can be in the top ``max_candidates`` by similarity: from the int8 scan's bounds (from
    ``_INT8_MIN_ROWS`` vectors), else from float32 (or HNSW) similarities with near-ties."""
    vectors = _vectors(index)
    rows = vectors.rows
    int8 = SCAN == "int8" or (SCAN == "auto" and rows >= _INT8_MIN_ROWS)
    if int8 and rows < cfg.hnsw_min_rows and int8_scan_available():
        bounds = bounded_candidates(index, query, mask, cfg.max_candidates)
        if bounds is not None:
            return VectorCandidates(bounds[0], bounds, None)
    approx = similarities(index, query, mask, cfg)
    finite = np.flatnonzero(mask & np.isfinite(approx))
    near = top_with_ties(finite, approx[finite], cfg.max_candidates, _TIE_MARGIN)
    if len(near) > 2 * cfg.max_candidates:  # many rules with (nearly) the same vector: cut the tie by id
        near = near[np.lexsort((index.id_rank[near], -approx[near]))[: 2 * cfg.max_candidates]]
    return VectorCandidates(near, None, approx)


def describe_scan(rows: int, cfg: MatchConfig) -> str:
    """How a match finds its vector candidates among ``rows`` rule vectors, in one line (doctor, benchmarks)."""
    if rows >= cfg.hnsw_min_rows:
        return f"HNSW (usearch, int8) + exact rescoring: {rows:,} vectors, from {cfg.hnsw_min_rows:,} on"
    if rows >= _INT8_MIN_ROWS and int8_scan_available():
        return f"int8 bounds + exact rescoring: {rows:,} vectors, from {_INT8_MIN_ROWS:,} on; {scan_kernel()}"
    return f"exact float32 scan: {rows:,} vectors, below {_INT8_MIN_ROWS:,}"


def _vectors(index: MatchIndex) -> VectorIndex:
    assert index.vectors is not None
    return index.vectors


def similarities(index: MatchIndex, query: np.ndarray, mask: np.ndarray, cfg: MatchConfig) -> np.ndarray:
    """Approximate (float32) similarity of every slot; -inf where not computed (HNSW path) or dead."""
    vectors = _vectors(index)
    size = index.size
    if vectors.rows < cfg.hnsw_min_rows:
        sims = vectors.rule_similarities(query, size)
        best: np.ndarray = sims[0] if len(sims) == 1 else sims.max(axis=0)
        return best  # float32: only ranks; the candidates' scores are recomputed exactly in float64
    count = max(200, cfg.hnsw_oversample * cfg.max_candidates)
    proposals = [vectors.hnsw_candidates(q, count, background=HNSW_BACKGROUND) for q in query]
    if any(p is None for p in proposals):  # the index is being built: exact scan meanwhile
        scanned: np.ndarray = vectors.rule_similarities(query, size).max(axis=0).astype(np.float64)
        return scanned
    found = np.unique(np.concatenate([p for p in proposals if p is not None]))
    scoped = np.flatnonzero(mask & (index.scope[:size] != 0))
    chosen = np.union1d(found, scoped).astype(np.intp)
    sims = np.full(size, -np.inf, dtype=np.float64)
    sims[chosen] = rescore(index, chosen, query)[0]
    return sims


def bounded_candidates(
    index: MatchIndex, query: np.ndarray, mask: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Every candidate slot that can be among the ``k`` most similar, from the int8 scan's bounds: those whose upper
    bound reaches the k-th largest lower bound (a superset of the exact top ``k``, rescored by the caller), with
    their lower and upper bounds.

    None when that set is too large to rescore cheaply (many rules with nearly the same vector): the caller scans in
    float32 instead.
    """
    lower, upper = _vectors(index).similarity_bounds(query, index.size)
    if not mask.all():
        lower[~mask] = -np.inf
        upper[~mask] = -np.inf
    if np.count_nonzero(np.isfinite(lower)) <= k:
        near = np.flatnonzero(np.isfinite(lower))
    else:
        near = np.flatnonzero(upper >= kth_largest(lower, k))
    return (near, lower[near], upper[near]) if len(near) <= max(1024, _BOUNDED_LIMIT * k) else None


def rescore(index: MatchIndex, slots: np.ndarray, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact float64 similarity of each slot (max over its rows and the query windows) and its best row (the
    first one reaching the max: 0 is the rule's own text, ``i`` its example ``i - 1``), aligned with ``slots``."""
    chosen = np.asarray(slots, dtype=np.intp)
    if not len(chosen):
        return np.zeros(0, dtype=np.float64), np.zeros(0, dtype=np.intp)
    vectors = _vectors(index)
    one_row = vectors.one_row_per_slot(index.size)  # row i is slot i's only vector
    groups = None if one_row else [vectors.row_ids(int(slot)) for slot in chosen]
    rows = vectors.matrix_rows(chosen if groups is None else np.concatenate(groups))
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


# -- 3. lexical ----------------------------------------------------------------------------------------------------


def lexical_scores(index: MatchIndex, message: str, mask: np.ndarray, cfg: MatchConfig) -> LexicalScores:
    """BM25 of every slot for ``message`` over ``bm25_text``; with the hybrid pool, also the BM25 top."""
    lexical = index.lexical(cfg.bm25_text)
    terms = lexical.query_terms(message)
    raw = lexical.scores(terms, index.size, k1=cfg.bm25_k1, b=cfg.bm25_b)
    top = None  # with the hybrid pool, the BM25 top is pooled with the vector top and rescored with it
    if cfg.candidate_pool == "hybrid":
        top = top_k_by_id(*lexical_hits(raw, mask, cfg.max_candidates), cfg.max_candidates, index.id_rank)
    return LexicalScores(lexical, terms, raw, lexical.idf(terms), top)


def lexical_hits(raw: np.ndarray, mask: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The candidate slots with a positive BM25 score, or at least those among them that can be in the top ``k``
    (every slot at or above a floor no higher than the k-th largest score), and their scores."""
    values = raw if mask.all() else np.where(mask, raw, 0.0)
    floor = kth_floor(values, k)
    slots = np.flatnonzero(values >= floor) if floor > 0 else np.flatnonzero(values > 0)
    return slots, values[slots]


# -- 4. pool -------------------------------------------------------------------------------------------------------


def pool(
    index: MatchIndex,
    query: np.ndarray,
    mask: np.ndarray,
    vector: VectorCandidates,
    lexical: LexicalScores,
    cfg: MatchConfig,
    exact: ExactScores,
) -> Pool:
    """Rescore the vector candidates (and the BM25 top) exactly into ``exact``; the vector top is the best
    ``max_candidates`` of them (ties by id). The scored slots: vector top and BM25 top (hybrid pool), or every
    candidate (ADR pool, where only the vector top gets a vector score)."""
    near = vector.near
    if vector.bounds is not None:
        rescore_vector_top(index, query, vector.bounds, lexical.top, cfg.max_candidates, exact)
        near = near[~np.isnan(exact.values[near])]
    else:
        pooled = near if lexical.top is None else np.union1d(near, lexical.top)
        exact.record(pooled, rescore(index, pooled, query))
    vector_top = near[np.lexsort((index.id_rank[near], -exact.values[near]))[: cfg.max_candidates]]
    if lexical.top is None:  # ADR pool: every candidate is scored, the vector top alone has a vector score
        scored = np.flatnonzero(mask)
        return Pool(scored, np.searchsorted(scored, np.sort(vector_top)))
    scored = np.union1d(vector_top, lexical.top).astype(np.intp)
    return Pool(scored, np.arange(len(scored)))


def rescore_vector_top(
    index: MatchIndex,
    query: np.ndarray,
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray],
    also: np.ndarray | None,
    k: int,
    exact: ExactScores,
) -> None:
    """Exact similarities (into ``exact``) of the candidates ``bounds`` leaves, skipping those that cannot be in the
    top ``k``, and of ``also`` (candidates scored anyway: the BM25 top).

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
    exact.record(first, rescore(index, first, query))
    if len(first) < k or len(near) <= 2 * k:
        return
    rest = near[(upper >= kth_largest(exact.values[first], k)) & np.isnan(exact.values[near])]
    exact.record(rest, rescore(index, rest, query))


# -- 5. fuse -------------------------------------------------------------------------------------------------------


def fuse(
    index: MatchIndex,
    query: np.ndarray,
    pooled: Pool,
    lexical: LexicalScores,
    mask: np.ndarray,
    cfg: MatchConfig,
    exact: ExactScores,
) -> Scores:
    """Every score of the scored slots (ADR-002: hybrid and final; see :class:`~norma.matching.MatchConfig`)."""
    scored, pooled_at = pooled.scored, pooled.pooled_at
    bm25_raw = lexical.raw[scored]
    if cfg.bm25_normalization == "query" or lexical.top is None:  # "query" is per rule; ADR: scored = everyone
        normalized = normalize_bm25(bm25_raw, cfg.bm25_normalization, lexical.query_idf)
    else:  # min-max or max over every candidate
        everyone = np.flatnonzero(mask)
        normalized = normalize_bm25(lexical.raw[everyone], cfg.bm25_normalization, lexical.query_idf)
        normalized = normalized[np.searchsorted(everyone, scored)]
    similarity = exact.values[scored]
    if lexical.top is None:  # the ADR pool: the vector top alone has a vector score
        vector = np.zeros(len(scored), dtype=np.float64)
        vector[pooled_at] = similarity[pooled_at]
    else:  # the hybrid pool: every scored slot was rescored
        vector = similarity.copy()
    centroid = np.full(len(scored), np.nan, dtype=np.float64)
    if cfg.example_centroid_weight > 0 and len(pooled_at) and _vectors(index).has_centroids:
        centroid[pooled_at] = centroid_similarities(index, scored[pooled_at], query)
        blended = pooled_at[np.isfinite(centroid[pooled_at])]
        weight = cfg.example_centroid_weight
        vector[blended] = (1.0 - weight) * vector[blended] + weight * centroid[blended]
    scope_weight = np.array([cfg.scope_weights[s] for s in SCOPES], dtype=np.float64)[index.scope[scored]]
    hybrid = hybrid_scores(vector, normalized, cfg)
    priority = _priorities(index, cfg)[scored]
    final = final_scores(hybrid, priority, scope_weight, cfg)
    if lexical.top is None:  # rules outside the ADR vector pool have no vector score
        similarity[np.isnan(similarity)] = 0.0
    return Scores(bm25_raw, normalized, similarity, vector, centroid, scope_weight, hybrid, priority, final)


def _priorities(index: MatchIndex, cfg: MatchConfig) -> np.ndarray:
    """Normalised priority by slot: min-max over the index's rules, or over ``priority_range``."""
    if cfg.priority_range is None:
        return index.priority_norm
    low, high = float(cfg.priority_range[0]), float(cfg.priority_range[1])
    return normalize_priority(index.priority[: index.size], low, high)


def centroid_similarities(index: MatchIndex, slots: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Cosine of the query to the normalised mean of each slot's examples (max over windows); NaN for slots with
    fewer than two examples. ``q . mean(e) / |mean(e)|``: the mean of the example rows' dot products over the
    cached length of their mean, so no centroid vector is stored."""
    vectors = _vectors(index)
    out = np.full(len(slots), np.nan, dtype=np.float64)
    if not vectors.has_centroids:
        return out
    picked = [(i, vectors.row_ids(int(slot))[1:], norm) for i, slot in enumerate(slots)
              if (norm := vectors.centroid_norm(int(slot)))]  # fmt: skip
    if not picked:
        return out
    rows = vectors.matrix_rows(np.concatenate([group for _, group, _ in picked]))
    lengths = np.fromiter((len(group) for _, group, _ in picked), dtype=np.intp, count=len(picked))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.intp)
    sums = np.max([np.add.reduceat(np.einsum("rd,d->r", rows, q, dtype=np.float64), starts) for q in query], axis=0)
    for (i, group, norm), total in zip(picked, sums.tolist(), strict=True):
        out[i] = total / len(group) / norm
    return out


def confide(
    index: MatchIndex, pooled: Pool, scores: Scores, stats: RulebookStats, refit: Refit | None = None
) -> np.ndarray:
    """Each scored rule's confidence that it governs the message, aligned with ``scored``: ``_confidence.py``
    over its similarity, vector score, normalised BM25, the other scored rules' similarities and the top candidate
    (the most relevant one: the highest hybrid score, before priority and scope; ties by id)."""
    scored = pooled.scored
    if not len(scored):
        return np.zeros(0, dtype=np.float64)
    top = int(np.lexsort((index.id_rank[scored], -scores.hybrid))[0])  # the most relevant: before priority, scope
    similarity = np.zeros(len(scored), dtype=np.float64)  # the ADR pool: only its vector top has a similarity
    similarity[pooled.pooled_at] = scores.similarity[pooled.pooled_at]
    ids = index.ids
    return confidences(stats, [ids[s] for s in scored.tolist()], similarity, scores.vector, scores.bm25, top, refit)


# -- 6. gate -------------------------------------------------------------------------------------------------------


def gate(
    index: MatchIndex,
    pooled: Pool,
    scores: Scores,
    confidence: np.ndarray,
    session: SessionState | None,
    cfg: MatchConfig,
    on: GateScore = "similarity",
) -> Gated:
    """``cfg.threshold`` on the score ``on`` names (the confidence for the default gate: a rule is relevant when
    it governs the message), and the session filters."""
    score = {"confidence": confidence, "final": scores.final, "similarity": scores.similarity}[on]
    threshold = cfg.threshold
    if threshold == "auto":
        raise AssertionError("the matcher resolves the automatic gate before matching")
    passed = np.ones(len(pooled.scored), dtype=bool) if threshold is None else score >= threshold
    blocked = session_blocked(index, session)
    allowed = passed
    if blocked:
        allowed = passed & ~np.isin(pooled.scored, np.fromiter(blocked, dtype=np.intp, count=len(blocked)))
    return Gated(score, passed, blocked, allowed, threshold)


def session_blocked(index: MatchIndex, session: SessionState | None) -> dict[int, str]:
    """Slots a session filter drops, with the filter's name and why."""
    out: dict[int, str] = {}
    if session is None:
        return out
    for rule_id, count in session.fire_counts.items():
        slot = index.slot_of.get(rule_id)
        if slot is None:
            continue
        rule = index.rule(slot)
        if rule.max_fires_per_session is not None and count >= rule.max_fires_per_session:
            out[slot] = f"max_fires_per_session: fired {count} of {rule.max_fires_per_session} times"
    for rule_id, turn in session.last_fired_turn.items():
        slot = index.slot_of.get(rule_id)
        if slot is None:
            continue
        rule = index.rule(slot)
        if rule.cooldown_turns is not None and session.turn - turn <= rule.cooldown_turns:
            out.setdefault(
                slot, f"cooldown: fired on turn {turn}, cooldown {rule.cooldown_turns} turns, now turn {session.turn}"
            )
    return out


# -- 7. order ------------------------------------------------------------------------------------------------------


def order(
    index: MatchIndex,
    query: np.ndarray,
    pooled: Pool,
    scores: Scores,
    gated: Gated,
    cfg: MatchConfig,
    exact: ExactScores,
) -> Chosen:
    """The allowed slots sorted by (-final, -priority, id), the first ``max_matched``, with their exact similarity
    and best row (rescored now if the ADR pool left them without one)."""
    scored, final = pooled.scored, scores.final
    keep = np.flatnonzero(gated.allowed)
    if len(keep) > 4 * cfg.max_matched:  # only the best and their ties need sorting
        keep = top_with_ties(keep, final[keep], cfg.max_matched)
    kept = scored[keep]
    picked = keep[np.lexsort((index.id_rank[kept], -index.priority[kept], -final[keep]))[: cfg.max_matched]]
    slots = scored[picked]
    missing = slots[np.isnan(exact.values[slots])]
    if len(missing):  # the ADR pool: a chosen rule outside the vector top has no exact similarity yet
        exact.record(missing, rescore(index, missing, query))
    return Chosen(picked, slots, exact.values[slots].tolist(), exact.rows[slots].tolist())


# -- 8. explain (the rules left out) -------------------------------------------------------------------------------


def dropped(
    index: MatchIndex,
    query: np.ndarray,
    mask: np.ndarray,
    vector: VectorCandidates,
    pooled: Pool,
    scores: Scores,
    gated: Gated,
    chosen: Chosen,
    session: SessionState | None,
    tags: list[str] | None,
    cfg: MatchConfig,
    on: GateScore = "similarity",
) -> list[DroppedRule]:
    """``explain=True``: the nearest non-candidates and the scored rules not returned, each with why."""
    approx = vector.approx
    if approx is None:  # the int8 scan gave bounds only: the dropped rules' similarities come from float32
        approx = similarities(index, query, mask, cfg)
    return explain_dropped(index, approx, mask, pooled, scores, gated, chosen, session, tags, cfg, on)
