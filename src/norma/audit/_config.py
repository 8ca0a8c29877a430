"""Thresholds and switches of the analyzer (§8.02 plus the IR.3.01 threshold), the norms audited against
(documents' acronyms, priority, rule ids, keywords), extra reference patterns, the report's language and size
limits, from code, a JSON file or flags."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import pydantic
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, field_validator

from norma._safety import Pattern, load_json
from norma.audit._language import Lang
from norma.audit._limits import AuditLimits
from norma.audit._models import AuditSeverity
from norma.audit._norms import NormsConfig
from norma.audit._references import compile_reference_pattern
from norma.errors import ConfigError, InvalidInputError
from norma.rules import describe_validation_error

__all__ = ["AuditConfig", "FormalityTolerance", "load_config"]

MAX_REFERENCE_PATTERNS = 32
"""Most entries of ``reference_patterns``."""
MAX_PATTERN_CHARS = 1_000
"""Longest reference pattern."""


class FormalityTolerance(enum.StrEnum):
    """How many formal markers a conversational answer may have before IR.7.02 warns (low 0, medium 1, high 2)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def allowed(self) -> int:
        return {"low": 0, "medium": 1, "high": 2}[self.value]


def _valid_reference_pattern(pattern: str) -> str:
    try:
        compile_reference_pattern(pattern)
    except InvalidInputError as exc:
        raise ValueError(f"{exc.message} ({exc.hint})" if exc.hint else exc.message) from None
    return pattern


ReferencePattern = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_PATTERN_CHARS), AfterValidator(_valid_reference_pattern)
]


class AuditConfig(BaseModel):
    """Every threshold of §8.02 (same keys) and the analyzer's switches; the defaults are the spec's values."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    ir_3_01_similarity_threshold: float = Field(default=0.70, ge=0.0, le=1.0)
    """IR.3.01: a concept whose best cosine against the input is below this has no context."""
    ir_4_01_embedding_threshold: float = Field(default=0.65, ge=0.0, le=1.0)
    """IR.4.01: a term whose best cosine against the normative vocabulary is below this is drift."""
    ir_4_02_fuzzy_match_threshold: float = Field(default=0.90, ge=0.0, le=1.0)
    """IR.4.02: a quoted claim whose best-window Indel ratio against the cited text is below this is paraphrase."""
    ir_5_02_coverage_ratio: float = Field(default=0.50, ge=0.0)
    """IR.5.02: the least coverage_ratio (distinct references / decisions) before a WARNING."""
    ir_6_02_determinism_threshold: float = Field(default=0.95, ge=0.0, le=1.0)
    """IR.6.02: the least similarity between any two runs."""
    ir_7_02_formality_tolerance: FormalityTolerance = FormalityTolerance.MEDIUM
    """IR.7.02: how many formal markers a conversational answer may carry (low 0, medium 1, high 2)."""
    coverage_optimum: float = Field(default=0.60, ge=0.0)
    """§7.01: below this coverage_ratio an INFO finding is reported (no effect on the result)."""
    determinism_optimum: float = Field(default=0.95, ge=0.0, le=1.0)
    """§7.02: below this determinism_score an INFO finding is reported."""
    drift_optimum: float = Field(default=0.10, ge=0.0, le=1.0)
    """§7.03: above this drift_score an INFO finding is reported."""
    embeddings: bool = True
    """Run the embedding checks (IR.3.01, IR.4.01's semantic part, IR.6.02); off: they are 'not evaluated'."""
    embedding_model: str | None = None
    """A sentence-transformers model folder to embed with (default: all-MiniLM-L6-v2, or ``$NORMA_MODEL_DIR``)."""
    strict_applicability: bool = False
    """Apply §4.02 literally (conversational: only IR.7.01 and IR.8.03) instead of each rule's own condition."""
    disabled_rules: tuple[str, ...] = ()
    """Rule ids not to run (reported as not evaluated)."""
    severity_overrides: dict[str, AuditSeverity] = Field(default_factory=dict)
    """Rule id -> severity to report its violations with (INFO moves them to ``info``)."""
    data_dir: str | None = None
    """A folder whose word lists replace the packaged ones of the same name (see ``norma/audit/data/``)."""
    llm_reruns: int = Field(default=2, ge=0, le=10)
    """How many re-runs IR.6.02 wants (the spec: 2 more runs); an LLM client fills what the request lacks."""
    reference_patterns: tuple[ReferencePattern, ...] = Field(default=(), max_length=MAX_REFERENCE_PATTERNS)
    """Extra ways of citing a norm (IR.0.01, IR.0.03, §7.01): RE2 expressions with a named group ``sec`` and,
    optionally, ``doc`` (the acronym), e.g. ``(?P<doc>POL-\\d+)\\s*§\\s*(?P<sec>\\d+(?:\\.\\d+)*)``."""
    limits: AuditLimits = Field(default_factory=AuditLimits)
    """Largest input, output, re-runs, documents and batch records accepted (checked before any work starts)."""
    norms: NormsConfig = Field(default_factory=NormsConfig)
    """Whose norms: the documents' acronyms in priority order (§6), file names standing for acronyms, rule-id
    prefixes and the organisation's technical keywords (default: the spec's DNS > DR > ICR > RED > IRA)."""
    lang: Lang | None = None
    """The language of titles and messages, ``en`` or ``es``; null (or ``auto``): the language of the request's
    input (a deterministic guess, docs/audit.md)."""

    @field_validator("lang", mode="before")
    @classmethod
    def _lang(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().lower() in ("", "auto"):
            return None
        return value.strip().lower() if isinstance(value, str) else value

    @property
    def reference_regexes(self) -> tuple[Pattern, ...]:
        """``reference_patterns`` compiled (RE2, cached per process)."""
        return tuple(compile_reference_pattern(p) for p in self.reference_patterns)

    def threshold_values(self) -> dict[str, Any]:
        """The §8.02 thresholds (and IR.3.01's), as the JSON config file spells them."""
        keys = [name for name in type(self).model_fields if name.startswith("ir_")]
        return {key: self.model_dump(mode="json")[key] for key in keys}

    @classmethod
    def parse(cls, data: AuditConfig | Mapping[str, Any] | None, *, source: str | None = None) -> AuditConfig:
        """Validate a mapping (unknown keys are errors); ``None`` gives the defaults."""
        if data is None:
            return cls()
        if isinstance(data, AuditConfig):
            return data
        if not isinstance(data, Mapping):
            raise ConfigError("an audit config must be a JSON object", source=source)
        try:
            return cls.model_validate(dict(data))
        except pydantic.ValidationError as exc:
            raise ConfigError(
                describe_validation_error(exc, root="request"),
                source=source,
                hint="run `norma docs audit`, section Configuration",
            ) from None


def load_config(path: str | Path) -> AuditConfig:
    """Read a thresholds file (JSON object with §8.02's keys and any other :class:`AuditConfig` field)."""
    file = Path(path)
    try:
        text = file.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read the audit config: {exc.strerror or exc}", source=str(file)) from None
    try:
        data = load_json(text, source=str(file))
    except ValueError as exc:
        raise ConfigError(str(exc), source=None) from None
    return AuditConfig.parse(data, source=str(file))
