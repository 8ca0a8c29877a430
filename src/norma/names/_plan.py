"""Choosing which edits of one name part to return, so the part's similarity and length scores come out high.

Every candidate edit falls in one *cell*: (phonetic level, orthographic level), where a level is Light, Medium,
Far or none. For ``k`` variations and a target share ``p`` per level, the validator rewards a level fully when
exactly ``t = int(p * k)`` variations fall in it, linearly below, and almost not at all above (``1 - exp(-(r-1))``);
a variation that falls in no counted level costs ``0.1 / k``. So the best choice puts at most ``t`` variations in
each counted level of each kind and the rest nowhere; within that, it prefers same-length edits.

That is a small min-cost flow: source -> phonetic level (capacity ``t``, gain ``0.3 * (p / t + 0.1 / k)``) ->
cell (one unit per candidate, gain ``0.15 * length_score / k``, best first) -> orthographic level (same gains) ->
sink, with a *free* level per kind that takes any number at no gain. Successive shortest paths (Bellman-Ford on
ten nodes) route ``k`` units one at a time; the costs are convex, so the result is optimal for this model. The
model prices a level past its target linearly, while the validator's ``1 - exp(-(r - 1))`` first drops and then
climbs back; when the pool forces overflow (no string falls outside every level) a local search that moves units
between cells on the exact value finishes the job.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from norma.names._compat import SIMILARITY_LEVELS, Compat
from norma.names._formulas import (
    LENGTH_WEIGHT,
    SIMILARITY_WEIGHT,
    UNIQUENESS_WEIGHT,
    UNMATCHED_PENALTY,
    combined_similarity,
    level_credit,
)
from norma.names._labels import LEVELS

__all__ = ["FREE", "Candidate", "PartPlan", "level_of", "plan_part"]

_OVERFLOW = 1.0
FREE = 3
"""The level index of a score that falls in no level (or in a level the distribution does not count)."""


@dataclass(frozen=True)
class Candidate:
    """One edit of a name part with what the validator would make of it."""

    text: str
    phonetic: int
    """Phonetic level index: 0 Light, 1 Medium, 2 Far, 3 none."""
    orthographic: int
    """Orthographic level index, same encoding."""
    length: float
    """The validator's length score of this edit against the part."""


@dataclass
class PartPlan:
    """The chosen edits of one part for ``k`` variations, and the alternates left in each cell."""

    k: int
    value: float
    """Estimated ``0.6 * similarity + 0.15 * length + 0.10 * uniqueness`` (the count score is added elsewhere)."""
    chosen: list[Candidate] = field(default_factory=list)
    cells: list[tuple[int, int]] = field(default_factory=list)
    """The cell of each chosen candidate (aligned with ``chosen``)."""
    spares: dict[tuple[int, int], list[Candidate]] = field(default_factory=dict)
    """Candidates left in each cell, best first: replacements that keep the plan's levels."""


def level_of(score: float, kind: str, compat: Compat) -> int:
    """The index of the level ``score`` falls in for ``kind`` ("phonetic" or "orthographic"), or :data:`FREE`."""
    for index, level in enumerate(LEVELS):
        if SIMILARITY_LEVELS[compat][kind][level].contains(score):
            return index
    return FREE


def _targets(distribution: Mapping[str, float], k: int) -> list[tuple[float, int]]:
    """(share, target) per level; a level with no share or a zero target counts nothing (like the free level)."""
    out = []
    for level in LEVELS:
        share = float(distribution.get(level, 0.0))
        target = int(share * k) if share > 0 else 0
        out.append((share, target) if target > 0 else (0.0, 0))
    return out


def kind_quality(counts: Sequence[int], targets: Sequence[tuple[float, int]], k: int) -> float:
    """The validator's per-kind similarity quality for ``counts`` per level (index 3 = free)."""
    quality = 0.0
    matched = 0
    for level in range(3):
        share, target = targets[level]
        if target > 0:
            quality += share * level_credit(counts[level] / target)
            matched += counts[level]
    quality -= UNMATCHED_PENALTY * (k - matched) / k
    return max(0.0, quality)


