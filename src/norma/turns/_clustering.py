"""Clustering the messages no rule governs (:func:`cluster_rows`) and labelling a cluster (:func:`label_terms`), for
:func:`norma.turns.coverage`: plain arrays in, row numbers out.

Average linkage on cosine, cut at a threshold: two clusters merge while the mean cosine between their messages
reaches it, the most similar pair first (the nearest-neighbour chain, which merges as that greedy order does, in
``O(n^2)`` time and one ``n x n`` float32 matrix). Rows come in a canonical order (the texts sorted), ties go to the
lower row: the result does not depend on the order of the input. A row no other row comes within the threshold of
is alone whatever the linkage (a mean of values below it stays below); past :data:`MAX_GROUPS` other rows, near
paraphrases are first grouped by leader clustering (Taylor-Butina, from cosine 0.8 down by 0.05 until few enough
groups), which bounds the matrix at 64 MiB.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["MAX_GROUPS", "cluster_rows", "label_terms", "words"]

MAX_GROUPS = 4096
"""Most rows of the average-linkage matrix (float32: 64 MiB) before near paraphrases are grouped."""
_BLOCK = 1024  # rows of a similarity block
_LABEL_SHARE = 0.25  # a label word is in at least this share of the cluster's messages (and in two of them)

_WORD = re.compile(r"(?u)\b\w\w+\b")
_STOP_TEXT = """
about above after again all also am an and any are as at be been before being below between both but by can could
did do does doing don down during each few for from further get getting go going got had has have having he her here
hers him his how if in into is it its itself just know let like me might more most much must my myself need no nor
not now of off on once one only or other our ours out over own please same she should so some such tell than thank
thanks that the their theirs them then there these they this those through to too under until up us very want was
we were what when where which while who whom why will with would you your yours yourself hello hi hey ok okay yes
"""
_STOP_WORDS = frozenset(_STOP_TEXT.split())
"""English function words and chat filler, left out of cluster labels."""


def _isolated(vectors: np.ndarray, threshold: float) -> np.ndarray:
    """Whether each unit row has no other row within cosine ``threshold``: in no cluster, whatever the linkage."""
    alone = np.empty(len(vectors), dtype=bool)
    columns = np.ascontiguousarray(vectors.T)  # a transposed view would be multiplied an order of magnitude slower
    for start in range(0, len(vectors), _BLOCK):
        block = vectors[start : start + _BLOCK] @ columns
        block[np.arange(len(block)), np.arange(start, start + len(block))] = -np.inf  # not itself
        alone[start : start + _BLOCK] = block.max(axis=1) < threshold
    return alone


def _leaders(vectors: np.ndarray, weights: np.ndarray, threshold: float) -> list[np.ndarray]:
    """Taylor-Butina leader clustering of unit rows (the pre-merge of a large input): rows taken by how many messages
    lie within ``threshold`` of them (most first, then by row), each row not yet taken leading the rows within
    ``threshold`` of it not yet taken. The member rows of each group."""
    n = len(vectors)
    density = np.empty(n, dtype=np.float64)
    neighbours: list[np.ndarray] = []  # few at a high threshold: the pairs of near paraphrases
    columns = np.ascontiguousarray(vectors.T)
    for start in range(0, n, _BLOCK):
        near = vectors[start : start + _BLOCK] @ columns >= threshold
        density[start : start + _BLOCK] = near.astype(np.float64) @ weights
        neighbours += [np.flatnonzero(row) for row in near]
    free = np.ones(n, dtype=bool)
    groups: list[np.ndarray] = []
    for leader in np.lexsort((np.arange(n), -density)):
        if free[leader]:
            members = np.union1d(neighbours[leader][free[neighbours[leader]]], [leader])
            free[members] = False
            groups.append(members)
    return groups


def _average_linkage(sums: np.ndarray, weights: np.ndarray, threshold: float) -> list[list[int]]:
    """Average-linkage agglomerative clustering cut at ``threshold``: the groups of rows whose messages' mean cosine
    to another group's reaches it are merged, most similar first, until none does (the nearest-neighbour chain,
    which merges as the greedy order does). A row is a group of messages given by the sum of their unit vectors and
    their count, so the mean cosine between two groups is ``sum_a . sum_b / (n_a * n_b)`` (updated by Lance-Williams
    on merging). Ties go to the lower row. The member rows of each cluster."""
    size = weights.astype(np.float64).copy()
    similarity = ((sums @ np.ascontiguousarray(sums.T)) / np.outer(size, size)).astype(np.float32)
    np.fill_diagonal(similarity, -np.inf)
    members: list[list[int]] = [[i] for i in range(len(sums))]
    active = np.ones(len(sums), dtype=bool)
    done: list[list[int]] = []
    chain: list[int] = []
    while chain or active.any():
        if not chain:
            chain.append(int(np.argmax(active)))
        a = chain[-1]
        row = similarity[a]
        b = int(np.argmax(row))
        if len(chain) >= 2 and row[chain[-2]] >= row[b]:
            b = chain[-2]  # reciprocal nearest neighbours: merge them (never a cycle on a tie)
        if not row[b] >= threshold:  # a weighted mean of values below the threshold stays below: it is final
            done.append(members[a])
            active[a] = False
            similarity[a, :] = similarity[:, a] = -np.inf
            chain.pop()
            continue
        if len(chain) < 2 or b != chain[-2]:
            chain.append(b)
            continue
        chain[-2:] = []
        keep, drop = min(a, b), max(a, b)
        merged = (size[keep] * similarity[keep] + size[drop] * similarity[drop]) / (size[keep] + size[drop])
        similarity[keep, :] = similarity[:, keep] = merged
        similarity[keep, keep] = -np.inf
        similarity[drop, :] = similarity[:, drop] = -np.inf
        active[drop] = False
        size[keep] += size[drop]
        members[keep] += members[drop]
    return done


def cluster_rows(vectors: np.ndarray, weights: np.ndarray, threshold: float) -> list[list[int]]:
    """The clusters of unit ``vectors`` (rows in a canonical order, each standing for ``weights`` messages) by
    average linkage cut at ``threshold`` (see the module docstring): the rows of each, the rows alone included."""
    alone = _isolated(vectors, threshold)
    rows = np.flatnonzero(~alone)
    groups = [np.asarray([i]) for i in rows]
    premerge = 0.8
    while len(groups) > MAX_GROUPS and premerge > threshold:
        groups = [rows[g] for g in _leaders(vectors[rows], weights[rows], premerge)]
        premerge = round(premerge - 0.05, 2)
    dim = vectors.shape[1] if vectors.ndim == 2 else 1
    sums = np.zeros((len(groups), dim), dtype=np.float64)
    for k, group in enumerate(groups):
        sums[k] = weights[group] @ vectors[group].astype(np.float64)
    counts = np.asarray([weights[group].sum() for group in groups], dtype=np.float64)
    found = _average_linkage(sums, counts, threshold)
    clusters = [sorted(int(row) for k in cluster for row in groups[k]) for cluster in found]
    return clusters + [[int(i)] for i in np.flatnonzero(alone)]


def words(text: str) -> set[str]:
    """The words of ``text`` a label can use: lower-cased ``\\w\\w+`` runs, English stop words left out."""
    return {word for word in _WORD.findall(text.lower()) if word not in _STOP_WORDS}


def label_terms(texts: Sequence[str], weights: Sequence[int], idf: Mapping[str, float], most: int) -> tuple[str, ...]:
    """A cluster's label: its :func:`words` found in at least a quarter of its messages (``texts``, each standing
    for ``weights`` messages) and in two of them, ranked by that share times their ``idf`` (then alphabetically),
    the first ``most``."""
    size = sum(weights)
    present: Counter[str] = Counter()
    for text, weight in zip(texts, weights, strict=True):
        for word in words(text):
            present[word] += weight
    ranked = sorted(
        (-(count / size) * idf.get(word, 1.0), word)
        for word, count in present.items()
        if count >= max(2.0, _LABEL_SHARE * size)
    )
    return tuple(word for _, word in ranked[:most])
