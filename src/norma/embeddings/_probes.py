"""Probe similarities: how close a rulebook's texts come to one another under an encoder.

A probe is one text of a rulebook (an example); its similarity is its best cosine to every *other* text of the
rulebook, identical texts left out (a text shared by two rules, or written twice, does not measure itself). At most
:data:`MAX_PROBES` texts are probed, those with the smallest CRC-32 keys (:func:`pick_probes`), so that the same
texts are probed whatever order they come in; fewer than :data:`MIN_PROBES` are not worth a quantile.

Two callers measure this way and must agree: the matcher (``norma.matching``) on a rulebook's examples, left out
one at a time, and :func:`~norma.embeddings.adapt_encoder` on the examples it held out of a first training run.
What a caller makes of the similarities is its own business.
"""

from __future__ import annotations

import heapq
import math
import zlib
from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np

from norma.errors import InvalidInputError

__all__ = [
    "MAX_PROBES",
    "MIN_PROBES",
    "grid_step",
    "on_grid",
    "pick_probes",
    "probe_similarities",
    "probe_similarities_by_owner",
    "text_key",
]

MIN_PROBES = 20
"""Fewest probes whose similarities are worth a quantile (the matcher measures no rulebook, and adapting stores no
held-out similarities, below it)."""
MAX_PROBES = 2048
"""Most texts a measurement probes (those with the smallest :func:`text_key`)."""
_PROBE_BLOCK = 256  # probes x rows scored at once: at most 256 x 8,192 float64 (16 MB)
_ROW_BLOCK = 8_192  # rows put on the grid at once: 8,192 x 384 float64 (25 MB)

T = TypeVar("T")


def text_key(text: str) -> int:
    """The CRC-32 of ``text`` (UTF-8): the key that picks probes, and that a sketch of trained texts keeps."""
    return zlib.crc32(text.encode("utf-8"))


def pick_probes(keyed: Iterable[tuple[str, T]], count: int = MAX_PROBES) -> list[T]:
    """Of ``(key text, item)`` pairs, the items of the ``count`` key texts with the smallest :func:`text_key`,
    smallest first (ties: by key text, then in the order given): the same items whatever order the others come in.
    """
    decorated = (
        (zlib.crc32(text.encode("utf-8")), text, order, item) for order, (text, item) in enumerate(keyed)
    )  # the order given breaks the last ties, so items are never compared
    return [entry[3] for entry in heapq.nsmallest(count, decorated)]


def grid_step(matrix: np.ndarray) -> float:
    """The step of the grid on which dot products of ``matrix``'s rows are exact in float64 (see
    :func:`on_grid`): a power of two such that every value is at most ``2**k`` steps from 0, ``k`` chosen so that
    ``dim * 4**k <= 2**53`` (22 bits for 384 dimensions). For unit vectors (every value within 1) it is ``2**(1-k)``
    whatever the rows, so a row's grid values depend on that row alone; larger values widen it (the largest magnitude
    of the whole matrix, so never on the block a row is scored in)."""
    dim = matrix.shape[1] if matrix.ndim == 2 else 0
    top = float(np.max(np.abs(matrix))) if matrix.size else 0.0
    if not np.isfinite(top):
        raise InvalidInputError("the vectors hold a NaN or an infinity", location="matrix")
    if top == 0.0:
        return 1.0
    bits = (53 - max(dim - 1, 1).bit_length()) // 2  # dim * 4**bits <= 2**53
    exponent = max(math.frexp(top)[1], 1)  # top < 2**exponent, and 2 >= every unit vector's bound
    return math.ldexp(1.0, exponent - bits)  # |value / step| <= 2**bits


def on_grid(rows: np.ndarray, step: float) -> np.ndarray:
    """``rows`` as integer-valued float64: each value rounded to a multiple of ``step`` (:func:`grid_step`), in
    steps. Every product and every partial sum of a dot product of two such rows is an integer below ``2**53``, which
    float64 holds exactly: the BLAS may sum in any order, split the work by any block shape or thread count, and use
    FMA or not, on any CPU, and the result is the same bits. ``step**2`` turns such a dot product back into a cosine;
    rounding moves a cosine of unit vectors by at most ``step * sqrt(dim)`` (1e-5 at 384 dimensions; 7e-7
    measured on random unit vectors)."""
    return np.rint(np.asarray(rows, dtype=np.float64) / step)


