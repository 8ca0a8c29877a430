"""The gate: the score a rule must reach to match, as one typed value per kind, and how the matcher resolves it.

A gate is one of five kinds, each a frozen dataclass with typed fields (:meth:`Gate.to_dict` only for JSON):

* :class:`NoGate` — ``MatchConfig(threshold=None)``: every scored rule can match;
* :class:`FixedGate` — a number from the config (on the similarity, or the final score for ``MatchConfig.adr()``),
  or the fallback of a rulebook with too few examples to measure (:data:`FALLBACK_SIMILARITY`);
* :class:`RulebookGate` — ``threshold="auto"`` (the default): measured on the rulebook's own examples, each matched
  leave-one-out against every other text; the gate is a quantile of those best similarities, with a margin band
  below it (a message whose best rule stands clearly above the next is matched down to a lower quantile);
* :class:`CalibratedGate` — set from labelled messages (:func:`~norma.matching.calibrate_gate`), stored per tenant;
* :class:`AdaptedGate` — an encoder adapted to the rulebook (``norma rules adapt``) stored the similarities of the
  examples it held out while adapting (:class:`HeldOut`, read by :func:`read_held_out`); the gate is a quantile of
  those and of the examples added since, which the encoder never saw either.

The matcher is given a gate (:class:`CalibratedGate` or :class:`FixedGate`: used as is; a :class:`RulebookGate`
measured earlier for the same rules: used until they change) or a :class:`HeldOut`, or nothing; with
``threshold="auto"`` it resolves the gate once per version of its rules (:func:`resolve`). The gate never depends
on the message. How each default was chosen: docs/design/040-matching.md.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeGuard, overload

import numpy as np

from norma.embeddings import MAX_PROBES, MIN_PROBES, pick_probes, probe_similarities, text_key
from norma.errors import ConfigError, InvalidInputError
from norma.matching._confidence import Refit
from norma.matching._config import MatchConfig
from norma.matching._index import MatchIndex

__all__ = [
    "ADAPTED_QUANTILE",
    "FALLBACK_SIMILARITY",
    "AdaptedGate",
    "Band",
    "CalibratedGate",
    "FixedGate",
    "Gate",
    "GateSource",
    "HeldOut",
    "NoGate",
    "RULEBOOK_QUANTILE",
    "RulebookGate",
    "gate_from_dict",
    "band_key",
    "band_lowers",
    "default_held_out",
    "read_held_out",
    "resolve",
    "rulebook_settings",
]

RULEBOOK_QUANTILE = 0.20
"""The rulebook gate's quantile with ``MatchConfig(gate_quantile=None)`` (with the margin band)."""
ADAPTED_QUANTILE = 0.18
"""An adapted encoder's gate quantile with ``MatchConfig(gate_quantile=None)``: the minimax over both kinds of
out-of-scope traffic on the tune draws (benchmarks/matching_adapt.py; 3 epochs)."""
FALLBACK_SIMILARITY = 0.435
"""The similarity gate of a rulebook with fewer example texts than :data:`~norma.embeddings.MIN_PROBES` (20)."""
# A measurement probes at most MAX_PROBES example texts (2,048; the smallest CRC-32 keys of rule id + text), and
# fewer on a large rulebook:
_BUDGET = 1 << 24  # most probe x rule-vector products a measurement takes; the sample shrinks past it
_MIN_SAMPLE = 256

GateScore = Literal["similarity", "final"]


@dataclass(frozen=True, slots=True)
class Band:
    """A margin band below a similarity gate: a message whose best rule is under the gate but reaches ``threshold``
    is matched when that rule stands at least ``margin`` above every other scored rule."""

    threshold: float
    margin: float
    quantile: float | None = None
    """The rulebook quantile it was measured at (None once a calibration moved it)."""

    def moved(self, shift: float) -> Band:
        return Band(round(self.threshold + shift, 4), self.margin)

    def words(self) -> str:
        which = f" (the {self.quantile:g} quantile)" if self.quantile is not None else ""
        return f"; or >= {self.threshold:.4f}{which} when the best rule is at least {self.margin:g} above the next"

    def terms(self) -> dict[str, float]:
        out = {"band_threshold": self.threshold, "margin": self.margin}
        return out if self.quantile is None else {"band_quantile": self.quantile, **out}


