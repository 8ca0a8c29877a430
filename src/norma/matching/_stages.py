"""What each stage of the matching pipeline (``_pipeline.py``) hands to the next, for one message.

Slots are rule slots of the :class:`~norma.matching._index.MatchIndex`; arrays "by slot" are ``index.size`` long,
arrays "aligned with ``scored``" follow :attr:`Pool.scored`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from norma.matching._lexical import LexicalIndex

__all__ = ["Chosen", "Gated", "LexicalScores", "Pool", "Scores", "VectorCandidates"]


class VectorCandidates(NamedTuple):
    """The vector stage: the slots that can be in the top ``max_candidates`` by similarity (rescored exactly next)."""

    near: np.ndarray
    """Candidate slots (a superset of the exact top; near-ties included)."""
    bounds: tuple[np.ndarray, np.ndarray, np.ndarray] | None
    """The int8 scan: ``near`` with the lower and upper bounds of their similarity (None: a float32 / HNSW scan)."""
    approx: np.ndarray | None
    """The float32 scan or HNSW: the approximate similarity of every slot, by slot (-inf: not computed or dead)."""


class LexicalScores(NamedTuple):
    """The lexical stage: BM25 of every slot for the message."""

    bm25_index: LexicalIndex
    """The BM25 index of ``bm25_text``."""
    terms: list[str]
    """The message's distinct terms, sorted."""
    raw: np.ndarray
    """Raw BM25 by slot (0 where no term occurs)."""
    query_idf: float
    """The sum of the idf of ``terms`` (for ``bm25_normalization="query"``)."""
    top: np.ndarray | None
    """The hybrid pool: the BM25 top ``max_candidates`` candidates (ties cut by id); None for the ADR pool."""


class Pool(NamedTuple):
    """The pool stage: the slots that get scores, after the vector top and the BM25 top were rescored exactly."""

    scored: np.ndarray
    """Sorted slots: the vector top and BM25 top (hybrid pool), or every candidate (ADR pool)."""
    pooled_at: np.ndarray
    """Positions in ``scored`` of the slots with a vector score (the ADR pool: the vector top only)."""


class Scores(NamedTuple):
    """The fuse stage: every score of the scored slots, aligned with ``scored``."""

    bm25_raw: np.ndarray
    """Raw BM25."""
    bm25: np.ndarray
    """BM25 normalised with ``bm25_normalization``."""
    similarity: np.ndarray
    """Exact cosine similarity (the ADR pool: 0 for a slot left outside its vector top, without a vector score)."""
    vector: np.ndarray
    """The vector score as it enters the hybrid score (similarity, blended with the example centroid)."""
    centroid: np.ndarray
    """The example centroid's cosine where it was blended in, NaN elsewhere."""
    scope_weight: np.ndarray
    """The weight of each rule's scope."""
    hybrid: np.ndarray
    """``vector_weight * vector + bm25_weight * bm25``."""
    priority: np.ndarray
    """Normalised priority."""
    final: np.ndarray
    """``hybrid_weight * hybrid + priority_weight * priority + scope_weight * scope weight``."""


class Gated(NamedTuple):
    """The gate stage: the threshold and the session filters (not the public :class:`~norma.matching.Gate`, the
    gate a match applies: this is what applying it left for one message)."""

    score: np.ndarray
    """The score compared with the threshold (the similarity, the final score or the confidence), aligned with
    ``scored``."""
    passed: np.ndarray
    """bool aligned with ``scored``: at or above the threshold."""
    blocked: dict[int, str]
    """Slots a session filter drops, with ``"<filter>: <why>"``."""
    allowed: np.ndarray
    """bool aligned with ``scored``: passed and not blocked."""
    threshold: float | str | None = None
    """The threshold in force."""


class Chosen(NamedTuple):
    """The order stage: the matches, best first."""

    picked: np.ndarray
    """Positions in ``scored``."""
    slots: np.ndarray
    """Their slots."""
    similarity: list[float]
    """Their exact similarity."""
    row: list[int]
    """Their best vector row (0: the rule's own text, ``i``: example ``i - 1``)."""