def plan_part(
    candidates: Sequence[Candidate], k: int, phonetic: Mapping[str, float], orthographic: Mapping[str, float]
) -> PartPlan:
    """Pick ``k`` candidates (fewer if the pool is smaller) that maximise the part's estimated score."""
    ptargets = _targets(phonetic, k)
    otargets = _targets(orthographic, k)
    prow = [level if ptargets[level][1] > 0 else FREE for level in range(3)] + [FREE]
    ocol = [level if otargets[level][1] > 0 else FREE for level in range(3)] + [FREE]
    cells: dict[tuple[int, int], list[Candidate]] = {}
    for cand in candidates:
        cells.setdefault((prow[cand.phonetic], ocol[cand.orthographic]), []).append(cand)
    for members in cells.values():
        members.sort(key=lambda c: -c.length)
    taken = _improve(cells, _route(cells, k, ptargets, otargets), k, ptargets, otargets)
    plan = PartPlan(k=k, value=0.0)
    for key, members in cells.items():
        n = taken.get(key, 0)
        plan.chosen.extend(members[:n])
        plan.cells.extend([key] * n)
        plan.spares[key] = members[n:]
    if plan.chosen:
        pcounts = [0, 0, 0, 0]
        ocounts = [0, 0, 0, 0]
        for cand in plan.chosen:
            pcounts[prow[cand.phonetic]] += 1
            ocounts[ocol[cand.orthographic]] += 1
        n = len(plan.chosen)
        sim = combined_similarity(kind_quality(pcounts, ptargets, n), kind_quality(ocounts, otargets, n))
        length = sum(c.length for c in plan.chosen) / n
        plan.value = SIMILARITY_WEIGHT * sim + LENGTH_WEIGHT * length + UNIQUENESS_WEIGHT
    return plan


def _counts_value(
    cells: Mapping[tuple[int, int], list[Candidate]],
    taken: Mapping[tuple[int, int], int],
    ptargets: Sequence[tuple[float, int]],
    otargets: Sequence[tuple[float, int]],
) -> float:
    """The part's estimated value for ``taken`` units per cell (best-length members first)."""
    n = sum(taken.values())
    if n == 0:
        return 0.0
    pcounts = [0, 0, 0, 0]
    ocounts = [0, 0, 0, 0]
    length = 0.0
    for (i, j), units in taken.items():
        pcounts[i] += units
        ocounts[j] += units
        length += sum(c.length for c in cells[(i, j)][:units])
    sim = combined_similarity(kind_quality(pcounts, ptargets, n), kind_quality(ocounts, otargets, n))
    return SIMILARITY_WEIGHT * sim + LENGTH_WEIGHT * length / n + UNIQUENESS_WEIGHT


def _improve(
    cells: Mapping[tuple[int, int], list[Candidate]],
    taken: dict[tuple[int, int], int],
    k: int,
    ptargets: Sequence[tuple[float, int]],
    otargets: Sequence[tuple[float, int]],
) -> dict[tuple[int, int], int]:
    """Move units between cells while the exact value rises: the flow prices a level's overflow linearly, but the
    validator's ``1 - exp(-(r - 1))`` first drops and then climbs back, so moving several units at once can pay."""
    taken = {key: taken.get(key, 0) for key in cells}
    current = _counts_value(cells, taken, ptargets, otargets)
    for _round in range(4 * k):
        best: tuple[float, tuple[int, int], tuple[int, int], int] | None = None
        for source, units in list(taken.items()):
            for target, members in cells.items():
                room = len(members) - taken[target]
                if target == source or room <= 0:
                    continue
                for moved in range(1, min(units, room) + 1):
                    taken[source] -= moved
                    taken[target] += moved
                    value = _counts_value(cells, taken, ptargets, otargets)
                    taken[target] -= moved
                    taken[source] += moved
                    if value > current + 1e-12 and (best is None or value > best[0]):
                        best = (value, source, target, moved)
        if best is None:
            pair = _best_pair_move(cells, taken, current, ptargets, otargets)
            if pair is None:
                break
            current, first, second, target = pair
            taken[first] -= 1
            taken[second] -= 1
            taken[target] += 2
            continue
        current, source, target, moved = best
        taken[source] -= moved
        taken[target] += moved
    return taken