@overload
def band_lowers(best: float, second: float, threshold: float, band: tuple[float, float]) -> bool: ...
@overload
def band_lowers(best: np.ndarray, second: np.ndarray, threshold: float, band: tuple[float, float]) -> np.ndarray: ...
def band_lowers(best: Any, second: Any, threshold: float, band: tuple[float, float]) -> Any:
    """The margin band's rule, for one message (floats) or many (arrays, element-wise): the band's lower threshold
    ``band[0]`` is in force when the best rule's similarity ``best`` is under ``threshold``, reaches ``band[0]`` and
    stands at least the margin ``band[1]`` above the next rule's ``second`` (-inf when there is none). The matcher
    applies it to each message (``_pipeline.gate``), a calibration to every labelled message at once."""
    lower, margin = band
    return (best >= lower) & (best < threshold) & (best - second >= margin)


class Gate:
    """What every gate kind has: ``kind``, the ``score`` it compares, its ``threshold`` (None: no gate), its
    ``band`` (or None), a one-line ``description``, and :meth:`to_dict` for JSON."""

    __slots__ = ()
    kind: ClassVar[str]
    threshold: float | None

    @property
    def score(self) -> GateScore:
        return "similarity"

    @property
    def band(self) -> Band | None:
        return None

    @property
    def description(self) -> str:
        raise NotImplementedError

    def _terms(self) -> dict[str, Any]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        """``kind``, ``score``, ``threshold``, ``terms`` (every typed field) and ``description``, JSON-ready."""
        terms = self._terms()
        if self.band is not None:
            terms.update(self.band.terms())
        return {
            "kind": self.kind,
            "score": self.score,
            "threshold": self.threshold,
            "terms": terms,
            "description": self.description,
        }


@dataclass(frozen=True, slots=True)
class NoGate(Gate):
    """``MatchConfig(threshold=None)``: every scored rule can match."""

    kind: ClassVar[str] = "none"
    threshold: None = None

    @property
    def description(self) -> str:
        return "no gate: every scored rule can match (threshold=None)"


@dataclass(frozen=True, slots=True)
class FixedGate(Gate):
    """A fixed threshold: set in the config (``on`` the similarity, or the final score), or the fallback of a
    rulebook with fewer than 20 example texts (``examples`` of them)."""

    kind: ClassVar[str] = "fixed"
    threshold: float
    on: GateScore = "similarity"
    examples: int | None = None
    """For the fallback: how many example texts the rulebook has (None: set in the config)."""

    @property
    def score(self) -> GateScore:
        return self.on

    @property
    def description(self) -> str:
        if self.examples is None:
            return f"{self.on} >= {self.threshold:g} (threshold set in the config)"
        return (
            f"similarity >= {self.threshold:g} (fallback: {self.examples} example texts, fewer than the {MIN_PROBES} "
            "needed to measure the rulebook)"
        )

    def _terms(self) -> dict[str, Any]:
        if self.examples is None:
            return {"source": "config"}
        return {"source": "fallback", "examples": self.examples, "needed": MIN_PROBES}


@dataclass(frozen=True, slots=True)
class RulebookGate(Gate):
    """Measured on the rulebook: the ``quantile`` of the best leave-one-out similarity of ``probes`` of its
    ``examples`` example texts, over ``rules`` rules, with its margin ``band``."""

    kind: ClassVar[str] = "rulebook"
    threshold: float
    quantile: float
    probes: int
    examples: int
    rules: int
    margin_band: Band | None = None

    @property
    def band(self) -> Band | None:
        return self.margin_band

    @property
    def description(self) -> str:
        band = self.margin_band.words() if self.margin_band is not None else ""
        return (
            f"similarity >= {self.threshold:.4f}: the rulebook's own gate, the {self.quantile:g} quantile of the best "
            f"leave-one-out similarity of {self.probes} of its {self.examples} example texts{band}"
        )

    def _terms(self) -> dict[str, Any]:
        return {"quantile": self.quantile, "probes": self.probes, "examples": self.examples, "rules": self.rules}


CalibrationTarget = Literal["balanced", "precision", "recall", "best_f1"]