def probe_similarities(matrix: np.ndarray, texts: Sequence[str | None], probes: Sequence[int]) -> np.ndarray:
    """Each probe's best cosine to every other text: for each row number in ``probes``, the largest dot product of
    its row of ``matrix`` (unit vectors, one text each: ``texts[row]``) with a row holding another text; its own row
    and every row of the same text are left out, and so is a row whose text is None (a free row). 0 where no row is
    left. float64, aligned with ``probes``.

    The dot products are exact on a grid (:func:`on_grid`; within 1e-5 of the float32 cosines), so the result is the
    same bits whatever the block sizes, the thread count and the CPU (a float32 matrix product is not: the BLAS picks
    its kernels and summation order by shape and CPU, issue #55)."""
    _, other = probe_similarities_by_owner(matrix, texts, probes, np.arange(len(matrix)))
    return np.where(np.isfinite(other), other, 0.0)


def probe_similarities_by_owner(
    matrix: np.ndarray, texts: Sequence[str | None], probes: Sequence[int], owners: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`probe_similarities` split by owner (``owners[row]``: the rule a row belongs to): each probe's best
    cosine to another text of its own owner, and to a text of another owner; -inf where there is none. Exact the same
    way (the same bits on every CPU)."""
    if len(texts) != len(matrix):
        raise InvalidInputError(f"{len(texts)} texts for {len(matrix)} rows of vectors", location="texts")
    if len(owners) != len(matrix):
        raise InvalidInputError(f"{len(owners)} owners for {len(matrix)} rows of vectors", location="owners")
    probe_rows = np.asarray(probes, dtype=np.intp)
    probe_texts = [texts[row] for row in probe_rows.tolist()]
    same: dict[str | None, list[int]] = {text: [] for text in probe_texts}
    free = np.zeros(len(texts), dtype=bool)
    for row, text in enumerate(texts):
        if text in same:
            same[text].append(row)
        if text is None:
            free[row] = True
    owners = np.asarray(owners)
    probe_owners = owners[probe_rows]
    by_owner: dict[int, list[int]] = {int(owner): [] for owner in probe_owners.tolist()}
    for row, owner in enumerate(owners.tolist()):
        if owner in by_owner:
            by_owner[owner].append(row)
    left_out = _cells((j, row) for j, text in enumerate(probe_texts) for row in same[text])
    own = _cells((j, row) for j, owner in enumerate(probe_owners.tolist()) for row in by_owner[owner])
    step = grid_step(matrix)
    picked = on_grid(matrix[probe_rows], step)
    best_own = np.full(len(probe_rows), -np.inf, dtype=np.float64)
    best_other = np.full(len(probe_rows), -np.inf, dtype=np.float64)
    for start in range(0, len(matrix), _ROW_BLOCK):  # each row put on the grid once
        end = min(start + _ROW_BLOCK, len(matrix))
        rows = on_grid(matrix[start:end], step).T
        for first in range(0, len(probe_rows), _PROBE_BLOCK):
            last = min(first + _PROBE_BLOCK, len(probe_rows))
            scores = picked[first:last] @ rows
            scores[:, free[start:end]] = -np.inf
            j, column = _within(left_out, first, last, start, end)
            scores[j, column] = -np.inf
            j, column = _within(own, first, last, start, end)
            np.maximum.at(best_own, j + first, scores[j, column])
            scores[j, column] = -np.inf
            found = best_other[first:last]
            np.maximum(found, scores.max(axis=1, initial=-np.inf), out=found)
    scale = step * step
    return best_own * scale, best_other * scale


def _cells(pairs: Iterable[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(probe, row) pairs as two arrays."""
    flat = np.fromiter((value for pair in pairs for value in pair), dtype=np.intp)
    return flat[0::2], flat[1::2]


def _within(
    cells: tuple[np.ndarray, np.ndarray], first: int, last: int, start: int, end: int
) -> tuple[np.ndarray, np.ndarray]:
    """The cells in probes ``first:last`` and rows ``start:end``, as positions in that block."""
    j, row = cells
    inside = (j >= first) & (j < last) & (row >= start) & (row < end)
    return j[inside] - first, row[inside] - start
