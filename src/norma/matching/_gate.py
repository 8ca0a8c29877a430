"""The gate: the score a rule must reach to match, and where that number comes from.

With ``MatchConfig(threshold="auto")`` (the default) the gate is a threshold on the **similarity** (the cosine of
the message to the rule's nearest text), set by one of:

* ``calibrated`` — set from labelled messages (:func:`calibrate_gate`; ``norma rules calibrate``): by default the
  automatic gate below (band included) moved toward the best balance of acc@1 and rejection on them; or a single
  threshold meeting a precision, recall or F1 target. Stored with the tenant's rules and used by every matcher of
  that tenant;
* ``adapted`` — the matcher embeds with an encoder adapted to the rulebook (``norma rules adapt``) that stored a
  cross-fitted gate: the ``gate_quantile`` (default :data:`ADAPTED_QUANTILE`) quantile of the best similarities of
  examples held out of a first training run (the rulebook gate below would measure examples the encoder was trained
  on, which sit too close);
* ``rulebook`` — derived from the rulebook itself when the matcher is built: each sampled example text is matched,
  leave-one-out, against every other text of the rulebook; the gate is a quantile of those best similarities. By
  default the :data:`RULEBOOK_QUANTILE` quantile (the similarity 76 % of the rulebook's own held-out examples
  reach), with a band: a message below it but at or above the ``gate_band_quantile`` quantile is still matched
  when its best rule's similarity stands ``gate_margin`` above every other rule's (one rule clearly meant). The
  score scale moves with the rulebook (how many rules, how close they sit, how conditions are phrased): the
  examples measure it;
* ``fixed`` — the rulebook has too few example texts to measure (fewer than :data:`GATE_MIN_PROBES`): a fixed
  similarity, :data:`FALLBACK_SIMILARITY`.

A numeric ``threshold`` is a ``fixed`` gate on ``threshold_on``; ``threshold=None`` is no gate. How the quantile
and the fallback were chosen (never on the data reported): docs/design/040-matching.md.
"""

from __future__ import annotations

import heapq
import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard

import numpy as np

from norma.errors import InvalidInputError
from norma.matching._config import MatchConfig
from norma.matching._index import MatchIndex

__all__ = [
    "ADAPTED_QUANTILE",
    "ADAPTED_STALE_SHARE",
    "FALLBACK_SIMILARITY",
    "GATE_MIN_PROBES",
    "AppliedGate",
    "GateKind",
    "RULEBOOK_QUANTILE",
    "adapted_gate",
    "applied_gate",
    "gate_band",
    "gate_from_dict",
    "gate_quantile_setting",
    "quantile_setting",
    "probe_similarities",
    "rulebook_gate",
    "rulebook_gate_key",
    "UnseenProbes",
    "unseen_probes",
    "weighted_quantile",
]

GateKind = Literal["calibrated", "adapted", "rulebook", "fixed", "none"]

RULEBOOK_QUANTILE = 0.24
"""The rulebook gate's quantile with ``MatchConfig(gate_quantile=None)`` (with the margin band; chosen on the tune
draws with the band, docs/design/040-matching.md)."""
ADAPTED_QUANTILE = 0.22
"""An adapted encoder's gate quantile with ``MatchConfig(gate_quantile=None)`` (chosen on the tune draws by
``benchmarks/matching_adapt.py``)."""
GATE_MIN_PROBES = 20
"""Fewest example texts a rulebook needs for its own gate; below, the ``fixed`` fallback applies."""
FALLBACK_SIMILARITY = 0.435
"""The similarity gate of a rulebook with too few examples to measure (chosen on the tune draws, see the design)."""
ADAPTED_STALE_SHARE = 0.9
"""Below this share of its rule texts seen in training, an adapted encoder's gate is said to be stale (the
rulebook changed since adapting: new texts sit farther from their rules than the trained ones). A convention, not
a measured optimum (docs/design/040-matching.md)."""
_SET_FOR_TENANT = " (the tenant's setting)"
_CHUNK_ROWS = 16_384  # rule vectors scored per block while measuring the rulebook
GATE_BUDGET = 1 << 24
"""Most probe x rule-vector products one measurement takes: past ``GATE_BUDGET / gate_probes`` rule vectors the
sample shrinks (never below :data:`GATE_MIN_SAMPLE` probes), so a large rulebook is measured in bounded time."""
GATE_MIN_SAMPLE = 256