@dataclass(frozen=True, slots=True)
class CalibratedGate(Gate):
    """Set from labelled messages (:func:`~norma.matching.calibrate_gate`). ``balanced``: the ``base`` gate (kind,
    threshold) moved by ``shift`` (the best shift on the messages, ``fitted_shift``, weighted ``weight`` for the
    ``expecting_none`` messages against a ``prior``); a target: the single threshold meeting ``goal``. The figures
    (precision, recall, F1, acc@1, rejection) are the messages' at this gate."""

    kind: ClassVar[str] = "calibrated"
    threshold: float
    target: CalibrationTarget
    messages: int
    near_misses: int = 0
    goal: float | None = None
    margin_band: Band | None = None
    base_kind: str | None = None
    base_threshold: float | None = None
    shift: float | None = None
    fitted_shift: float | None = None
    weight: float | None = None
    prior: float | None = None
    expecting_none: int | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    acc_at_1: float | None = None
    rejection: float | None = None
    rules: int | None = None
    rules_version: int | None = None
    model: str | None = None
    """The embedding model it was calibrated with (a matcher that embeds with another one ignores it)."""
    refit: Refit | None = None
    """The confidence refitted on the same messages (None: too few of one kind; the shipped confidence applies)."""

    def __post_init__(self) -> None:
        if self.target in ("precision", "recall") and self.goal is None:
            raise InvalidInputError(f"a calibrated gate with a {self.target} target needs its goal")

    @property
    def band(self) -> Band | None:
        return self.margin_band

    @property
    def description(self) -> str:
        refit = "" if self.refit is None else f"; confidence refitted: {self.refit.words}"
        misses = f" and {self.near_misses} near misses" if self.near_misses else ""
        head = f"similarity >= {self.threshold:.4f}: calibrated on {self.messages} labelled messages{misses}"
        version = f" at tenant version {self.rules_version if self.rules_version is not None else '?'}"
        if self.target == "balanced":
            band = self.margin_band.words() if self.margin_band is not None else ""
            return (
                f"{head}{version}: the {self.base_kind} gate {_num(self.base_threshold, 4)} moved by "
                f"{_num(self.shift, 4, '+')} (the best shift for min(acc@1, rejection) on them, "
                f"{_num(self.fitted_shift, 3, '+')}, weighted {_num(self.weight, 2)} for {self.expecting_none} that "
                f"expect no rule against a prior of {_num(self.prior, 0)}; acc@1 {_num(self.acc_at_1, 3)}, rejection "
                f"{_num(self.rejection, 3)}){band}{refit}"
            )
        goal = "best F1" if self.target in ("best_f1", "balanced") else f"{self.target} >= {self.goal:g}"
        return f"{head} ({goal}; precision {_num(self.precision, 3)}, recall {_num(self.recall, 3)}){version}{refit}"

    def _terms(self) -> dict[str, Any]:
        out: dict[str, Any] = {"target": self.target, "messages": self.messages, "near_misses": self.near_misses}
        if self.base_kind is not None:
            out["base"] = {"kind": self.base_kind, "threshold": self.base_threshold}
        for name in _CALIBRATED_NUMBERS:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.refit is not None:
            out["confidence"] = self.refit.to_dict()
        return out

    def with_context(self, *, rules: int, rules_version: int, model: str) -> CalibratedGate:
        """This gate with the rules it was calibrated on, their version and the model recorded."""
        return _replace(self, rules=rules, rules_version=rules_version, model=model)


