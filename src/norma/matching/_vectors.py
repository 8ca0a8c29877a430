"""The vector side: every rule's vectors in one float32 matrix, exact dot products, an HNSW index at scale.

Rows hold the vectors of :func:`~norma.matching.rule_texts` (the rule's own text, then each example); ``row_slot``
maps a row to its rule's slot (-1 for a free row). Updates append rows and free the old ones; the matrix is
compacted when a quarter of it is free. A rule's similarity is the max over its rows (ADR-002 option D).

Below that size the scan that picks candidates runs on an int8 copy of the matrix (per-row scale, simsimd's exact
integer dot products, a quarter of the memory traffic) and yields, for every rule, a lower and an upper bound of
its float32 similarity: ``|r.q - (s_r r8).(s_q q8)| <= e_r |q| + |s_r r8| e_q`` where ``e_r`` and ``e_q`` are the
lengths of the rounding residuals. Every rule whose upper bound reaches the k-th largest lower bound is rescored
exactly, so the candidates are those of an exact scan (docs/design/040-matching.md).

Above ``hnsw_min_rows`` rows, :meth:`VectorIndex.search` asks a usearch HNSW index (inner product, int8 storage)
for candidate rows instead of scanning the matrix; the matcher then rescores the candidates exactly. The HNSW index
is built on first use past the threshold (in a background thread by default: matches scan exactly until it is
ready) and then kept in step with every update.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from norma.errors import InvalidInputError
from norma.matching._packed import PackedRows

_simsimd: Any
try:
    import simsimd as _simsimd
except ImportError:  # pragma: no cover - a dependency; without it the float32 scan is used
    _simsimd = None

__all__ = ["VectorIndex", "int8_scan_available", "quantize_rows"]

_HNSW_CONNECTIVITY = 16
_HNSW_EXPANSION_ADD = 64
_HNSW_EXPANSION_SEARCH = 64
_PACKED_MIN_ROWS = 2048  # below, simsimd's scan is about as fast as a call into onnxruntime
_QUANTIZE_CHUNK = 4096  # rows quantised per pass (float64 temporaries of 4096 x dim)
_Q8_LIMIT = 127.0  # symmetric: -128 is never used, so every SIMD kernel's integer sum is exact
_BOUND_SLACK = 1e-5  # float32 rounding of the bound arithmetic itself (values are ~1, an ulp is 6e-8)


def int8_scan_available() -> bool:
    """Whether the int8 candidate scan can run (simsimd is importable)."""
    return _simsimd is not None


def quantize_rows(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Symmetric per-row int8 quantisation: ``(q8, scale, residual)`` with ``vectors[i] ~ scale[i] * q8[i]`` and
    ``residual[i] = |vectors[i] - scale[i] * q8[i]|`` (float64, exact to rounding) for the error bound."""
    given = np.asarray(vectors)
    exact = np.asarray(given, dtype=np.float64)
    # abs and max are exact in any float type: the peak of float32 rows is taken before widening them (one float64
    # temporary less); the temporaries below are reused in place (same values, fewer fresh pages)
    peak = np.abs(given).max(axis=1).astype(np.float64) if exact.size else np.zeros(len(exact))
    scale = np.where(peak > 0, peak / _Q8_LIMIT, 1.0)
    levels = np.divide(exact, scale[:, None])
    np.rint(levels, out=levels)  # |x| / (peak / 127) <= 127 (+ rounding), so within [-127, 127]
    difference = np.multiply(levels, scale[:, None])
    np.subtract(exact, difference, out=difference)
    residual = np.sqrt(np.einsum("ij,ij->i", difference, difference))
    return levels.astype(np.int8), scale, residual