def _best_pair_move(
    cells: Mapping[tuple[int, int], list[Candidate]],
    taken: dict[tuple[int, int], int],
    current: float,
    ptargets: Sequence[tuple[float, int]],
    otargets: Sequence[tuple[float, int]],
) -> tuple[float, tuple[int, int], tuple[int, int], tuple[int, int]] | None:
    """The best move of one unit from each of two cells into a third, when no single-cell move helps: where one
    kind's quality sits at its floor of 0, giving up two cells of that kind at once can pay while one alone does
    not."""
    sources = [key for key, units in taken.items() if units > 0]
    best: tuple[float, tuple[int, int], tuple[int, int], tuple[int, int]] | None = None
    for a in range(len(sources)):
        for b in range(a + 1, len(sources)):
            first, second = sources[a], sources[b]
            for target, members in cells.items():
                if target in (first, second) or len(members) - taken[target] < 2:
                    continue
                taken[first] -= 1
                taken[second] -= 1
                taken[target] += 2
                value = _counts_value(cells, taken, ptargets, otargets)
                taken[first] += 1
                taken[second] += 1
                taken[target] -= 2
                if value > current + 1e-12 and (best is None or value > best[0]):
                    best = (value, first, second, target)
    return best


def _route(
    cells: Mapping[tuple[int, int], list[Candidate]],
    k: int,
    ptargets: Sequence[tuple[float, int]],
    otargets: Sequence[tuple[float, int]],
) -> dict[tuple[int, int], int]:
    # Nodes: 0 source, 1-4 phonetic levels (4 = free), 5-8 orthographic levels (8 = free), 9 sink.
    source, sink = 0, 9
    cap_in = [ptargets[i][1] if ptargets[i][1] > 0 else 0 for i in range(3)] + [k]
    cap_out = [otargets[j][1] if otargets[j][1] > 0 else 0 for j in range(3)] + [k]
    # Each kind's similarity is half the part's: a unit in a counted level earns half the similarity weight times
    # its share per unit of target plus the unmatched penalty it avoids.
    half = SIMILARITY_WEIGHT / 2
    gain_in = [half * (p / t + UNMATCHED_PENALTY / k) if t else 0.0 for p, t in ptargets[:3]] + [0.0]
    gain_out = [half * (p / t + UNMATCHED_PENALTY / k) if t else 0.0 for p, t in otargets[:3]] + [0.0]
    flow_in = [0, 0, 0, 0]
    flow_out = [0, 0, 0, 0]
    taken: dict[tuple[int, int], int] = {}

    def level_gain(gains: list[float], caps: list[int], flows: list[int], level: int) -> float:
        # Past its target a level loses most of its credit at once (1 - exp(-(r - 1))): priced at that loss.
        return gains[level] if flows[level] < caps[level] or level == 3 else -_OVERFLOW

    def cell_cost(i: int, j: int, forward: bool) -> float | None:
        members = cells.get((i, j), [])
        n = taken.get((i, j), 0)
        if forward:
            return -LENGTH_WEIGHT * members[n].length / k if n < len(members) else None
        return LENGTH_WEIGHT * members[n - 1].length / k if n > 0 else None

    for _ in range(k):
        dist = [math.inf] * 10
        prev: list[tuple[int, int] | None] = [None] * 10
        dist[source] = 0.0
        for _round in range(9):
            changed = False
            for i in range(4):  # source <-> phonetic level i
                node = 1 + i
                cost = dist[source] - level_gain(gain_in, cap_in, flow_in, i)
                if cost < dist[node] - 1e-15:
                    dist[node], prev[node], changed = cost, (source, 0), True
            for i in range(4):
                for j in range(4):
                    a, b = 1 + i, 5 + j
                    forward = cell_cost(i, j, True)
                    if forward is not None and dist[a] + forward < dist[b] - 1e-15:
                        dist[b], prev[b], changed = dist[a] + forward, (a, 1), True
                    backward = cell_cost(i, j, False)
                    if backward is not None and dist[b] + backward < dist[a] - 1e-15:
                        dist[a], prev[a], changed = dist[b] + backward, (b, -1), True
            for j in range(4):  # orthographic level j <-> sink
                node = 5 + j
                cost = dist[node] - level_gain(gain_out, cap_out, flow_out, j)
                if cost < dist[sink] - 1e-15:
                    dist[sink], prev[sink], changed = cost, (node, 0), True
            if not changed:
                break
        if dist[sink] == math.inf:
            break
        node = sink
        steps = 0
        while node != source and steps < 20:
            steps += 1
            step = prev[node]
            assert step is not None
            before, kind = step
            if node == sink:
                flow_out[before - 5] += 1
            elif before == source:
                flow_in[node - 1] += 1
            elif kind == 1:
                key = (before - 1, node - 5)
                taken[key] = taken.get(key, 0) + 1
            else:
                key = (node - 1, before - 5)
                taken[key] -= 1
            node = before
    return taken