_CALIBRATED_NUMBERS = (
    "goal", "shift", "fitted_shift", "weight", "prior", "expecting_none", "precision", "recall", "f1", "acc_at_1",
    "rejection", "rules", "rules_version", "model",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class AdaptedGate(Gate):
    """An adapted encoder's gate: the ``quantile`` of the similarities of the ``probes`` examples held out while
    adapting it (cross-fitted on ``rules`` rules) and of ``unseen_probes`` of the ``unseen_examples`` examples added
    since (each set weighted by the examples it stands for); ``trained_share``: the share of today's rule texts the
    encoder was adapted on."""

    kind: ClassVar[str] = "adapted"
    threshold: float
    quantile: float
    probes: int
    rules: int | None = None
    unseen_probes: int = 0
    unseen_examples: int = 0
    seen_examples: int = 0
    trained_share: float | None = None

    @property
    def description(self) -> str:
        unseen = (
            f" and of {self.unseen_probes} of the {self.unseen_examples} examples added since (weighted by their share "
            "of the examples)"
            if self.unseen_probes
            else ""
        )
        share = (
            f"; {self.trained_share:.0%} of the rule texts were in its training (adapting again may rank the new "
            "rules better)"
            if self.trained_share is not None and self.trained_share < 1
            else ""
        )
        return (
            f"similarity >= {self.threshold:.4f}: the adapted encoder's gate, the {self.quantile:g} quantile of the "
            f"best similarity of {self.probes} examples held out while adapting it (cross-fitted on "
            f"{self.rules if self.rules is not None else '?'} rules){unseen}{share}"
        )

    def _terms(self) -> dict[str, Any]:
        out: dict[str, Any] = {"quantile": self.quantile, "probes": self.probes, "rules": self.rules}
        if self.unseen_probes:
            out.update(
                unseen_probes=self.unseen_probes,
                unseen_examples=self.unseen_examples,
                seen_examples=self.seen_examples,
            )
        if self.trained_share is not None:
            out["trained_share"] = self.trained_share
        return out


def _num(value: float | int | None, digits: int, sign: str = "") -> str:
    return "?" if value is None else f"{value:{sign}.{digits}f}"


def _replace(gate: CalibratedGate, **changes: Any) -> CalibratedGate:
    from dataclasses import replace

    return replace(gate, **changes)


# -- reading a gate back ---------------------------------------------------------------------------------------------


def gate_from_dict(data: Mapping[str, Any]) -> Gate:
    """A gate read back from what :meth:`Gate.to_dict` wrote (a tenant's stored calibrated gate, a cached rulebook
    gate); InvalidInputError naming what is malformed."""
    try:
        kind, score, threshold = data["kind"], data["score"], data["threshold"]
        terms = dict(data.get("terms") or {})
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"stored gate is malformed: {exc}", hint="calibrate the tenant again") from None
    try:
        if kind == "none":
            return NoGate()
        if not _is_finite(threshold):
            raise ValueError(f"threshold {threshold!r} is not a finite number")
        if kind == "fixed":
            if score not in ("similarity", "final"):
                raise ValueError(f"score {score!r}")
            examples = terms.get("examples") if terms.get("source") == "fallback" else None
            return FixedGate(float(threshold), score, _int_or_none(examples))
        if score != "similarity":
            raise ValueError(f"a {kind} gate compares the similarity, not {score!r}")
        band = _band(terms, float(threshold))
        if kind == "rulebook":
            return RulebookGate(
                float(threshold),
                _quantile(terms.get("quantile")),
                int(terms["probes"]),
                int(terms["examples"]),
                int(terms["rules"]),
                band,
            )
        if kind == "calibrated":
            return _calibrated(float(threshold), terms, band)
        if kind == "adapted":
            return AdaptedGate(
                float(threshold),
                _quantile(terms.get("quantile")),
                int(terms["probes"]),
                _int_or_none(terms.get("rules")),
                int(terms.get("unseen_probes", 0)),
                int(terms.get("unseen_examples", 0)),
                int(terms.get("seen_examples", 0)),
                _float_or_none(terms.get("trained_share")),
            )
        raise ValueError(f"unknown kind {kind!r}")
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"stored gate is malformed: {exc}", hint="calibrate the tenant again") from None


