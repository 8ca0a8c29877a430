"""How sure norma is that a rule governs a message: one confidence per match, the same meaning on every rulebook.

A match's similarity means different things in different rulebooks (0.45 is close in one, far in another), so a
fixed number on it cannot say whether the rule governs the turn. The confidence reads the match *relative to its
rulebook*: a logistic function, with coefficients shipped with norma (:data:`COEFFICIENTS`), of

* the similarity and the vector score minus the rulebook's typical best similarity between two of its texts
  (``probe``);
* the normalised BM25 score;
* the gap to the best other candidate's similarity (negative: another rule is closer) and whether the match is the
  top candidate;
* the similarity minus the rule's own ``inside`` (how close its texts come to one another) and ``outside`` (how
  close they come to other rules' texts), and ``inside - outside``.

The statistics (:class:`RulebookStats`) are measured once per version of the rules from their texts, each left out
in turn (the probes of :func:`~norma.embeddings.probe_similarities_by_owner`: exact, the same bits on every CPU),
and shrunk toward a prior by :data:`SHRINK` texts' worth (a rule's toward its rulebook's, the rulebook's toward
:data:`PRIOR`), so that no figure jumps at a rulebook size: a rule with one example gets the rulebook's figures, a
rulebook of one rule the prior.

A rule *governs* a message (a turn check enforces its requirements) when its confidence reaches :data:`GOVERNS`.
Per rule, not a share of one: two rules can both govern a message. The coefficients, the prior and the threshold
were set on the tune draws of the development sets and reported on fresh ones (``experiments/confidence.py``;
docs/design/040-matching.md "One calibrated confidence").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from norma.embeddings import MAX_PROBES, pick_probes, probe_similarities_by_owner
from norma.errors import InvalidInputError
from norma.matching._index import MatchIndex

__all__ = ["COEFFICIENTS", "GOVERNS", "PRIOR", "SHRINK", "RulebookStats", "confidences", "measure_stats"]

COEFFICIENTS: tuple[float, ...] = (
    -21.23681611455893,
    13.982845745802262,
    2.504857981280025,
    6.672089010631528,
    1.7194315780176554,
    9.39326826793507,
    5.653406247926872,
    -3.7398620200026476,
    -1.709671071421327,
)
"""The logistic function's weights: similarity - probe, vector score - probe, normalised BM25, gap to the best other
candidate, top candidate (0 / 1), similarity - inside, similarity - outside, inside - outside; then the intercept."""
GOVERNS = 0.70
"""A match whose confidence reaches this governs the message."""
PRIOR: Mapping[str, float] = {"probe": 0.772, "inside": 0.762, "outside": 0.669}
"""What a rulebook's statistics are shrunk toward (the tune draws' medians)."""
SHRINK = 20.0
"""How many texts' worth of the prior each statistic holds."""
_BUDGET = 1 << 24  # most probe x rule-vector products a measurement takes; the sample shrinks past it
_MIN_SAMPLE = 256


@dataclass(frozen=True, slots=True)
class RulebookStats:
    """A rulebook's statistics for the confidence: ``probe`` (the typical best similarity of one of its texts to
    another), each rule's ``inside`` and ``outside`` (shrunk, see the module docstring), and how many texts were
    measured."""

    probe: float
    texts: int
    inside: Mapping[str, float] = field(default_factory=dict)
    outside: Mapping[str, float] = field(default_factory=dict)

    def of(self, rule_id: str) -> tuple[float, float]:
        """A rule's (inside, outside); the rulebook's prior for a rule measured without texts."""
        return self.inside.get(rule_id, PRIOR["inside"]), self.outside.get(rule_id, PRIOR["outside"])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (what a snapshot keeps)."""
        return {
            "probe": self.probe,
            "texts": self.texts,
            "rules": {rule: [self.inside[rule], self.outside[rule]] for rule in sorted(self.inside)},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RulebookStats:
        """The inverse of :meth:`to_dict`; :class:`~norma.errors.InvalidInputError` on anything else."""
        try:
            probe, texts, rules = float(data["probe"]), int(data["texts"]), dict(data["rules"])
            pairs = {str(rule): (float(pair[0]), float(pair[1])) for rule, pair in rules.items()}
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InvalidInputError(f"not a rulebook's confidence statistics: {exc!r}", location="stats") from exc
        values = [probe, *(v for pair in pairs.values() for v in pair)]
        if not all(math.isfinite(v) for v in values):
            raise InvalidInputError("a confidence statistic is not finite", location="stats")
        return cls(probe, texts, {r: p[0] for r, p in pairs.items()}, {r: p[1] for r, p in pairs.items()})


def _shrunk(values: np.ndarray, prior: float) -> float:
    """The median of ``values`` pulled toward ``prior`` by :data:`SHRINK` values' worth (the prior when empty)."""
    n = len(values)
    return prior if not n else (n * float(np.median(values)) + SHRINK * prior) / (n + SHRINK)


