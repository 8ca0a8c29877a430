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
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from norma.embeddings import MAX_PROBES, pick_probes, probe_similarities_by_owner, text_key
from norma.errors import InvalidInputError
from norma.matching._index import MatchIndex

__all__ = [
    "COEFFICIENTS",
    "GOVERNS",
    "PRIOR",
    "REFIT_PRIOR",
    "SHRINK",
    "Refit",
    "RulebookStats",
    "confidences",
    "crossfit_stats",
    "fit_refit",
    "measure_stats",
]

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
REFIT_PRIOR = 200.0
"""How firmly a refit (:func:`fit_refit`) is held to the shipped confidence: a Gaussian prior on its scale and
shift whose weight equals this many candidates' worth of evidence (chosen on the tune draws by
``experiments/refit.py``: the largest of 2-200 within 0.002 of the best held-out ECE; the choice barely matters)."""
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


def crossfit_stats(index: MatchIndex, owners: Sequence[tuple[int, float | None, float | None]]) -> RulebookStats:
    """The statistics of ``index``'s rules for an adapted encoder, from the examples it held out while adapting
    (``owners``: (CRC-32 key of the rule's first text, best similarity to another text of its rule, best to another
    rule's text), measured by the encoder trained without them): an encoder's similarities among the texts it was
    trained on run higher than a message's will, so they are not measured on them. A rule without a held-out
    example (added since, or with too few examples) gets its rulebook's figures; shrunk as :func:`measure_stats`."""
    own = np.array([np.nan if o is None else o for _, o, _ in owners], dtype=np.float64)
    other = np.array([np.nan if t is None else t for _, _, t in owners], dtype=np.float64)
    best = np.fmax(own, other)
    probe = _shrunk(best[np.isfinite(best)], PRIOR["probe"])
    book_in = _shrunk(own[np.isfinite(own)], PRIOR["inside"])
    book_out = _shrunk(other[np.isfinite(other)], PRIOR["outside"])
    keys = np.array([key for key, _, _ in owners], dtype=np.int64)
    inside, outside = {}, {}
    for slot in np.flatnonzero(index.alive[: index.size]).tolist():
        mine = keys == text_key(index.texts_at[slot][0].strip())
        ins, outs = own[mine], other[mine]
        inside[index.ids[slot]] = _shrunk(ins[np.isfinite(ins)], book_in)
        outside[index.ids[slot]] = _shrunk(outs[np.isfinite(outs)], book_out)
    return RulebookStats(probe, len(owners), inside, outside)


def confidences(
    stats: RulebookStats,
    rule_ids: list[str],
    similarity: np.ndarray,
    vector: np.ndarray,
    bm25: np.ndarray,
    top: int,
    refit: Refit | None = None,
) -> np.ndarray:
    """The confidence of each scored rule (``rule_ids``, aligned with the score arrays) that it governs the message;
    ``top`` is the position of the top candidate (the highest hybrid score); ``refit``: the tenant's refit
    (``norma rules calibrate``), None for the shipped confidence."""
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
    if refit is not None:
        logit = refit.scale * np.clip(logit, -_LOGIT_LIMIT, _LOGIT_LIMIT) + refit.shift
    out: np.ndarray = 1.0 / (1.0 + np.exp(-logit))
    return out


_LOGIT_LIMIT = 30.0  # logits are clipped to +-30 (a confidence of 1e-13 from 0 or 1)
_MIN_SCALE = 0.05