@dataclass(frozen=True, slots=True)
class AppliedGate:
    """The gate a match applied: its kind, the score it compares, the threshold, and every term that set it."""

    kind: GateKind
    score: str
    """The score compared with ``threshold`` (``similarity`` for the automatic gates; ``threshold_on`` otherwise)."""
    threshold: float | None
    terms: dict[str, Any] = field(default_factory=dict)
    """What decided the threshold: the quantile and the probes measured (``rulebook``), the target and the messages
    (``calibrated``), the slack (``hybrid_or_similarity``)..."""

    @property
    def description(self) -> str:
        """The gate in one line of words."""
        if self.kind == "none" or self.threshold is None:
            return "no gate: every scored rule can match (threshold=None)"
        t = self.terms
        if self.kind == "rulebook":
            return (
                f"similarity >= {self.threshold:.4f}: the rulebook's own gate, the {t['quantile']:g} quantile"
                f"{_SET_FOR_TENANT if t.get('quantile_source') == 'tenant' else ''} of the best leave-one-out "
                f"similarity of {t['probes']} of its {t['examples']} example texts" + _band_words(t)
            )
        if self.kind == "adapted":
            share = t.get("trained_share")
            stale = (
                f"; only {share:.0%} of the rule texts were in its training: adapt again or calibrate"
                if isinstance(share, float) and share < ADAPTED_STALE_SHARE
                else ""
            )
            unseen = (
                f" and of {t['unseen_probes']} of the {t['unseen_examples']} examples added since (weighted by "
                f"their share of the examples)"
                if t.get("unseen_probes")
                else ""
            )
            return (
                f"similarity >= {self.threshold:.4f}: the adapted encoder's gate, the {t['quantile']:g} quantile"
                f"{_SET_FOR_TENANT if t.get('quantile_source') == 'tenant' else ''} of the best similarity of "
                f"{t['probes']} examples held out while adapting it (cross-fitted on {t.get('rules', '?')} rules)"
                f"{unseen}{stale}"
            )
        if self.kind == "calibrated":
            target = t.get("target", "best F1")
            misses = f" and {t['near_misses']} near misses" if t.get("near_misses") else ""
            head = (
                f"similarity >= {self.threshold:.4f}: calibrated on {t.get('messages', '?')} labelled messages{misses}"
            )
            if target == "balanced":
                base = t.get("base") or {}
                return (
                    f"{head} at tenant version {t.get('rules_version', '?')}: the {base.get('kind', '?')} gate "
                    f"{base.get('threshold', float('nan')):.4f} moved by {t['shift']:+.4f} (the best shift for "
                    f"min(acc@1, rejection) on them, {t['fitted_shift']:+.3f}, weighted {t['weight']:.2f} for "
                    f"{t['expecting_none']} that expect no rule against a prior of {t['prior']:g}; acc@1 "
                    f"{t.get('acc_at_1', float('nan')):.3f}, rejection {t.get('rejection', float('nan')):.3f})"
                    + _band_words(t)
                )
            return (
                f"{head} ({target}; precision {t.get('precision', float('nan')):.3f}, recall "
                f"{t.get('recall', float('nan')):.3f}) at tenant version {t.get('rules_version', '?')}"
            )
        if self.score == "hybrid_or_similarity":
            return (
                f"max(hybrid, similarity - slack {t.get('similarity_slack', 0):g}) >= {self.threshold:g} "
                f"({t.get('source', 'threshold set in the config')})"
            )
        return f"{self.score} >= {self.threshold:g} ({t.get('source', 'threshold set in the config')})"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (``kind``, ``score``, ``threshold``, ``terms``, ``description``)."""
        return {
            "kind": self.kind,
            "score": self.score,
            "threshold": self.threshold,
            "terms": dict(self.terms),
            "description": self.description,
        }


def _band_words(terms: Mapping[str, Any]) -> str:
    """The margin band of a gate's description (empty without one)."""
    if "band_threshold" not in terms:
        return ""
    which = f" (the {terms['band_quantile']:g} quantile)" if "band_quantile" in terms else ""
    return (
        f"; or >= {terms['band_threshold']:.4f}{which} when the best rule is at least {terms['margin']:g} above the "
        "next"
    )


