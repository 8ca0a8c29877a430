"""The by-slot work buffers of a match: exact similarities and best rows, reused from match to match.

A match rescores a few dozen slots exactly; writing their scores into by-slot arrays keeps the later stages simple
(index by slot), and reusing the arrays (all NaN between matches) means a match at 100k rules allocates no
100k-long array. A matcher owns one :class:`ScoreBuffers` and uses it under its lock, one match at a time.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ExactScores", "ScoreBuffers"]


class ExactScores:
    """One match's exact similarity (NaN: not rescored) and best row, by slot; :meth:`clear` when done."""

    __slots__ = ("_touched", "rows", "values")

    def __init__(self, values: np.ndarray, rows: np.ndarray) -> None:
        self.values = values
        self.rows = rows
        self._touched: list[np.ndarray] = []

    def record(self, slots: np.ndarray, scores: tuple[np.ndarray, np.ndarray]) -> None:
        """Store the exact similarities and best rows of ``slots`` (aligned with them)."""
        self.values[slots], self.rows[slots] = scores
        self._touched.append(slots)

    def clear(self) -> None:
        """Set every recorded slot back to NaN, for the next match."""
        for slots in self._touched:
            self.values[slots] = np.nan
        self._touched.clear()


class ScoreBuffers:
    """A matcher's buffers, grown to twice the slots when too short; not thread-safe (the matcher locks)."""

    def __init__(self) -> None:
        self._values: np.ndarray | None = None
        self._rows = np.zeros(0, dtype=np.intp)
        self._exact: ExactScores | None = None

    def exact_scores(self, size: int) -> ExactScores:
        """The buffers of ``size`` slots (all NaN)."""
        if self._values is None or len(self._values) < size:
            self._values = np.full(max(size, 16) * 2, np.nan, dtype=np.float64)
            self._rows = np.zeros(max(size, 16) * 2, dtype=np.intp)
            self._exact = None
        exact = self._exact
        if exact is None or len(exact.values) != size:
            exact = self._exact = ExactScores(self._values[:size], self._rows[:size])
        return exact