@dataclass(frozen=True, slots=True)
class Refit:
    """A tenant's confidence refitted on its labelled traffic (``norma rules calibrate``): the shipped logit ``z``
    becomes ``scale * z + shift`` (Platt scaling). The identity is ``Refit(1.0, 0.0)``."""

    scale: float
    shift: float
    candidates: int = 0
    """How many labelled candidates (a rule scored for a message) it was fitted on."""
    ece_before: float | None = None
    """The expected calibration error of the shipped confidence on those candidates."""
    ece_after: float | None = None
    """The same, refitted (in-sample: ``norma rules eval`` on other messages tells how it carries over)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (stored in a calibrated gate's terms, under ``confidence``)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Refit:
        """The inverse of :meth:`to_dict`; :class:`~norma.errors.InvalidInputError` on anything else."""
        try:
            before, after = data.get("ece_before"), data.get("ece_after")
            return cls(
                float(data["scale"]),
                float(data["shift"]),
                int(data.get("candidates", 0)),
                None if before is None else float(before),
                None if after is None else float(after),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise InvalidInputError(
                f"not a confidence refit: {exc!r}", location="confidence", hint="calibrate the tenant again"
            ) from exc

    @property
    def words(self) -> str:
        """What it does, in a few words."""
        ece = (
            f"; ECE on them {self.ece_before:.3f} -> {self.ece_after:.3f}"
            if self.ece_before is not None and self.ece_after is not None
            else ""
        )
        return (
            f"logit x {self.scale:.3f} {'+' if self.shift >= 0 else '-'} {abs(self.shift):.3f}, fitted on "
            f"{self.candidates} labelled candidates{ece}"
        )

    def __post_init__(self) -> None:
        if not (math.isfinite(self.scale) and math.isfinite(self.shift)) or self.scale < _MIN_SCALE:
            raise InvalidInputError(
                f"a confidence refit needs a finite scale >= {_MIN_SCALE} and a finite shift, not "
                f"({self.scale!r}, {self.shift!r})",
                location="refit",
                hint="calibrate the tenant again",
            )

    def apply(self, confidence: np.ndarray) -> np.ndarray:
        """The refitted confidences of shipped ones."""
        return _sigmoid(self.scale * _logit(confidence) + self.shift)

    def undo(self, confidence: np.ndarray) -> np.ndarray:
        """The shipped confidences of refitted ones (the inverse of :meth:`apply`, up to rounding)."""
        return _sigmoid((_logit(confidence) - self.shift) / self.scale)


def _logit(confidence: np.ndarray) -> np.ndarray:
    p = np.asarray(confidence, dtype=np.float64)
    with np.errstate(divide="ignore"):
        z = np.log(p) - np.log1p(-p)
    out: np.ndarray = np.clip(z, -_LOGIT_LIMIT, _LOGIT_LIMIT)
    return out


def _sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=np.float64)))  # no overflow for any z
    return out


def fit_refit(confidence: np.ndarray, right: np.ndarray, prior: float = REFIT_PRIOR) -> Refit:
    """The :class:`Refit` of shipped ``confidence`` values to labels ``right`` (this rule governs this message, or
    not): the maximum a posteriori scale and shift of a logistic function of the shipped logit, with a Gaussian prior
    centred on the identity that weighs ``prior`` candidates (so a handful of labels moves it little). Newton's
    method, deterministic. :class:`InvalidInputError` without both kinds of label or for a bad ``prior``."""
    z = _logit(confidence)
    y = np.asarray(right, dtype=np.float64)
    if len(z) != len(y):
        raise InvalidInputError(f"{len(z)} confidences but {len(y)} labels", location="right")
    if isinstance(prior, bool) or not isinstance(prior, (int, float)) or not math.isfinite(prior) or prior <= 0:
        raise InvalidInputError(f"prior must be a positive number, not {prior!r}", location="prior")
    if not len(y) or y.min() == y.max():
        raise InvalidInputError(
            "refitting the confidence needs candidates of both kinds: rules that govern a message and rules that "
            "do not",
            hint="give messages that expect a rule and messages (or near misses) that expect none",
        )
    x = np.stack([z, np.ones_like(z)], axis=1)
    centre = np.array([1.0, 0.0])

    def loss(w: np.ndarray) -> float:
        t = x @ w
        return float(np.sum(np.logaddexp(0.0, t) - y * t) + 0.5 * prior * np.sum((w - centre) ** 2))

    weights = centre.copy()
    current = loss(weights)
    for _ in range(100):  # Newton's method, each step halved until the loss falls (the loss is convex)
        p = _sigmoid(x @ weights)
        gradient = x.T @ (p - y) + prior * (weights - centre)
        hessian = (x * (p * (1 - p))[:, None]).T @ x + prior * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        for _ in range(50):
            trial = weights - step
            value = loss(trial)
            if value <= current:
                break
            step = step / 2
        weights, current = trial, min(value, current)
        if float(np.abs(step).max()) < 1e-10:
            break
    scale, shift = round(max(float(weights[0]), _MIN_SCALE), 6), round(float(weights[1]), 6)
    after = _sigmoid(scale * z + shift)
    return Refit(scale, shift, len(y), round(_ece(_sigmoid(z), y), 6), round(_ece(after, y), 6))


def _ece(confidence: np.ndarray, right: np.ndarray, bins: int = 10) -> float:
    """The expected calibration error over ``bins`` equal bins of [0, 1] (as ``norma rules eval`` counts it)."""
    which = np.minimum((confidence * bins).astype(np.intp), bins - 1)
    gap = 0.0
    for b in range(bins):
        members = which == b
        if members.any():
            gap += float(members.sum()) * abs(float(confidence[members].mean()) - float(right[members].mean()))
    return gap / len(confidence)