def gate_from_dict(data: Mapping[str, Any], kind: GateKind = "calibrated") -> AppliedGate:
    """A gate read back (what :meth:`AppliedGate.to_dict` wrote): a stored ``calibrated`` gate, or a cached
    ``rulebook`` one; InvalidInputError if malformed or of another kind."""
    try:
        found, score, threshold = data["kind"], data["score"], data["threshold"]
        terms = dict(data.get("terms") or {})
    except (KeyError, TypeError) as exc:
        raise InvalidInputError(f"stored gate is malformed: {exc}", hint="calibrate the tenant again") from None
    if found != kind or score != "similarity" or not isinstance(threshold, (int, float)):
        raise InvalidInputError(
            f"stored gate is not a {kind} similarity gate: {found!r} on {score!r}", hint="calibrate again"
        )
    if not math.isfinite(threshold):
        raise InvalidInputError("stored gate threshold is not a finite number", hint="calibrate the tenant again")
    if "band_threshold" in terms:  # a margin band: both numbers, finite
        band, margin = terms["band_threshold"], terms.get("margin")
        if not (_is_finite(band) and _is_finite(margin)) or margin < 0 or band > threshold:
            raise InvalidInputError(
                f"stored gate band is malformed: band_threshold {band!r}, margin {margin!r} (threshold {threshold})",
                hint="calibrate the tenant again",
            )
    return AppliedGate(kind, "similarity", float(threshold), terms)


def _is_finite(value: object) -> TypeGuard[float]:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _is_quantile(value: object) -> TypeGuard[float]:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and 0 < value < 1


def quantile_setting(quantile: float) -> dict[str, Any]:
    """What a tenant stores (in place of a calibrated gate) to have its automatic gate measured at ``quantile``
    instead of the default (``MatchConfig.gate_quantile=None``): for traffic whose out-of-scope messages are of another
    kind than the default serves (docs/matching.md). InvalidInputError unless 0 < quantile < 1."""
    if not _is_quantile(quantile):
        raise InvalidInputError(
            f"gate quantile must be a number strictly between 0 and 1, not {quantile!r}",
            hint="e.g. 0.08 (off-topic out-of-scope messages) or 0.14 (a mix with the rulebook's own domain)",
        )
    return {"kind": "quantile", "gate_quantile": float(quantile)}


def gate_quantile_setting(data: Mapping[str, Any] | None) -> float | None:
    """The quantile of a stored tenant gate setting (:func:`quantile_setting`); None for a calibrated gate or no
    setting; InvalidInputError if the setting is malformed."""
    if data is None or data.get("kind") != "quantile":
        return None
    quantile = data.get("gate_quantile")
    if not _is_quantile(quantile):
        raise InvalidInputError(
            f"stored gate setting is malformed: gate_quantile {quantile!r}", hint="set the tenant's gate again"
        )
    return float(quantile)


