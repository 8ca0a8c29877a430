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
import zlib
from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np

from norma.errors import InvalidInputError

__all__ = ["MAX_PROBES", "MIN_PROBES", "pick_probes", "probe_similarities", "text_key"]

MIN_PROBES = 20
"""Fewest probes whose similarities are worth a quantile (the matcher measures no rulebook, and adapting stores no
held-out similarities, below it)."""
MAX_PROBES = 2048
"""Most texts a measurement probes (those with the smallest :func:`text_key`)."""
_PROBE_BLOCK = 256  # probes x rows scored at once: at most 256 x 16,384 float32 (16 MB)
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


def probe_similarities(matrix: np.ndarray, texts: Sequence[str | None], probes: Sequence[int]) -> np.ndarray:
    """Each probe's best cosine to every other text: for each row number in ``probes``, the largest dot product of
    its row of ``matrix`` (unit vectors, one text each: ``texts[row]``) with a row holding another text; its own row
    and every row of the same text are left out, and so is a row whose text is None (a free row). 0 where no row is
    left. float64, aligned with ``probes``; computed in float32, in blocks whose size does not change the result."""
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
    best = np.full(len(probes), -np.inf, dtype=np.float32)
    for first in range(0, len(probes), _PROBE_BLOCK):
        block = np.ascontiguousarray(matrix[np.asarray(probes[first : first + _PROBE_BLOCK], dtype=np.intp)])
        left_out = [(j, row) for j, text in enumerate(probe_texts[first : first + len(block)]) for row in same[text]]
        for start in range(0, len(matrix), _ROW_BLOCK):
            end = min(start + _ROW_BLOCK, len(matrix))
            scores = block @ matrix[start:end].T
            scores[:, free[start:end]] = -np.inf
            for j, row in left_out:
                if start <= row < end:
                    scores[j, row - start] = -np.inf
            found = best[first : first + len(block)]
            np.maximum(found, scores.max(axis=1, initial=-np.inf), out=found)
    return np.where(np.isfinite(best), best, 0.0).astype(np.float64)
