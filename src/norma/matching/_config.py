"""How a message is matched: every weight, threshold and switch of the ADR-002 pipeline, validated.

``MatchConfig()`` is norma's default (how each default was chosen: docs/design/040-matching.md);
``MatchConfig.adr()`` is ADR-002's formula exactly as written (per-query min-max BM25 over the condition texts,
vector scores only for the over-fetched vector candidates, threshold on the final score).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import pydantic
from pydantic import BaseModel, ConfigDict, Field, model_validator

from norma.errors import InvalidInputError
from norma.rules import Scope

__all__ = ["Bm25Normalization", "Bm25Text", "CandidatePool", "LongMessages", "MatchConfig", "ThresholdOn"]

Bm25Normalization = Literal["minmax", "max", "query"]
"""``minmax``: (s - min) / (max - min) over the message's candidates (ADR; the top lexical hit gets 1.0 even when
irrelevant); ``max``: s / max; ``query``: s / (sum of the idf of the message's terms), the share of the message's
lexical evidence a rule matches, independent of the other rules."""
Bm25Text = Literal["condition", "rule", "rule_and_examples"]
"""What BM25 indexes per rule: the condition text (ADR), condition + action, or those and every example."""
CandidatePool = Literal["vector", "hybrid"]
"""``vector`` (ADR): only the top ``max_candidates`` by similarity get a vector score, every other candidate 0;
``hybrid``: the top ``max_candidates`` by similarity and by BM25 are pooled and all of them scored exactly."""
ThresholdOn = Literal["similarity", "final"]
"""The score a numeric ``threshold`` is compared with: the similarity (the cosine of the message to the rule's
nearest text), or the final score (ADR-002, which includes the near-constant priority and scope terms)."""
LongMessages = Literal["chunk", "truncate"]
"""Messages longer than the model's window: embedded in windows (similarity = max over windows) or truncated."""

_DEFAULT_SCOPE_WEIGHTS = {Scope.GLOBAL: 1.0, Scope.SCENARIO: 1.1, Scope.STEP: 1.2}


def _describe(error: pydantic.ValidationError) -> tuple[str, str | None]:
    parts, first = [], None
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "config"
        first = first or where
        parts.append(f"{where}: {str(item['msg']).removeprefix('Value error, ')}")
    return "; ".join(parts), first


class MatchConfig(BaseModel):
    """Weights and switches of the matcher. Bad values raise :class:`~norma.errors.InvalidInputError`.

    final = ``hybrid_weight`` * hybrid + ``priority_weight`` * norm(priority) + ``scope_weight`` *
    ``scope_weights[scope]``, hybrid = ``vector_weight`` * similarity + ``bm25_weight`` * norm(bm25).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    vector_weight: float = Field(default=0.7, ge=0)
    """Weight of the cosine similarity inside the hybrid score (ADR 0.7)."""
    bm25_weight: float = Field(default=0.3, ge=0)
    """Weight of the normalised BM25 score inside the hybrid score (ADR 0.3)."""
    hybrid_weight: float = Field(default=0.6, ge=0)
    """Weight of the hybrid score inside the final score (ADR 0.6)."""
    priority_weight: float = Field(default=0.3, ge=0)
    """Weight of the normalised priority inside the final score (ADR 0.3)."""
    scope_weight: float = Field(default=0.1, ge=0)
    """Weight of the scope weight inside the final score (ADR 0.1)."""
    scope_weights: dict[Scope, float] = Field(default_factory=lambda: dict(_DEFAULT_SCOPE_WEIGHTS))
    """Per-scope weight (ADR: global 1.0, scenario 1.1, step 1.2)."""
    threshold: float | Literal["auto"] | None = "auto"
    """The gate. ``"auto"``: the tenant's calibrated gate when it has one (``norma rules calibrate``), else the rules
    whose confidence that they govern the message reaches 0.7 (see docs/matching.md, "The decision"). A number: the
    minimum of the score named by ``threshold_on``, and the gate alone. None: no gate."""
    threshold_on: ThresholdOn = "similarity"
    """Which score a numeric threshold applies to (the automatic gate compares the confidence)."""
    max_candidates: int = Field(default=30, ge=1)
    """Over-fetch: candidates taken from the vector (and, with the hybrid pool, the BM25) ranking (ADR 30)."""
    max_matched: int = Field(default=10, ge=1)
    """Most rules returned (ADR 10)."""
    bm25_normalization: Bm25Normalization = "query"
    """How raw BM25 scores are mapped to [0, 1] (the ADR leaves it open)."""
    bm25_text: Bm25Text = "rule_and_examples"
    """What BM25 indexes for each rule."""
    candidate_pool: CandidatePool = "hybrid"
    """Which candidates get a vector score (see :data:`CandidatePool`)."""
    bm25_k1: float = Field(default=1.5, gt=0)
    """BM25 term-frequency saturation (bm25s default)."""
    bm25_b: float = Field(default=0.75, ge=0, le=1)
    """BM25 length normalisation (bm25s default)."""
    priority_range: tuple[int, int] | None = None
    """Fixed (low, high) priorities mapped to 0 and 1; None: min-max over the matcher's rules (0 when all equal)."""
    hnsw_min_rows: int = Field(default=50_000, ge=1)
    """From this many rule vectors (rules + examples) on, candidates come from an HNSW index, rescored exactly."""
    hnsw_oversample: int = Field(default=8, ge=1)
    """The HNSW index is asked for ``hnsw_oversample * max_candidates`` vectors (at least 200)."""
    long_messages: LongMessages = "chunk"
    """What to do with messages longer than the model's window."""
    max_chunks: int = Field(default=16, ge=1)
    """Most windows a long message is embedded in; text past them is ignored by the vector side."""
    example_centroid_weight: float = Field(default=0.7, ge=0, le=1)
    """For a rule with 2+ examples, the vector score is ``(1 - w) * similarity + w * centroid`` where centroid is the
    cosine to the normalised mean of its examples (nearest example and the intent's centre together); 0 keeps the
    plain max over the rule's texts (ADR-002 option D, and ``MatchConfig.adr()``). ``similarity`` stays the max."""
    max_message_chars: int = Field(default=100_000, ge=1)
    """Longest message accepted; a longer one is refused with :class:`~norma.errors.LimitExceededError` before
    any work (tokenising and embedding cost grows with the length)."""

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except pydantic.ValidationError as exc:
            message, where = _describe(exc)
            raise InvalidInputError(
                f"invalid match config: {message}", location=where, hint="run `norma docs matching` for every option"
            ) from None

    @model_validator(mode="after")
    def _finite(self) -> MatchConfig:
        for name in ("vector_weight", "bm25_weight", "hybrid_weight", "priority_weight", "scope_weight", "bm25_k1"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number")
        if isinstance(self.threshold, float) and not math.isfinite(self.threshold):
            raise ValueError('threshold must be a finite number, "auto" or null')
        for scope in Scope:
            if scope not in self.scope_weights:
                raise ValueError(f"scope_weights needs a weight for {scope.value!r}")
            if not math.isfinite(self.scope_weights[scope]):
                raise ValueError(f"scope_weights.{scope.value} must be a finite number")
        if self.priority_range is not None and self.priority_range[0] >= self.priority_range[1]:
            raise ValueError("priority_range must be (low, high) with low < high")
        return self

    @classmethod
    def adr(cls, **overrides: Any) -> MatchConfig:
        """ADR-002's formula exactly: min-max BM25 over condition texts, vector scores for the top 30 only,
        threshold 0.5 on the final score."""
        values: dict[str, Any] = {
            "threshold": 0.5,
            "threshold_on": "final",
            "bm25_normalization": "minmax",
            "bm25_text": "condition",
            "candidate_pool": "vector",
            "example_centroid_weight": 0.0,
        }
        values.update(overrides)
        return cls(**values)

    def with_(self, **changes: Any) -> MatchConfig:
        """A copy with some fields changed (validated like the constructor); fields never set stay unset
        (``model_fields_set``)."""
        return MatchConfig(**{**{name: getattr(self, name) for name in self.model_fields_set}, **changes})