def applied_gate(cfg: MatchConfig, automatic: AppliedGate | None) -> AppliedGate:
    """The gate ``cfg`` asks for; ``automatic`` is the matcher's automatic gate (for ``threshold="auto"``)."""
    if cfg.threshold is None:
        return AppliedGate("none", cfg.threshold_on, None)
    if cfg.threshold == "auto":
        assert automatic is not None
        return automatic
    terms: dict[str, Any] = {"source": "threshold set in the config"}
    if cfg.threshold_on == "hybrid_or_similarity":
        terms["similarity_slack"] = cfg.similarity_slack
    return AppliedGate("fixed", cfg.threshold_on, float(cfg.threshold), terms)


def adapted_gate(
    similarities: Sequence[float],
    measured: Mapping[str, Any],
    cfg: MatchConfig,
    trained_share: float | None = None,
    unseen: UnseenProbes | None = None,
) -> AppliedGate:
    """The ``adapted`` gate: the ``cfg.gate_quantile`` quantile of the held-out similarities an adapted encoder
    stored (:func:`norma.embeddings.adapted_gate_similarities`); ``measured`` names what they were measured on;
    ``trained_share``: the share of the matcher's rule texts the encoder was adapted on
    (:func:`norma.embeddings.trained_share`). With ``unseen`` examples (added after adapting: :func:`unseen_probes`)
    the quantile is taken over both sets of probes, each weighted by the share of the rulebook's examples it stands
    for, so the gate follows the new rules (docs/design/040-matching.md, "A rulebook edited after adapting")."""
    quantile = cfg.gate_quantile if cfg.gate_quantile is not None else ADAPTED_QUANTILE
    stored = np.asarray(similarities, dtype=np.float64)
    terms: dict[str, Any] = {
        "source": "cross-fitted while adapting the encoder",
        "quantile": quantile,
        "probes": len(similarities),
        **{k: measured[k] for k in ("holdout", "held_out", "rules") if k in measured},
    }
    if unseen is not None and len(unseen.similarities) and unseen.unseen:
        fresh = unseen.similarities
        weights = np.concatenate(
            [np.full(len(stored), unseen.seen / len(stored)), np.full(len(fresh), unseen.unseen / len(fresh))]
        )
        threshold = round(weighted_quantile(np.concatenate([stored, fresh]), weights, quantile), 4)
        terms.update(unseen_probes=len(fresh), unseen_examples=unseen.unseen, seen_examples=unseen.seen)
    else:
        threshold = round(float(np.quantile(stored, quantile)), 4)
    if trained_share is not None:
        terms["trained_share"] = round(trained_share, 3)
    return AppliedGate("adapted", "similarity", threshold, terms)


def _probe_key(rule_id: str, text: str) -> int:
    return zlib.crc32(f"{rule_id}\x00{text}".encode())


def rulebook_gate(index: MatchIndex, cfg: MatchConfig) -> AppliedGate:
    """The rulebook's own similarity gate (see the module docstring); deterministic for a given set of rules and
    vectors, whatever the order they were added in (or removed: freed rows do not count). Costs one pass of the
    probes over every rule vector, bounded by :data:`GATE_BUDGET` (docs/benchmarks.md); the matcher measures it
    once per index version, at the first match."""
    vectors = index.vectors
    alive = np.flatnonzero(index.alive[: index.size])
    texts_at = index.texts_at
    examples = sum(len(texts_at[int(s)]) - 1 for s in alive)
    if vectors is None or examples < GATE_MIN_PROBES:
        return AppliedGate(
            "fixed",
            "similarity",
            FALLBACK_SIMILARITY,
            {
                "source": "fallback: too few example texts to measure the rulebook",
                "examples": examples,
                "needed": GATE_MIN_PROBES,
            },
        )
    best, _ = _leave_one_out(index, cfg, alive)
    measured = np.where(np.isfinite(best), best, 0.0).astype(np.float64)
    quantile, _, band_quantile, margin = rulebook_gate_key(cfg)
    terms: dict[str, Any] = {
        "quantile": quantile,
        "probes": len(best),
        "max_probes": cfg.gate_probes,
        "examples": examples,
        "rules": len(alive),
        "median_probe_similarity": round(float(np.median(measured)), 4),
    }
    if band_quantile is not None:
        terms.update(
            band_quantile=band_quantile,
            band_threshold=round(float(np.quantile(measured, band_quantile)), 4),
            margin=margin,
        )
    return AppliedGate("rulebook", "similarity", round(float(np.quantile(measured, quantile)), 4), terms)