class VectorIndex:
    """Rule vectors by slot; not thread-safe (the matcher locks)."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._matrix = np.zeros((16, dim), dtype=np.float32)
        self._q8 = np.zeros((16, dim), dtype=np.int8)  # the int8 copy the candidate scan reads
        self._q8_scale = np.zeros(16, dtype=np.float32)  # per row: int8 scale and rounding residual length
        self._q8_residual = np.zeros(16, dtype=np.float32)
        self._quantized = 0  # rows below this one have their int8 copy (quantised in bulk at the next scan)
        self._row_slot = np.full(16, -1, dtype=np.intp)
        self._rows_used = 0
        self._free = 0
        self._slot_rows: dict[int, np.ndarray] = {}
        self._centroid_norm: dict[int, float] = {}
        self._hnsw: Any = None
        self._identity_size = -1
        self._identity_ok = False
        self._generation = 0  # bumped when rows are renumbered
        self._packed: PackedRows | None = None  # the int8 rows as one prepacked matrix (see _packed.py)
        self._packed_generation = -1
        self._packed_failed = False
        self._build_thread: threading.Thread | None = None
        self._pending: tuple[int, Any] | None = None
        self._journal: list[tuple[np.ndarray, np.ndarray | None]] | None = None

    @property
    def rows(self) -> int:
        """Live vectors."""
        return self._rows_used - self._free

    def rows_of(self, slot: int) -> np.ndarray:
        """The vectors of ``slot``, in :func:`rule_texts` order."""
        rows: np.ndarray = self._matrix[self._slot_rows[slot]]
        return rows

    def row_ids(self, slot: int) -> np.ndarray:
        """The row numbers of ``slot``'s vectors."""
        return self._slot_rows[slot]

    @property
    def has_centroids(self) -> bool:
        """Whether some slot has 2+ example vectors (and so an example centroid)."""
        return bool(self._centroid_norm)

    def centroid_norm(self, slot: int) -> float | None:
        """The length of the mean of ``slot``'s example vectors (2+ examples), None otherwise."""
        return self._centroid_norm.get(slot)

    def live_view(self) -> tuple[np.ndarray, np.ndarray]:
        """``(matrix, row_slot)``: views of every row in use (``row_slot`` -1 for a freed row); read under the
        matcher's lock, they change with the next update."""
        used = self._rows_used
        return self._matrix[:used], self._row_slot[:used]

    def matrix_rows(self, rows: np.ndarray) -> np.ndarray:
        """The vectors at ``rows``."""
        picked: np.ndarray = self._matrix[rows]
        return picked

    def set(self, slot: int, vectors: np.ndarray) -> None:
        """Store (or replace) the vectors of ``slot``."""
        self.remove(slot)
        self._identity_size = -1
        count = len(vectors)
        if self._rows_used + count > len(self._matrix):
            self._grow(self._rows_used + count)
        rows = np.arange(self._rows_used, self._rows_used + count, dtype=np.intp)
        self._matrix[rows] = vectors
        self._row_slot[rows] = slot
        self._rows_used += count
        self._slot_rows[slot] = rows
        if count >= 3:  # the rule's text and 2+ examples
            self._centroid_norm[slot] = float(np.linalg.norm(np.asarray(vectors[1:], dtype=np.float64).mean(axis=0)))
        if self._hnsw is not None:
            self._hnsw.add(rows.astype(np.uint64), vectors)
        if self._journal is not None:
            self._journal.append((rows, np.array(vectors, dtype=np.float32)))

    def set_many(self, slots: Sequence[int], blocks: Sequence[np.ndarray]) -> None:
        """:meth:`set` for many slots (distinct) at once, ``blocks[i]`` the vectors of ``slots[i]``: the same rows,
        in that order, and the same centroid lengths, without the per-call overhead (a rulebook read back whole)."""
        for slot in slots:
            if slot in self._slot_rows:
                self.remove(slot)
        if not slots:
            return
        self._identity_size = -1
        counts = np.fromiter((len(block) for block in blocks), dtype=np.intp, count=len(blocks))
        total = int(counts.sum())
        start = self._rows_used
        if start + total > len(self._matrix):
            self._grow(start + total)
        matrix, slot_rows = self._matrix, self._slot_rows
        rows = np.arange(start, start + total, dtype=np.intp)
        ends = np.cumsum(counts) + start
        begins = ends - counts
        for slot, block, begin, end in zip(slots, blocks, begins.tolist(), ends.tolist(), strict=True):
            matrix[begin:end] = block
            slot_rows[slot] = rows[begin - start : end - start]
        self._row_slot[start : start + total] = np.repeat(np.asarray(slots, dtype=np.intp), counts)
        self._rows_used += total
        for count in np.unique(counts[counts >= 3]).tolist():  # the rules with 2+ examples, by row count
            which = np.flatnonzero(counts == count)
            first = begins[which]
            # the float64 mean of each rule's example rows, added in the order set()'s mean(axis=0) adds them
            total_rows = matrix[first + 1].astype(np.float64)
            for example in range(2, count):
                total_rows += matrix[first + example]
            total_rows /= count - 1
            for position, mean in zip(which.tolist(), total_rows, strict=True):
                self._centroid_norm[slots[position]] = math.sqrt(mean.dot(mean))  # np.linalg.norm of a vector
        if self._hnsw is not None:
            self._hnsw.add(rows.astype(np.uint64), matrix[start : start + total])
        if self._journal is not None:
            self._journal.append((rows, np.array(matrix[start : start + total], dtype=np.float32)))

    def remove(self, slot: int) -> None:
        """Forget the vectors of ``slot`` (nothing if it has none)."""
        rows = self._slot_rows.pop(slot, None)
        self._centroid_norm.pop(slot, None)
        if rows is None:
            return
        self._row_slot[rows] = -1
        self._identity_size = -1
        self._matrix[rows] = 0.0  # (its int8 copy is left: a free row's scores are never read)
        self._free += len(rows)
        if self._hnsw is not None:
            self._hnsw.remove(rows.astype(np.uint64))
        if self._journal is not None:
            self._journal.append((rows, None))
        if self._free > 64 and self._free * 4 > self._rows_used:
            self._compact()

    def _grow(self, needed: int) -> None:
        size = max(needed, 2 * len(self._matrix))
        used = self._rows_used
        matrix = np.zeros((size, self.dim), dtype=np.float32)
        matrix[:used] = self._matrix[:used]
        row_slot = np.full(size, -1, dtype=np.intp)
        row_slot[:used] = self._row_slot[:used]
        self._matrix, self._row_slot = matrix, row_slot
        done = self._quantized
        for name in ("_q8", "_q8_scale", "_q8_residual"):
            old = getattr(self, name)
            new = np.zeros((size, *old.shape[1:]), dtype=old.dtype)  # zero pages: no memory until written
            new[:done] = old[:done]
            setattr(self, name, new)

    def _compact(self) -> None:
        live = np.flatnonzero(self._row_slot[: self._rows_used] >= 0)
        new_of_old = np.full(self._rows_used, -1, dtype=np.intp)
        new_of_old[live] = np.arange(len(live), dtype=np.intp)
        self._matrix[: len(live)] = self._matrix[live]
        self._matrix[len(live) : self._rows_used] = 0.0
        quantized = live[live < self._quantized]  # live rows keep their order: these come first
        for array in (self._q8, self._q8_scale, self._q8_residual):
            array[: len(quantized)] = array[quantized]
        self._quantized = len(quantized)
        self._row_slot[: len(live)] = self._row_slot[live]
        self._row_slot[len(live) : self._rows_used] = -1
        self._slot_rows = {slot: new_of_old[rows] for slot, rows in self._slot_rows.items()}
        self._rows_used = len(live)
        self._free = 0
        self._identity_size = -1
        self._hnsw = None  # row keys changed: rebuilt on next use
        self._generation += 1

    def rule_similarities(self, queries: np.ndarray, size: int, *, blas: bool = False) -> np.ndarray:
        """Max cosine over each slot's rows for each query: shape ``(len(queries), size)``, -inf for empty slots.

        ``queries`` is ``(q, dim)``; one product for all of them: numpy's single-threaded ``einsum`` by default
        (immune to BLAS threads fighting other work for the cores), the BLAS matrix product with ``blas=True``.
        """
        used = self._rows_used
        if used == 0:
            return np.full((len(queries), size), -np.inf, dtype=np.float32)
        matrix = self._matrix[:used]
        sims: np.ndarray = queries @ matrix.T if blas else np.einsum("qd,rd->qr", queries, matrix)  # (q, rows)
        if used == size and self._free == 0 and self._identity(size):
            return sims  # one row per slot, row i = slot i (rules without examples, never updated)
        out = np.full((len(queries), size + 1), -np.inf, dtype=np.float32)
        slots = np.where(self._row_slot[:used] >= 0, self._row_slot[:used], size)
        for i in range(len(queries)):
            np.maximum.at(out[i], slots, sims[i])
        return out[:, :size]

    def similarity_bounds(self, queries: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper bounds (float32) of each slot's similarity, the max over its rows and the query windows,
        from the int8 scan: the float32 similarity of every slot lies between them. -inf for empty slots.

        Needs simsimd (:func:`int8_scan_available`).
        """
        assert _simsimd is not None
        used = self._rows_used
        if used == 0:
            empty = np.full(size, -np.inf, dtype=np.float32)
            return empty, empty.copy()
        for start in range(self._quantized, used, _QUANTIZE_CHUNK):  # rows added since the last scan, in bulk
            end = min(start + _QUANTIZE_CHUNK, used)
            q8, scale, residual = quantize_rows(self._matrix[start:end])
            self._q8[start:end], self._q8_scale[start:end], self._q8_residual[start:end] = q8, scale, residual
            self._quantized = end
        q8, q_scale, q_residual = quantize_rows(queries)
        exact = np.asarray(queries, dtype=np.float64)
        q_norm = np.sqrt(np.einsum("ij,ij->i", exact, exact))
        sums = self._integer_dots(q8, used)
        sums *= self._q8_scale[:used]
        lower = upper = sums[0]
        for i in range(len(queries)):
            approx = sums[i]
            approx *= np.float32(q_scale[i])
            # |r.q - r~.q~| <= |r - r~| |q| + |r~| |q - q~|, and |r~| <= |r| + |r - r~| with |r| = 1 (+ rounding)
            bound = self._q8_residual[:used] * np.float32(q_norm[i] + q_residual[i])
            bound += np.float32((1.0 + 1e-6) * q_residual[i] + _BOUND_SLACK)
            low = approx - bound
            approx += bound
            lower, upper = (low, approx) if i == 0 else (np.maximum(lower, low), np.maximum(upper, approx))
        if used == size and self._free == 0 and self._identity(size):
            return lower, upper
        slots = np.where(self._row_slot[:used] >= 0, self._row_slot[:used], size)
        low_out = np.full(size + 1, -np.inf, dtype=np.float32)
        high_out = np.full(size + 1, -np.inf, dtype=np.float32)
        np.maximum.at(low_out, slots, lower)
        np.maximum.at(high_out, slots, upper)
        return low_out[:size], high_out[:size]

    def _integer_dots(self, q8: np.ndarray, used: int) -> np.ndarray:
        """``q8 @ int8 rows.T`` for the first ``used`` rows as float32: the integer sums are exact, and so is their
        float32 value up to dim 1040 (|sum| <= dim * 127 * 127 < 2**24); past that the conversion's relative error
        (6e-8) is inside ``_BOUND_SLACK``. The packed product covers the rows it was built with, simsimd the rest."""
        assert _simsimd is not None
        packed = self._packed_rows(used)
        start = 0 if packed is None else packed.rows
        # Not cdist's `out=`: simsimd 6.5 drops a reference to None on each such call, which crashes the
        # interpreter in the end.
        tail = None
        if start < used:
            tail = np.asarray(_simsimd.cdist(q8, self._q8[start:used], metric="dot", out_dtype="float32"))
        if packed is None:
            assert tail is not None
            return tail
        head = packed.dots(q8).astype(np.float32)
        return head if tail is None else np.concatenate([head, tail], axis=1)

    def _packed_rows(self, used: int) -> PackedRows | None:
        """The packed int8 matrix, (re)built when missing, renumbered (compaction) or far behind (more than an
        eighth of the rows added since); None below ``_PACKED_MIN_ROWS`` rows or if onnxruntime fails."""
        if used < _PACKED_MIN_ROWS or self._packed_failed:
            return None
        packed = self._packed
        if packed is None or self._packed_generation != self._generation or used - packed.rows > packed.rows // 8:
            try:
                packed = PackedRows(self._q8[:used])
            except Exception:  # pragma: no cover - onnxruntime is a dependency; simsimd alone still answers
                self._packed_failed = True
                return None
            self._packed, self._packed_generation = packed, self._generation
        return packed

    def one_row_per_slot(self, size: int) -> bool:
        """Whether row i holds the only vector of slot i for every slot below ``size`` (no examples, no updates)."""
        return self._rows_used == size and self._free == 0 and self._identity(size)

    def _identity(self, size: int) -> bool:
        if self._identity_size != size:
            self._identity_size = size
            self._identity_ok = bool(np.array_equal(self._row_slot[:size], np.arange(size)))
        return self._identity_ok

    def hnsw_candidates(self, query: np.ndarray, count: int, *, background: bool) -> np.ndarray | None:
        """Slots of the (approximate) ``count`` nearest rows to ``query`` from the HNSW index.

        Without an index yet: ``background`` starts building one in a thread and returns None (the caller scans
        exactly meanwhile); otherwise the index is built now. Updates made during a background build are replayed
        onto the new index before it is used.
        """
        self._install_pending()
        if self._hnsw is None:
            if background:
                self._start_build()
                return None
            index, rows = _new_index(self.dim), self._live_rows()
            if len(rows):
                index.add(rows.astype(np.uint64), self._matrix[rows])
            self._hnsw = index
        found = self._hnsw.search(query, min(count, max(self.rows, 1)))
        rows = np.asarray(found.keys, dtype=np.intp)
        slots = self._row_slot[rows]
        return np.unique(slots[slots >= 0])

    @property
    def has_hnsw(self) -> bool:
        """Whether the HNSW index is built."""
        return self._hnsw is not None

    def wait_for_build(self, timeout: float | None = None) -> bool:
        """Wait for a background HNSW build, if one runs; True when none is left running."""
        thread = self._build_thread
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def _live_rows(self) -> np.ndarray:
        return np.flatnonzero(self._row_slot[: self._rows_used] >= 0)

    def _start_build(self) -> None:
        if self._build_thread is not None:
            return
        rows = self._live_rows()
        vectors = self._matrix[rows].copy()
        generation = self._generation
        self._journal = []

        def build() -> None:
            index = _new_index(self.dim)
            if len(rows):
                index.add(rows.astype(np.uint64), vectors)
            self._pending = (generation, index)

        self._build_thread = threading.Thread(target=build, name="norma-hnsw-build", daemon=True)
        self._build_thread.start()

    def _install_pending(self) -> None:
        pending = self._pending
        if pending is None:
            return
        generation, index = pending
        self._pending = None
        self._build_thread = None
        journal, self._journal = self._journal, None
        if generation != self._generation or journal is None:
            return  # the rows were renumbered meanwhile: build again on next use
        for rows, vectors in journal:
            if vectors is None:
                index.remove(rows.astype(np.uint64))
            else:
                index.add(rows.astype(np.uint64), vectors)
        self._hnsw = index


def _new_index(dim: int) -> Any:
    try:
        from usearch.index import Index
    except ImportError as exc:  # pragma: no cover - usearch is a dependency
        raise InvalidInputError("usearch is needed for the HNSW index", hint="pip install usearch") from exc
    return Index(
        ndim=dim,
        metric="ip",
        dtype="i8",
        connectivity=_HNSW_CONNECTIVITY,
        expansion_add=_HNSW_EXPANSION_ADD,
        expansion_search=_HNSW_EXPANSION_SEARCH,
    )