def _calibrated(threshold: float, terms: dict[str, Any], band: Band | None) -> CalibratedGate:
    target = terms.get("target", "best_f1")
    goal = _float_or_none(terms.get("goal"))
    if isinstance(target, str) and target.startswith(("precision >= ", "recall >= ")):  # written before typed gates
        target, _, value = target.partition(" >= ")
        goal = float(value)
    elif target == "best F1":
        target = "best_f1"
    if target not in ("balanced", "precision", "recall", "best_f1"):
        raise ValueError(f"calibration target {target!r}")
    if target in ("precision", "recall") and goal is None:
        raise ValueError(f"a {target} target without its goal")
    base = terms.get("base") or {}
    if not isinstance(base, dict):
        raise ValueError("base is not a mapping")
    model = terms.get("model")
    numbers = {k: _float_or_none(terms.get(k)) for k in ("shift", "fitted_shift", "weight", "prior", "precision",
                                                         "recall", "f1", "acc_at_1", "rejection")}  # fmt: skip
    return CalibratedGate(
        threshold,
        target,
        int(terms.get("messages", 0)),
        int(terms.get("near_misses", 0)),
        goal,
        band,
        base.get("kind"),
        _float_or_none(base.get("threshold")),
        expecting_none=_int_or_none(terms.get("expecting_none")),
        rules=_int_or_none(terms.get("rules")),
        rules_version=_int_or_none(terms.get("rules_version")),
        model=model if isinstance(model, str) else None,
        refit=None if terms.get("confidence") is None else Refit.from_dict(terms["confidence"]),
        **numbers,
    )


def _band(terms: Mapping[str, Any], threshold: float) -> Band | None:
    if "band_threshold" not in terms:
        return None
    band, margin = terms["band_threshold"], terms.get("margin")
    if not (_is_finite(band) and _is_finite(margin)) or margin < 0 or band > threshold:
        raise ValueError(f"band: band_threshold {band!r}, margin {margin!r} (threshold {threshold})")
    quantile = terms.get("band_quantile")
    return Band(float(band), float(margin), _quantile(quantile) if quantile is not None else None)


def _is_finite(value: object) -> TypeGuard[float]:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _quantile(value: object) -> float:
    if not _is_finite(value) or not 0 < value < 1:
        raise ValueError(f"quantile {value!r}")
    return float(value)


def _float_or_none(value: object) -> float | None:
    if value is None:
        return None
    if not _is_finite(value):
        raise ValueError(f"{value!r} is not a finite number")
    return float(value)