def rulebook_gate_key(cfg: MatchConfig) -> tuple[float, int, float | None, float | None]:
    """What a rulebook gate measured with ``cfg`` depends on besides the rules: (quantile, probe limit, band
    quantile, margin); the quantile is :data:`RULEBOOK_QUANTILE` unless ``cfg`` sets one, and the band applies only
    below it (a quantile at or under ``gate_band_quantile`` is a gate without a band)."""
    quantile = cfg.gate_quantile if cfg.gate_quantile is not None else RULEBOOK_QUANTILE
    band = cfg.gate_band_quantile
    if band is None or band >= quantile:
        return quantile, cfg.gate_probes, None, None
    return quantile, cfg.gate_probes, band, cfg.gate_margin


def gate_band(gate: AppliedGate) -> tuple[float, float] | None:
    """(lower threshold, margin) of a gate with a margin band (a ``rulebook`` gate measured with the default
    quantile, or a ``balanced`` calibration of one), None otherwise."""
    t = gate.terms
    if gate.kind not in ("rulebook", "calibrated") or "band_threshold" not in t:
        return None
    return float(t["band_threshold"]), float(t["margin"])


def probe_similarities(index: MatchIndex, cfg: MatchConfig) -> tuple[np.ndarray, np.ndarray]:
    """The probes :func:`rulebook_gate` measures, each one's best leave-one-out similarity split in two: to the
    other texts of its own rule, and to any other rule (-inf where there is none). For studies of the gate
    (``benchmarks/matching_gate_methods.py``); their elementwise maximum is what the gate's quantile is taken of."""
    alive = np.flatnonzero(index.alive[: index.size])
    if index.vectors is None:
        empty = np.empty(0, dtype=np.float64)
        return empty, empty
    rival, own = _leave_one_out(index, cfg, alive, split=True)
    assert own is not None
    return own.astype(np.float64), rival.astype(np.float64)


