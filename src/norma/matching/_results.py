"""What a match returns: the matched rules with their score breakdown, and (when asked) the rules dropped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from norma.matching._enforce import Enforcement, EnforcementReason
from norma.matching._gate import Gate
from norma.rules import Rule

__all__ = [
    "DroppedRule",
    "EnforcementData",
    "ExplanationData",
    "MatchExplanation",
    "MatchResult",
    "MatchedRule",
    "MatchedRuleData",
]

_DATA = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class _ReadAsMapping(BaseModel):
    """A part of a match's JSON that code written when it was a dict (``MatchedRuleSummary.enforcement`` and
    ``.explanation`` before issue #57) can still read by key: ``part["reason"]``, ``part.get("confidence")`` (the
    field's value, typed: ``reason`` an :class:`EnforcementReason`, equal to its string)."""

    def __getitem__(self, key: str) -> Any:
        if key not in type(self).model_fields:
            raise KeyError(key)
        return getattr(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        """The field ``key``'s value, or ``default`` when the part has no such field."""
        return getattr(self, key) if key in type(self).model_fields else default


@dataclass(frozen=True, slots=True)
class MatchExplanation:
    """Why a rule scored what it scored: every component, the weights, and what matched."""

    similarity: float
    """Cosine similarity: the max over the rule's text and its examples."""
    vector_score: float
    """The vector score as it entered the hybrid score: the similarity, blended with ``example_centroid`` when that
    is set (0 when the ADR pool left the rule out of the vector top)."""
    matched_text: str
    """The text whose vector was closest: the rule's condition + action, or one of its examples."""
    matched_example: int | None
    """Index of that example in ``rule.examples``; None when the rule's own text matched best."""
    bm25_raw: float
    """Raw BM25 of the message against the rule's indexed text."""
    bm25_normalized: float
    """BM25 after normalisation (see ``bm25_normalization``)."""
    matched_terms: tuple[str, ...]
    """Message terms found in the rule's indexed text."""
    hybrid: float
    """vector_weight * vector_score + bm25_weight * bm25_normalized."""
    priority_normalized: float
    """The rule's priority mapped to [0, 1]."""
    scope_weight: float
    """The weight of the rule's scope."""
    final: float
    """hybrid_weight * hybrid + priority_weight * priority_normalized + scope_weight_factor * scope_weight."""
    threshold: float | None
    """The threshold in force (None: none)."""
    threshold_on: str
    """The score the threshold was compared with: ``confidence`` (the default gate: the match's confidence that it
    governs the message, :attr:`MatchedRule.confidence`), ``similarity`` or ``final``."""
    weights: dict[str, float] = field(default_factory=dict)
    """The weights used."""
    bm25_normalization: str = "query"
    """How BM25 was normalised."""
    example_centroid: float | None = None
    """Cosine similarity to the normalised mean of the rule's examples, when it was blended into ``vector_score``
    (``example_centroid_weight`` > 0 and the rule has 2+ examples); None otherwise."""

    @property
    def threshold_score(self) -> float | None:
        """The score the threshold applies to; None when it is the confidence, which the match holds
        (:attr:`MatchedRule.confidence`), not its explanation."""
        if self.threshold_on == "confidence":
            return None
        return self.final if self.threshold_on == "final" else self.similarity

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return {
            "similarity": self.similarity,
            "vector_score": self.vector_score,
            "matched_text": self.matched_text,
            "matched_example": self.matched_example,
            "bm25_raw": self.bm25_raw,
            "bm25_normalized": self.bm25_normalized,
            "bm25_normalization": self.bm25_normalization,
            "matched_terms": list(self.matched_terms),
            "hybrid": self.hybrid,
            "priority_normalized": self.priority_normalized,
            "scope_weight": self.scope_weight,
            "final": self.final,
            "threshold": self.threshold,
            "threshold_on": self.threshold_on,
            "weights": dict(self.weights),
            "example_centroid": self.example_centroid,
        }


@dataclass(frozen=True, slots=True)
class MatchedRule:
    """One rule that applies to the message."""

    rule: Rule
    similarity_score: float
    """Cosine similarity (max over the rule's text and examples)."""
    bm25_score: float
    """Normalised BM25 in [0, 1] (the raw score is in the explanation)."""
    final_score: float
    """The ADR final score the results are sorted by."""
    explanation: MatchExplanation
    enforcement: Enforcement
    """Whether the rule governs the turn (a turn check applies its requirements), and why (``_enforce.py``)."""

    @property
    def enforced(self) -> bool:
        """Whether the rule governs the turn: its confidence reaches ``GOVERNS``."""
        return self.enforcement.enforced

    @property
    def confidence(self) -> float:
        """The confidence that the rule governs the message, in [0, 1] (calibrated: docs/matching.md)."""
        return self.enforcement.confidence

    def __repr__(self) -> str:
        return (
            f"<MatchedRule {self.rule.id} {self.enforcement.reason.value} {self.confidence:.2f}, "
            f"final score {self.final_score:.3f}>"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping: the rule id, its scores, whether it is enforced, the explanation and the rule."""
        return {
            "rule_id": self.rule.id,
            "similarity_score": self.similarity_score,
            "bm25_score": self.bm25_score,
            "final_score": self.final_score,
            "enforcement": self.enforcement.to_dict(),
            "explanation": self.explanation.to_dict(),
            "rule": self.rule.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class DroppedRule:
    """A rule that would have been a candidate, and why it is not in the results (``explain=True``)."""

    rule_id: str
    reason: str
    """One of ``scope``, ``disabled``, ``tags``, ``max_fires_per_session``, ``cooldown``, ``threshold``,
    ``max_matched``."""
    detail: str
    """The reason in words (the active scenario, the fire count, the score and the threshold...)."""
    similarity: float
    """The rule's cosine similarity to the message."""
    final_score: float | None = None
    """Its final score, when it was scored (not for rules gated out before scoring)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping."""
        return {
            "rule_id": self.rule_id,
            "reason": self.reason,
            "detail": self.detail,
            "similarity": self.similarity,
            "final_score": self.final_score,
        }


class MatchResult(list[MatchedRule]):
    """The matched rules, best first (a plain list), plus ``dropped``: the rules left out and why.

    ``dropped`` is filled only by ``match(..., explain=True)``: rules among the message's nearest ones (by
    similarity, up to ``max_candidates``) or scored candidates that were gated, filtered or cut.
    """

    dropped: list[DroppedRule]
    gate: Gate | None
    """The gate the match applied (set by the matcher)."""

    def __init__(
        self,
        matches: list[MatchedRule] | None = None,
        dropped: list[DroppedRule] | None = None,
        gate: Gate | None = None,
    ) -> None:
        super().__init__(matches or [])
        self.dropped = dropped or []
        self.gate = gate

    def __repr__(self) -> str:
        if not self:
            return "<MatchResult 0 rules>"
        rules = ", ".join(f"{m.rule.id} {m.enforcement.reason.value} {m.confidence:.2f}" for m in self)
        return f"<MatchResult {len(self)} rule{'' if len(self) == 1 else 's'}: {rules}>"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping with ``matches``, ``dropped`` and ``gate`` (the gate applied, with its terms)."""
        return {
            "matches": [m.to_dict() for m in self],
            "dropped": [d.to_dict() for d in self.dropped],
            "gate": None if self.gate is None else self.gate.to_dict(),
        }


class EnforcementData(_ReadAsMapping):
    """The JSON of :class:`Enforcement` (``Enforcement.to_dict()``): whether a match governs the turn, that is
    whether a turn check applies its requirements, and why (docs/check.md)."""

    model_config = _DATA
    enforced: bool
    """True when the rule governs the message (its confidence reaches 0.7); False for a match that is relevant
    only: its requirement checks are reported ``skip``, its prohibitions still apply."""
    reason: EnforcementReason
    """``governs``, or ``neighbour``: relevant, its requirements not enforced."""
    confidence: float
    """The confidence that the rule governs the message, in [0, 1]: calibrated, a 0.8 is right about 80 % of the
    time (docs/matching.md)."""
    detail: str
    """The reason in words, with the figures ("confidence 0.34 < 0.7 that it governs the message")."""


class ExplanationData(_ReadAsMapping):
    """The JSON of a :class:`MatchExplanation` (``MatchExplanation.to_dict()``, its keys in that order): how a match's
    final score was made."""

    model_config = _DATA
    similarity: float
    """Cosine similarity: the max over the rule's text and its examples."""
    vector_score: float
    """The vector score as it entered the hybrid score: the similarity, blended with ``example_centroid`` when that
    is set (0 when the ADR pool left the rule out of the vector top)."""
    matched_text: str
    """The text whose vector was closest: the rule's condition + action, or one of its examples."""
    matched_example: int | None
    """Index of that example in the rule's ``examples``; None when the rule's own text matched best."""
    bm25_raw: float
    """Raw BM25 of the message against the rule's indexed text."""
    bm25_normalized: float
    """BM25 after normalisation (``bm25_normalization``)."""
    bm25_normalization: str
    """How BM25 was normalised (``query``, ``max``, ``minmax``)."""
    matched_terms: tuple[str, ...]
    """Message terms found in the rule's indexed text."""
    hybrid: float
    """vector_weight * vector_score + bm25_weight * bm25_normalized."""
    priority_normalized: float
    """The rule's priority mapped to [0, 1]."""
    scope_weight: float
    """The weight of the rule's scope."""
    final: float
    """hybrid_weight * hybrid + priority_weight * priority_normalized + scope_weight_factor * scope_weight."""
    threshold: float | None
    """The threshold in force (None: none)."""
    threshold_on: str
    """The score the threshold was compared with: ``confidence`` (the default gate), ``similarity`` or ``final``."""
    weights: dict[str, float]
    """The weights used (vector, bm25, hybrid, priority, scope)."""
    example_centroid: float | None
    """Cosine similarity to the normalised mean of the rule's examples, when it was blended into ``vector_score``;
    None otherwise."""


class MatchedRuleData(BaseModel):
    """The JSON of a :class:`MatchedRule` (``MatchedRule.to_dict()``): what ``norma match --format json``, the
    service's ``/match`` and the MCP tool ``match_rules`` give for each rule that applies to the message."""

    model_config = _DATA
    rule_id: str
    similarity_score: float
    """Cosine similarity of the message to the rule's text or its nearest example."""
    bm25_score: float
    """Normalised BM25 in [0, 1]."""
    final_score: float
    """The score the matches are sorted by (hybrid score, priority and scope; docs/matching.md)."""
    enforcement: EnforcementData
    """Whether the rule governs the turn, and why."""
    explanation: ExplanationData
    """How the final score was made: similarity, matched_text, matched_example, bm25_raw, hybrid,
    priority_normalized, scope_weight, final, threshold, weights..."""
    rule: dict[str, Any]
    """The rule itself (id, condition_text, action_text, scope, priority, tags, examples, checks...)."""