def _int_or_none(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not an integer")
    return value


# -- an adapted encoder's held-out similarities -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeldOut:
    """What adapting an encoder stored for its gate (``norma_adapted.json`` in its folder): the best similarities of
    the examples it held out of a first training run (sorted), how many rules it was adapted on, and a sketch of the
    texts it was trained on (the smallest CRC-32 keys, to tell which of today's texts are new to it)."""

    similarities: tuple[float, ...]
    rules: int | None = None
    trained_texts: int | None = None
    sketch: frozenset[int] = frozenset()
    owners: tuple[tuple[int, float | None, float | None], ...] = ()
    """The same probes split by owner: (CRC-32 key of its rule's first text, best similarity to another text of its
    rule, best to another rule's text; None where there is none), for the confidence's statistics (empty for an
    encoder adapted by an earlier norma)."""

    def trained(self) -> Callable[[str], bool | None] | None:
        """Whether the encoder was trained on a text: exact up to 4,096 trained texts; beyond, only for texts whose
        key falls in the sketch's range (None for the others). None without a sketch."""
        if not self.sketch or self.trained_texts is None:
            return None
        keys, whole, limit = self.sketch, len(self.sketch) >= self.trained_texts, max(self.sketch)

        def lookup(text: str) -> bool | None:
            key = text_key(text)
            return key in keys if whole or key <= limit else None

        return lookup


def read_held_out(model_dir: str | os.PathLike[str]) -> HeldOut | None:
    """The held-out similarities an adapted encoder's folder stores for its gate; None when the folder is not an
    adapted encoder or stores too few (fewer than 20); ConfigError when the record is malformed. Reads the record's
    ``held_out`` (or ``gate``, the key of encoders adapted by an earlier norma)."""
    from norma.embeddings import ADAPTED_FILE, adapted_info

    record = adapted_info(model_dir)  # the adapting record, as data
    path = Path(model_dir) / ADAPTED_FILE
    data = None if record is None else record.get("held_out", record.get("gate"))
    if not isinstance(data, dict):
        return None
    values = data.get("similarities")
    if not isinstance(values, list) or len(values) < MIN_PROBES:
        return None
    sketch = data.get("sketch") or []
    if (
        not all(_is_finite(v) for v in values)
        or not isinstance(sketch, list)
        or not all(isinstance(k, int) for k in sketch)
    ):
        raise ConfigError(f"{ADAPTED_FILE} holds a malformed gate", source=str(path))
    rules, texts = data.get("rules"), data.get("texts")
    return HeldOut(
        tuple(sorted(float(v) for v in values)),
        rules if isinstance(rules, int) else None,
        texts if isinstance(texts, int) else None,
        frozenset(sketch),
        _owners(data.get("by_rule") or {}, path),
    )


def _owners(by_rule: Any, path: Path) -> tuple[tuple[int, float | None, float | None], ...]:
    """The ``by_rule`` record of a held-out measurement as (rule key, own, other) triples, in its order."""
    from norma.embeddings import ADAPTED_FILE

    try:
        out = [
            (int(key), None if own is None else float(own), None if other is None else float(other))
            for key, pairs in dict(by_rule).items()
            for own, other in pairs
        ]
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{ADAPTED_FILE} holds a malformed by_rule record: {exc}", source=str(path)) from None
    if not all(v is None or math.isfinite(v) for _, own, other in out for v in (own, other)):
        raise ConfigError(f"{ADAPTED_FILE} holds a similarity that is not finite", source=str(path))
    return tuple(out)


def default_held_out() -> HeldOut | None:
    """What the default encoder's folder (``$NORMA_MODEL_DIR``, e.g. from ``norma rules adapt``) stores for its gate;
    None for the packaged model or a folder that stores none. The CLI and the service hand it to their matchers."""
    from norma.embeddings import find_model_dir
    from norma.errors import NormaError

    try:
        directory, packaged = find_model_dir()
    except NormaError:
        return None
    return None if packaged else read_held_out(directory)


# -- resolution ------------------------------------------------------------------------------------------------------

GateSource = Gate | HeldOut
"""What a matcher can be given: a gate (fixed or calibrated: used as is; rulebook: used for the rules it was
measured on), or an adapted encoder's :class:`HeldOut`."""


def resolve(index: MatchIndex, cfg: MatchConfig, given: GateSource | None) -> Gate:
    """The gate a match with ``cfg`` applies on ``index``: the config's number or none; with ``threshold="auto"`` a
    given fixed or calibrated gate, else the adapted encoder's (``given`` a :class:`HeldOut`), else the rulebook's
    (a given :class:`RulebookGate` is the caller's measurement of these same rules at this config's settings)."""
    if cfg.threshold is None:
        return NoGate()
    if cfg.threshold != "auto":
        return FixedGate(float(cfg.threshold), cfg.threshold_on)
    if isinstance(given, (FixedGate, CalibratedGate)):
        return given
    if isinstance(given, HeldOut):
        return _adapted(index, cfg, given)
    quantile, band = rulebook_settings(cfg)
    if isinstance(given, RulebookGate) and given.quantile == quantile and band_key(given.band) == band:
        return given
    return rulebook_gate(index, cfg)


def rulebook_settings(cfg: MatchConfig) -> tuple[float, tuple[float, float] | None]:
    """(quantile, (band quantile, margin) or None) of the rulebook gate ``cfg`` asks for: the band only below the
    quantile. A measured :class:`RulebookGate` fits ``cfg`` when ``(gate.quantile, band_key(gate.band))`` equals it."""
    quantile = cfg.gate_quantile if cfg.gate_quantile is not None else RULEBOOK_QUANTILE
    band = cfg.gate_band_quantile
    return quantile, None if band is None or band >= quantile else (band, cfg.gate_margin)


def band_key(band: Band | None) -> tuple[float, float] | None:
    """A measured band's (quantile, margin), as :func:`rulebook_settings` gives it."""
    return None if band is None or band.quantile is None else (band.quantile, band.margin)


def rulebook_gate(index: MatchIndex, cfg: MatchConfig) -> Gate:
    """The rulebook's own gate (see the module docstring), or the fixed fallback below 20 example texts;
    deterministic for a set of rules and vectors whatever the order they were added in. One pass of the probes over
    every rule vector, bounded (past 16.7 M products the sample shrinks, never below 256 probes)."""
    alive = np.flatnonzero(index.alive[: index.size])
    examples = sum(len(index.texts_at[int(s)]) - 1 for s in alive)
    if index.vectors is None or examples < MIN_PROBES:
        return FixedGate(FALLBACK_SIMILARITY, "similarity", examples)
    probes = _sample(index, alive, ((slot, k) for slot in alive.tolist() for k in range(1, len(index.texts_at[slot]))))
    measured = _best_other(index, alive, probes)
    quantile, band = rulebook_settings(cfg)
    lower = None if band is None else Band(_quantile_of(measured, band[0]), band[1], band[0])
    return RulebookGate(_quantile_of(measured, quantile), quantile, len(probes), examples, len(alive), lower)


def _quantile_of(values: np.ndarray, q: float) -> float:
    return round(float(np.quantile(values, q)), 4)


def _adapted(index: MatchIndex, cfg: MatchConfig, held: HeldOut) -> AdaptedGate:
    """The adapted encoder's gate on ``index``: the quantile of the stored held-out similarities and of the examples
    new to the encoder (measured like the rulebook's probes), each set weighted by the examples it stands for."""
    quantile = cfg.gate_quantile if cfg.gate_quantile is not None else ADAPTED_QUANTILE
    stored = np.asarray(held.similarities, dtype=np.float64)
    lookup = held.trained()
    alive = np.flatnonzero(index.alive[: index.size])
    if lookup is None or index.vectors is None:
        return AdaptedGate(_quantile_of(stored, quantile), quantile, len(stored), held.rules)
    texts = {text for slot in alive.tolist() for text in index.texts_at[slot]}
    known = [seen for seen in map(lookup, texts) if seen is not None]
    share = round(sum(known) / len(known), 3) if known else None
    new: list[tuple[int, int]] = []
    seen = 0
    for slot in alive.tolist():
        rule_texts = index.texts_at[slot]
        new_rule = lookup(rule_texts[0]) is False  # a rule added since: every example of it is new to the encoder
        for k in range(1, len(rule_texts)):
            verdict = False if new_rule else lookup(rule_texts[k])
            if verdict:
                seen += 1
            elif verdict is False:
                new.append((slot, k))
    if not new:
        return AdaptedGate(_quantile_of(stored, quantile), quantile, len(stored), held.rules, trained_share=share)
    fresh = _best_other(index, alive, _sample(index, alive, new))
    weights = np.concatenate([np.full(len(stored), seen / len(stored)), np.full(len(fresh), len(new) / len(fresh))])
    threshold = round(_weighted_quantile(np.concatenate([stored, fresh]), weights, quantile), 4)
    return AdaptedGate(threshold, quantile, len(stored), held.rules, len(fresh), len(new), seen, share)


def _sample(index: MatchIndex, alive: np.ndarray, texts: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """A fixed sample of (slot, text number): the smallest keys (rule id + text), whatever the insertion order;
    at most :data:`MAX_PROBES`, fewer on a large rulebook (:data:`_BUDGET`)."""
    assert index.vectors is not None
    count = min(MAX_PROBES, max(_MIN_SAMPLE, _BUDGET // max(index.vectors.rows, 1)))
    ids, texts_at = index.ids, index.texts_at
    return pick_probes(((f"{ids[slot]}\x00{texts_at[slot][k]}", (slot, k)) for slot, k in texts), count)


def _best_other(index: MatchIndex, alive: np.ndarray, probes: Sequence[tuple[int, int]]) -> np.ndarray:
    """Each probe's (slot, text number) best similarity to every other text of the rulebook (its own text and
    identical texts left out; 0 where there is none): :func:`~norma.embeddings.probe_similarities` over the rule
    vectors."""
    vectors = index.vectors
    assert vectors is not None
    texts_at = index.texts_at
    matrix, _ = vectors.live_view()
    texts: list[str | None] = [None] * len(matrix)  # a free row holds no text
    for slot in alive.tolist():
        for row, text in zip(vectors.row_ids(slot).tolist(), texts_at[slot], strict=True):
            texts[row] = text
    return probe_similarities(matrix, texts, [int(vectors.row_ids(slot)[k]) for slot, k in probes])


def _weighted_quantile(values: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The smallest of ``values`` whose cumulative weight (values in increasing order) reaches ``q`` of the total."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    at = min(int(np.searchsorted(cumulative, q * cumulative[-1])), len(values) - 1)
    return float(values[order][at])