def _leave_one_out(
    index: MatchIndex, cfg: MatchConfig, alive: np.ndarray, *, split: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """Over the probe sample: each probe's best similarity to every other text of the rulebook (its own text and
    identical texts left out); with ``split``, that best to other rules, and separately the best to its own rule."""
    ids, texts_at = index.ids, index.texts_at
    # a fixed sample: the example texts with the smallest keys (rule id + text), whatever the insertion order
    candidates = (
        (_probe_key(rule_id, text), rule_id, k, int(slot))
        for slot in alive
        for rule_id in (ids[int(slot)],)
        for k, text in enumerate(texts_at[int(slot)])
        if k > 0
    )
    probes = heapq.nsmallest(_probe_count(index, cfg), candidates)
    return _best_other(index, alive, [(slot, k) for _, _, k, slot in probes], split=split)


def _probe_count(index: MatchIndex, cfg: MatchConfig) -> int:
    """How many probes a measurement takes: ``gate_probes``, fewer past :data:`GATE_BUDGET` products."""
    assert index.vectors is not None
    return min(cfg.gate_probes, max(GATE_MIN_SAMPLE, GATE_BUDGET // max(index.vectors.rows, 1)))


def _best_other(
    index: MatchIndex, alive: np.ndarray, probes: Sequence[tuple[int, int]], *, split: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
    """Each probe's (slot, text number) best similarity to every other text of the rulebook (its own text and
    identical texts left out); with ``split``, that best to other rules, and separately the best to its own rule."""
    vectors = index.vectors
    assert vectors is not None
    texts_at = index.texts_at
    matrix, row_slot = vectors.live_view()
    rows = np.array([vectors.row_ids(slot)[k] for slot, k in probes], dtype=np.intp)
    probe_texts = [texts_at[slot][k] for slot, k in probes]
    probe_slots = np.array([slot for slot, _ in probes], dtype=np.intp)
    own = np.full(len(probes), -np.inf, dtype=np.float32) if split else None
    probe_matrix = np.ascontiguousarray(matrix[rows])
    # leave each probe's text out: its own row and any other row with the same text
    same = {text: [] for text in probe_texts}  # type: dict[str, list[int]]
    for slot in alive:
        for k, text in enumerate(texts_at[int(slot)]):
            if text in same:
                same[text].append(int(vectors.row_ids(int(slot))[k]))
    excluded = [(j, row) for j, text in enumerate(probe_texts) for row in same[text]]
    best = np.full(len(probes), -np.inf, dtype=np.float32)
    dead = row_slot < 0
    for start in range(0, len(matrix), _CHUNK_ROWS):
        end = min(start + _CHUNK_ROWS, len(matrix))
        scores = probe_matrix @ matrix[start:end].T
        scores[:, dead[start:end]] = -np.inf
        for j, row in excluded:
            if start <= row < end:
                scores[j, row - start] = -np.inf
        if own is not None:  # the probe's own rule apart
            mine = row_slot[start:end][None, :] == probe_slots[:, None]
            np.maximum(own, np.where(mine, scores, -np.inf).max(axis=1, initial=-np.inf), out=own)
            scores[mine] = -np.inf
        np.maximum(best, scores.max(axis=1, initial=-np.inf), out=best)
    return best, own


@dataclass(frozen=True, slots=True)
class UnseenProbes:
    """The examples of a rulebook an adapted encoder was not trained on (rules or examples added after adapting):
    each sampled one's best leave-one-out similarity, measured like the rulebook gate's probes, and how many of the
    rulebook's examples were seen and unseen in training (counted over the texts the sketch decides)."""

    similarities: np.ndarray
    seen: int
    unseen: int


def unseen_probes(index: MatchIndex, cfg: MatchConfig, trained: Callable[[str], bool | None]) -> UnseenProbes:
    """The examples new to the encoder (``trained`` says it never saw them, or their rule's own text: a rule added
    since, all of whose examples count as new even where one also belongs to an older rule), at most the rulebook
    gate's probe count (the smallest keys), with their best leave-one-out similarities (:class:`UnseenProbes`)."""
    alive = np.flatnonzero(index.alive[: index.size])
    if index.vectors is None:
        return UnseenProbes(np.empty(0), 0, 0)
    ids, texts_at = index.ids, index.texts_at
    unseen: list[tuple[int, str, int, int]] = []
    seen = 0
    for slot in alive.tolist():
        texts = texts_at[slot]
        new_rule = trained(texts[0]) is False  # a rule added since: every example of it is new to the encoder
        for k, text in enumerate(texts):
            if k == 0:
                continue
            verdict = False if new_rule else trained(text)
            if verdict is None:
                continue
            if verdict:
                seen += 1
            else:
                unseen.append((_probe_key(ids[slot], text), ids[slot], k, slot))
    probes = heapq.nsmallest(_probe_count(index, cfg), unseen)
    best, _ = _best_other(index, alive, [(slot, k) for _, _, k, slot in probes])
    return UnseenProbes(np.where(np.isfinite(best), best, 0.0).astype(np.float64), seen, len(unseen))


def weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The smallest of ``values`` whose cumulative weight (values in increasing order) reaches ``q`` of the total."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    at = min(int(np.searchsorted(cumulative, q * cumulative[-1])), len(values) - 1)
    return float(values[order][at])
