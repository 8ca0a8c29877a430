"""The gate: what a rule must reach to be returned by a match, as one typed value per kind.

A gate is one of four kinds, each a frozen dataclass with typed fields (:meth:`Gate.to_dict` only for JSON):

* :class:`ConfidenceGate` — ``threshold="auto"`` (the default): a rule is relevant when its confidence that it
  governs the message reaches :data:`~norma.matching.GOVERNS` (0.7): relevance and governance are one number;
* :class:`CalibratedGate` — set from labelled messages (:func:`~norma.matching.calibrate_gate`), stored per tenant:
  balanced (the confidence refitted on the messages, the same 0.7), or a precision / recall / best-F1 target (a
  similarity threshold);
* :class:`FixedGate` — a number from the config (on the similarity, or the final score for ``MatchConfig.adr()``);
* :class:`NoGate` — ``MatchConfig(threshold=None)``: every scored rule can match.

The matcher is given a calibrated or fixed gate (used as is) or nothing; an adapted encoder's :class:`HeldOut` only
gives its confidence the statistics of the examples the encoder never saw. The gate never depends on the message
nor on the rulebook's size. How the default was chosen: docs/design/040-matching.md.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeGuard

from norma.embeddings import MIN_PROBES, text_key
from norma.errors import ConfigError, InvalidInputError
from norma.matching._confidence import GOVERNS, Refit
from norma.matching._config import MatchConfig

__all__ = [
    "CalibratedGate",
    "CalibrationTarget",
    "ConfidenceGate",
    "FixedGate",
    "Gate",
    "GateScore",
    "GateSource",
    "HeldOut",
    "NoGate",
    "default_held_out",
    "gate_from_dict",
    "read_held_out",
    "resolve",
]

GateScore = Literal["similarity", "final", "confidence"]


class Gate:
    """What every gate kind has: ``kind``, the ``score`` it compares, its ``threshold`` (None: no gate), a one-line
    ``description``, and :meth:`to_dict` for JSON."""

    __slots__ = ()
    kind: ClassVar[str]
    threshold: float | None

    @property
    def score(self) -> GateScore:
        return "similarity"

    @property
    def description(self) -> str:
        raise NotImplementedError

    def _terms(self) -> dict[str, Any]:
        return {}

    def to_dict(self) -> dict[str, Any]:
        """``kind``, ``score``, ``threshold``, ``terms`` (every typed field) and ``description``, JSON-ready."""
        return {
            "kind": self.kind,
            "score": self.score,
            "threshold": self.threshold,
            "terms": self._terms(),
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
    """A threshold set in the config, ``on`` the similarity or the final score."""

    kind: ClassVar[str] = "fixed"
    threshold: float
    on: Literal["similarity", "final"] = "similarity"

    @property
    def score(self) -> GateScore:
        return self.on

    @property
    def description(self) -> str:
        return f"{self.on} >= {self.threshold:g} (threshold set in the config)"

    def _terms(self) -> dict[str, Any]:
        return {"source": "config"}


@dataclass(frozen=True, slots=True)
class ConfidenceGate(Gate):
    """The default: a rule is relevant when its confidence that it governs the message reaches ``threshold``
    (:data:`~norma.matching.GOVERNS`), so every rule returned governs the turn."""

    kind: ClassVar[str] = "confidence"
    threshold: float = GOVERNS

    @property
    def score(self) -> GateScore:
        return "confidence"

    @property
    def description(self) -> str:
        return f"confidence >= {self.threshold:g}: the rules that govern the message (the default gate)"


CalibrationTarget = Literal["balanced", "precision", "recall", "best_f1"]


@dataclass(frozen=True, slots=True)
class CalibratedGate(Gate):
    """Set from labelled messages (:func:`~norma.matching.calibrate_gate`). ``balanced``: the confidence refitted
    on the messages (``refit``) and the default gate on it (``on="confidence"``, ``threshold`` 0.7); a target: the
    single similarity threshold meeting ``goal``. The figures (precision, recall, F1, acc@1, rejection) are the
    messages' at this gate (None for a gate stored by an earlier norma, measured at a gate that is gone)."""

    kind: ClassVar[str] = "calibrated"
    threshold: float
    target: CalibrationTarget
    messages: int
    near_misses: int = 0
    goal: float | None = None
    on: Literal["similarity", "confidence"] = "similarity"
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
        if (self.target == "balanced") != (self.on == "confidence"):
            raise InvalidInputError("a balanced calibration gates on the confidence, a target on the similarity")

    @property
    def score(self) -> GateScore:
        return self.on

    @property
    def description(self) -> str:
        refit = "the shipped confidence" if self.refit is None else f"the confidence refitted: {self.refit.words}"
        misses = f" and {self.near_misses} near misses" if self.near_misses else ""
        version = f" at tenant version {self.rules_version if self.rules_version is not None else '?'}"
        head = f"calibrated on {self.messages} labelled messages{misses}{version}"
        if self.target == "balanced":
            figures = (
                ""
                if self.acc_at_1 is None
                else f"; acc@1 {_num(self.acc_at_1, 3)}, rejection {_num(self.rejection, 3)} on them"
            )
            return f"confidence >= {self.threshold:g}, {head}: {refit}{figures}"
        goal = "best F1" if self.target == "best_f1" else f"{self.target} >= {self.goal:g}"
        return (
            f"similarity >= {self.threshold:.4f}, {head} ({goal}; precision {_num(self.precision, 3)}, recall "
            f"{_num(self.recall, 3)}); governing: {refit}"
        )

    def _terms(self) -> dict[str, Any]:
        out: dict[str, Any] = {"target": self.target, "messages": self.messages, "near_misses": self.near_misses}
        for name in _CALIBRATED_NUMBERS:
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.refit is not None:
            out["confidence"] = self.refit.to_dict()
        return out

    def with_context(self, *, rules: int, rules_version: int, model: str) -> CalibratedGate:
        """This gate with the rules it was calibrated on, their version and the model recorded."""
        from dataclasses import replace

        return replace(self, rules=rules, rules_version=rules_version, model=model)


