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

__all__ = ["MAX_PROBES", "MIN_PROBES", "exact_grid", "pick_probes", "probe_similarities", "text_key"]

MIN_PROBES = 20
"""Fewest probes whose similarities are worth a quantile (the matcher measures no rulebook, and adapting stores no
held-out similarities, below it)."""
MAX_PROBES = 2048
"""Most texts a measurement probes (those with the smallest :func:`text_key`)."""
_PROBE_BLOCK = 256  # probes x rows scored at once: at most 256 x 16,384 float64 (32 MB)
_ROW_BLOCK = 16_384

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


def exact_grid(matrix: np.ndarray) -> tuple[np.ndarray, float]:
    """``matrix`` rounded to a grid on which float64 dot products are exact: integer-valued float64 rows and the
    factor that turns a dot product of two of them back into a cosine.

    Each value becomes an integer of at most ``2**k`` in magnitude, ``k`` chosen so that ``dim * 4**k <= 2**53``
    (22 bits for 384 dimensions): every product and every partial sum of a dot product is then an integer that
    float64 holds exactly, so the BLAS may sum in any order, split the work by any block shape or thread count, and
    use FMA or not, on any CPU: the result is the same bits. The grid's step comes from the largest magnitude of the
    whole matrix (a power of two), so a row's values never depend on which block it is scored in. Rounding to the
    grid moves a cosine of unit vectors by at most ``2**-k * sqrt(dim)`` (5e-6 at 384 dimensions; in practice 1e-7).
    """
    values = np.asarray(matrix, dtype=np.float64)
    dim = values.shape[1] if values.ndim == 2 else 0
    top = float(np.max(np.abs(values))) if values.size else 0.0
    if not np.isfinite(top):
        raise InvalidInputError("the vectors hold a NaN or an infinity", location="matrix")
    if top == 0.0:
        return np.zeros(values.shape, dtype=np.float64), 1.0
    bits = (53 - max(dim - 1, 1).bit_length()) // 2  # dim * 4**bits <= 2**53
    exponent = math.frexp(top)[1]  # top < 2**exponent
    step = math.ldexp(1.0, exponent - bits)  # |value / step| <= 2**bits
    return np.rint(values / step), step * step


def probe_similarities(matrix: np.ndarray, texts: Sequence[str | None], probes: Sequence[int]) -> np.ndarray:
    """Each probe's best cosine to every other text: for each row number in ``probes``, the largest dot product of
    its row of ``matrix`` (unit vectors, one text each: ``texts[row]``) with a row holding another text; its own row
    and every row of the same text are left out, and so is a row whose text is None (a free row). 0 where no row is
    left. float64, aligned with ``probes``.

    The dot products are exact on :func:`exact_grid` (within 1e-6 of the float32 cosines), so the result is the
    same bits whatever the block sizes, the thread count and the CPU (a float32 matrix product is not: the BLAS picks
    its kernels and summation order by shape and CPU, issue #55)."""
    if len(texts) != len(matrix):
        raise InvalidInputError(f"{len(texts)} texts for {len(matrix)} rows of vectors", location="texts")
    probe_texts = [texts[row] for row in probes]
    same: dict[str | None, list[int]] = {text: [] for text in probe_texts}
    free_rows: list[int] = []
    for row, text in enumerate(texts):
        if text in same:
            same[text].append(row)
        if text is None:
            free_rows.append(row)
    free = np.zeros(len(texts), dtype=bool)
    free[free_rows] = True
    grid, unit = exact_grid(matrix)
    best = np.full(len(probes), -np.inf, dtype=np.float64)
    for first in range(0, len(probes), _PROBE_BLOCK):
        block = grid[np.asarray(probes[first : first + _PROBE_BLOCK], dtype=np.intp)]
        left_out = [(j, row) for j, text in enumerate(probe_texts[first : first + len(block)]) for row in same[text]]
        for start in range(0, len(grid), _ROW_BLOCK):
            end = min(start + _ROW_BLOCK, len(grid))
            scores = block @ grid[start:end].T
            scores[:, free[start:end]] = -np.inf
            for j, row in left_out:
                if start <= row < end:
                    scores[j, row - start] = -np.inf
            found = best[first : first + len(block)]
            np.maximum(found, scores.max(axis=1, initial=-np.inf), out=found)
    return np.where(np.isfinite(best), best * unit, 0.0)
