"""The arithmetic of ADR-002: BM25 normalisation, priority normalisation, hybrid and final scores, tie-safe top-k.

Each function is small and vectorised over candidates (numpy float64), so the formula can be read in one place.
"""

from __future__ import annotations

import math

import numpy as np

from norma.matching._config import Bm25Normalization, MatchConfig

__all__ = [
    "final_scores",
    "hybrid_scores",
    "kth_largest",
    "normalize_bm25",
    "normalize_priority",
    "top_k_by_id",
    "top_with_ties",
]

_SAMPLE = 32  # kth_largest samples about this many times k values to bound the k-th largest from below


def normalize_bm25(raw: np.ndarray, mode: Bm25Normalization, query_idf: float) -> np.ndarray:
    """Raw BM25 of the candidates mapped to [0, 1].

    ``minmax``: (s - min) / (max - min) over the candidates, 0 when they are all equal (ADR ``normalize``);
    ``max``: s / max, 0 when the max is 0; ``query``: s / ``query_idf`` (the sum of the idf of the message's
    terms, the most a rule could score), so a weak lexical hit stays low whatever the other rules score.
    """
    if raw.size == 0:
        return raw.astype(np.float64)
    if mode == "minmax":
        low, high = float(raw.min()), float(raw.max())
        return (raw - low) / (high - low) if high > low else np.zeros_like(raw, dtype=np.float64)
    if mode == "max":
        high = float(raw.max())
        return raw / high if high > 0 else np.zeros_like(raw, dtype=np.float64)
    return np.clip(raw / query_idf, 0.0, 1.0) if query_idf > 0 else np.zeros_like(raw, dtype=np.float64)


def normalize_priority(priorities: np.ndarray, low: float, high: float) -> np.ndarray:
    """Priorities mapped to [0, 1] between ``low`` and ``high`` (clipped); all 0 when ``high <= low``."""
    if high <= low:
        return np.zeros_like(priorities, dtype=np.float64)
    return np.clip((priorities - low) / (high - low), 0.0, 1.0)


def hybrid_scores(vector: np.ndarray, bm25: np.ndarray, config: MatchConfig) -> np.ndarray:
    """``vector_weight * vector + bm25_weight * norm(bm25)``."""
    return config.vector_weight * vector + config.bm25_weight * bm25


def final_scores(hybrid: np.ndarray, priority: np.ndarray, scope_weight: np.ndarray, config: MatchConfig) -> np.ndarray:
    """``hybrid_weight * hybrid + priority_weight * norm(priority) + scope_weight * scope_weights[scope]``."""
    return config.hybrid_weight * hybrid + config.priority_weight * priority + config.scope_weight * scope_weight


def kth_floor(values: np.ndarray, k: int) -> float:
    """A value no higher than the ``k``-th largest of ``values``, and close to it: the k-th largest of an evenly
    spaced sample of about ``32 k`` values (-inf when ``values`` is short enough to select from directly)."""
    if len(values) <= 4 * _SAMPLE * k:
        return -math.inf
    sample = values[:: len(values) // (_SAMPLE * k)]
    return float(np.partition(sample, len(sample) - k)[len(sample) - k])


def kth_largest(values: np.ndarray, k: int) -> float:
    """The ``k``-th largest of ``values`` (``1 <= k <= len(values)``), without partitioning all of a long array:
    the values below :func:`kth_floor` (most of them) cannot be it and are dropped first."""
    floor = kth_floor(values, k)
    if floor > -math.inf:
        values = values[values >= floor]
    return float(np.partition(values, len(values) - k)[len(values) - k])


def top_with_ties(items: np.ndarray, values: np.ndarray, k: int, margin: float = 0.0) -> np.ndarray:
    """The items whose value is within ``margin`` of the k-th largest or above (so ties at the cut all stay)."""
    if len(items) <= k:
        return items
    kth = np.partition(values, len(values) - k)[len(values) - k]
    chosen: np.ndarray = items[values >= kth - margin]
    return chosen


def top_k_by_id(items: np.ndarray, values: np.ndarray, k: int, id_rank: np.ndarray) -> np.ndarray:
    """The ``k`` items with the largest values; a tie at the cut goes to the smaller rule id.

    ``id_rank[item]`` is the item's position in rule-id order. Unlike :func:`top_with_ties` the result never holds
    more than ``k`` items, so a word shared by thousands of rules with the same BM25 score does not send all of
    them to exact scoring; the id order keeps it deterministic whatever order the rules were added in.
    """
    if len(items) <= k:
        return items
    kth = kth_largest(values, k)
    above = items[values > kth]
    tied = items[values == kth]
    need = k - len(above)
    if len(tied) > need:
        tied = tied[np.argsort(id_rank[tied], kind="stable")[:need]]
    chosen: np.ndarray = np.concatenate([above, tied])
    return chosen