def measure_stats(index: MatchIndex) -> RulebookStats:
    """The statistics of ``index``'s rules (deterministic for a set of rules and vectors, whatever the order they
    were added in). Every text is probed up to :data:`~norma.embeddings.MAX_PROBES` (the smallest CRC-32 keys),
    fewer on a large rulebook (past 16.7 M probe x vector products); a rule without a probed text gets its
    rulebook's figures."""
    alive = np.flatnonzero(index.alive[: index.size]).tolist()
    if index.vectors is None or not alive:
        return RulebookStats(PRIOR["probe"], 0)
    vectors, ids, texts_at = index.vectors, index.ids, index.texts_at
    matrix, row_slot = vectors.live_view()
    texts: list[str | None] = [None] * len(matrix)
    for slot in alive:
        for row, text in zip(vectors.row_ids(slot).tolist(), texts_at[slot], strict=True):
            texts[row] = text
    count = min(MAX_PROBES, max(_MIN_SAMPLE, _BUDGET // max(len(matrix), 1)))
    keyed = ((f"{ids[slot]}\x00{text}", (slot, k)) for slot in alive for k, text in enumerate(texts_at[slot]))
    probes = pick_probes(keyed, count)
    rows = [int(vectors.row_ids(slot)[k]) for slot, k in probes]
    own, other = probe_similarities_by_owner(matrix, texts, rows, row_slot)
    best = np.maximum(own, other)
    probe = _shrunk(best[np.isfinite(best)], PRIOR["probe"])
    book_in = _shrunk(own[np.isfinite(own)], PRIOR["inside"])
    book_out = _shrunk(other[np.isfinite(other)], PRIOR["outside"])
    by_slot: dict[int, list[int]] = {}
    for j, (slot, _) in enumerate(probes):
        by_slot.setdefault(slot, []).append(j)
    inside, outside = {}, {}
    for slot in alive:
        mine = np.asarray(by_slot.get(slot, []), dtype=np.intp)
        ins, outs = own[mine], other[mine]
        inside[ids[slot]] = _shrunk(ins[np.isfinite(ins)], book_in)
        outside[ids[slot]] = _shrunk(outs[np.isfinite(outs)], book_out)
    return RulebookStats(probe, len(probes), inside, outside)


def confidences(
    stats: RulebookStats,
    rule_ids: list[str],
    similarity: np.ndarray,
    vector: np.ndarray,
    bm25: np.ndarray,
    top: int,
) -> np.ndarray:
    """The confidence of each scored rule (``rule_ids``, aligned with the score arrays) that it governs the message;
    ``top`` is the position of the top candidate (the highest hybrid score)."""
    n = len(rule_ids)
    if not n:
        return np.zeros(0, dtype=np.float64)
    sim = np.asarray(similarity, dtype=np.float64)
    if n == 1:
        others = np.zeros(1, dtype=np.float64)
    else:
        order = np.argsort(-sim, kind="stable")
        first, second = sim[order[0]], sim[order[1]]
        others = np.full(n, first)
        others[order[0]] = second
    pairs = [stats.of(rule) for rule in rule_ids]
    inside = np.fromiter((p[0] for p in pairs), dtype=np.float64, count=n)
    outside = np.fromiter((p[1] for p in pairs), dtype=np.float64, count=n)
    is_top = np.zeros(n, dtype=np.float64)
    is_top[top] = 1.0
    features = np.stack(
        [
            sim - stats.probe,
            np.asarray(vector, dtype=np.float64) - stats.probe,
            np.asarray(bm25, dtype=np.float64),
            sim - others,
            is_top,
            sim - inside,
            sim - outside,
            inside - outside,
        ],
        axis=1,
    )
    weights = np.asarray(COEFFICIENTS, dtype=np.float64)
    logit = features @ weights[:-1] + weights[-1]
    out: np.ndarray = 1.0 / (1.0 + np.exp(-logit))
    return out