_CALIBRATED_NUMBERS = (
    "goal", "expecting_none", "precision", "recall", "f1", "acc_at_1", "rejection", "rules", "rules_version", "model",
)  # fmt: skip


def _num(value: float | int | None, digits: int) -> str:
    return "?" if value is None else f"{value:.{digits}f}"


# -- reading a gate back ---------------------------------------------------------------------------------------------


def gate_from_dict(data: Mapping[str, Any]) -> Gate:
    """A gate read back from what :meth:`Gate.to_dict` wrote (a tenant's stored calibrated gate); InvalidInputError
    naming what is malformed. The automatic gates of an earlier norma (``rulebook``, ``adapted``) read as today's
    :class:`ConfidenceGate`; its balanced calibrations (a moved similarity gate) as a balanced calibration of the
    confidence with the refit they stored, without their figures (measured at a gate that is gone)."""
    try:
        kind, score, threshold = data["kind"], data["score"], data["threshold"]
        terms = dict(data.get("terms") or {})
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"stored gate is malformed: {exc}", hint="calibrate the tenant again") from None
    try:
        if kind == "none":
            return NoGate()
        if kind in ("confidence", "rulebook", "adapted"):
            return ConfidenceGate()
        if not _is_finite(threshold):
            raise ValueError(f"threshold {threshold!r} is not a finite number")
        if kind == "fixed":
            if score not in ("similarity", "final"):
                raise ValueError(f"score {score!r}")
            return FixedGate(float(threshold), score)
        if kind == "calibrated":
            return _calibrated(float(threshold), score, terms)
        raise ValueError(f"unknown kind {kind!r}")
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"stored gate is malformed: {exc}", hint="calibrate the tenant again") from None


def _calibrated(threshold: float, score: object, terms: dict[str, Any]) -> CalibratedGate:
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
    refit = None if terms.get("confidence") is None else Refit.from_dict(terms["confidence"])
    model = terms.get("model")
    balanced = target == "balanced"
    earlier = balanced and score != "confidence"  # an earlier norma's: a similarity gate moved, measured there
    if not balanced and score != "similarity":
        raise ValueError(f"a {target} calibration compares the similarity, not {score!r}")
    figures = {k: None if earlier else _float_or_none(terms.get(k)) for k in ("precision", "recall", "f1")}
    return CalibratedGate(
        GOVERNS if balanced else threshold,  # balanced: the one level; a refit moves the confidence, not the level
        target,
        int(terms.get("messages", 0)),
        int(terms.get("near_misses", 0)),
        goal,
        "confidence" if balanced else "similarity",
        _int_or_none(terms.get("expecting_none")),
        figures["precision"],
        figures["recall"],
        figures["f1"],
        None if earlier else _float_or_none(terms.get("acc_at_1")),
        None if earlier else _float_or_none(terms.get("rejection")),
        _int_or_none(terms.get("rules")),
        _int_or_none(terms.get("rules_version")),
        model if isinstance(model, str) else None,
        refit,
    )


def _is_finite(value: object) -> TypeGuard[float]:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


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


# -- an adapted encoder's held-out examples -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeldOut:
    """What adapting an encoder stored (``norma_adapted.json`` in its folder): the best similarities of the examples
    it held out of a first training run (sorted), how many rules it was adapted on, a sketch of the texts it was
    trained on (the smallest CRC-32 keys, to tell which of today's texts are new to it) and, per rule, the held-out
    examples' similarities that the confidence's statistics are measured from (``owners``)."""

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

    def trained_share(self, texts: Iterable[str]) -> float | None:
        """The share of ``texts`` the encoder was trained on, among those the sketch can tell (None: none)."""
        lookup = self.trained()
        if lookup is None:
            return None
        known = [seen for seen in map(lookup, set(texts)) if seen is not None]
        return round(sum(known) / len(known), 3) if known else None


def read_held_out(model_dir: str | os.PathLike[str]) -> HeldOut | None:
    """What an adapted encoder's folder stores of the examples it held out; None when the folder is not an adapted
    encoder or stores too few (fewer than 20); ConfigError when the record is malformed. Reads the record's
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
    """What the default encoder's folder (``$NORMA_MODEL_DIR``, e.g. from ``norma rules adapt``) stores of its held-out
    examples; None for the packaged model or a folder that stores none. The CLI and the service hand it to their
    matchers, whose confidence then reads statistics measured on examples the encoder never saw."""
    from norma.embeddings import find_model_dir
    from norma.errors import NormaError

    try:
        directory, packaged = find_model_dir()
    except NormaError:
        return None
    return None if packaged else read_held_out(directory)


# -- resolution ------------------------------------------------------------------------------------------------------

GateSource = Gate | HeldOut
"""What a matcher can be given: a calibrated or fixed gate (used as is), or an adapted encoder's :class:`HeldOut`
(the statistics of its confidence)."""


def resolve(cfg: MatchConfig, given: Gate | None) -> Gate:
    """The gate a match with ``cfg`` applies: the config's number or none; with ``threshold="auto"`` a given fixed or
    calibrated gate, else the confidence gate."""
    if cfg.threshold is None:
        return NoGate()
    if cfg.threshold != "auto":
        return FixedGate(float(cfg.threshold), cfg.threshold_on)
    if isinstance(given, (FixedGate, CalibratedGate)):
        return given
    return ConfidenceGate()
