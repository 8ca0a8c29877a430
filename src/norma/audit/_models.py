"""The request the analyzer reads and the report it writes (spec §1 and §2, same field names).

Both are pydantic models with ``extra="forbid"``. The request adds one field to §1, ``reruns`` (the prompt's
re-executions for IR.6.02); the report adds fields after §2's (``rules``, ``info``, ``context_type_applied``,
the per-violation ``line`` and ``evidence``, the §7 metrics and ``lang``), so a consumer of §2 reads it unchanged.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Annotated, Any

import pydantic
from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, field_validator
from pydantic_core import core_schema

from norma.errors import InvalidInputError
from norma.rules import Severity, Verdict, describe_validation_error

__all__ = [
    "AuditReport",
    "AuditSeverity",
    "AuditVerdict",
    "AuditRequest",
    "ContextType",
    "Metrics",
    "RuleOutcome",
    "RuleStatus",
    "Severity",
    "Verdict",
    "Violation",
    "severity_label",
    "verdict_label",
]


class _Capitals:
    """Pydantic annotation of a shared lower-case enum (:class:`norma.rules.Severity`, :class:`norma.rules.Verdict`)
    the audit reads and writes in capitals (§8.01: ``"ERROR"``, ``"WARNING"``, ``"INFO"``; §2: ``"PASS"``,
    ``"FAIL"``, ``"SKIP"``): in Python it is the one shared member; its JSON Schema is the audit's own definition
    (``$defs/Severity``, ``$defs/Verdict``). A member is read too."""

    def __init__(self, members: type[enum.StrEnum], title: str, description: str) -> None:
        self._by_capitals = {_capitals(member): member for member in members}
        self._members = members
        self._title = title
        self._description = description

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        spelled = core_schema.literal_schema(
            list(self._by_capitals),
            ref=f"norma.audit.{self._title}",
            metadata={"pydantic_js_updates": {"title": self._title, "description": self._description}},
        )
        return core_schema.no_info_before_validator_function(
            lambda value: _capitals(value) if isinstance(value, self._members) else value,
            core_schema.no_info_after_validator_function(self._by_capitals.__getitem__, spelled),
            serialization=core_schema.plain_serializer_function_ser_schema(
                _capitals, return_schema=core_schema.literal_schema(list(self._by_capitals))
            ),
        )


def _capitals(member: enum.StrEnum) -> str:
    return member.value.upper()


def severity_label(severity: Severity) -> str:
    """How the audit writes ``severity`` (§8.01): ``"ERROR"``, ``"WARNING"``, ``"INFO"``."""
    return _capitals(severity)


def verdict_label(verdict: Verdict) -> str:
    """How the audit writes a verdict (§2): ``"PASS"``, ``"FAIL"``, ``"SKIP"``."""
    return _capitals(verdict)


AuditSeverity = Annotated[
    Severity,
    _Capitals(
        Severity, "Severity", "§8.01: ERROR blocks (FAIL), WARNING marks for review, INFO never affects the result."
    ),
]
"""A :class:`Severity` written in capitals in the audit's JSON (reports, configuration, snapshots)."""

AuditVerdict = Annotated[
    Verdict,
    _Capitals(
        Verdict,
        "Verdict",
        "The analyzer's result (§2): FAIL when an ERROR violation exists, SKIP for conversational turns.",
    ),
]
"""A :class:`Verdict` written in capitals in the audit's JSON (reports, and batch outputs ``norma merge`` reads)."""


class ContextType(enum.StrEnum):
    """§4: what kind of turn this is."""

    TECHNICAL = "technical"
    CONVERSATIONAL = "conversational"
    MIXED = "mixed"


class RuleStatus(enum.StrEnum):
    """What happened to one rule in one audit."""

    PASSED = "passed"
    """Evaluated, no violation."""
    FAILED = "failed"
    """Evaluated, at least one violation (of any severity)."""
    NOT_APPLICABLE = "not_applicable"
    """The context makes the rule irrelevant (§4.02); SARIF ``notApplicable``, a skipped JUnit case."""
    NOT_EVALUATED = "not_evaluated"
    """Applicable but something it needs is missing (documents, re-runs, embeddings); never a silent pass."""


class AuditRequest(BaseModel):
    """One turn to audit (§1): the user's prompt, the agent's answer and the norms in force."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    input: str
    """The user's prompt, complete (at most ``limits.max_input_chars``, default 1,000,000 characters)."""
    output: str
    """The AI's answer, complete; violation lines are 1-based lines of this text (at most
    ``limits.max_output_chars``)."""
    context_type: ContextType | None = None
    """technical, conversational or mixed as declared by the caller; omitted or null: detected from ``input``."""
    active_documents: tuple[str, ...] = ()
    """File names of the normative documents in force; empty: every document loaded."""
    document_versions: dict[str, str] = Field(default_factory=dict)
    """Expected version per document acronym (DNS, DR, ICR, RED, IRA) or file name; a mismatch is IR.0.02."""
    reruns: tuple[str, ...] = ()
    """Extension: outputs of the same prompt run again (IR.6.02 wants 2); an LLM client can produce them."""

    @field_validator("context_type", mode="before")
    @classmethod
    def _context_type(cls, value: Any) -> Any:
        if isinstance(value, str):
            lowered = value.strip().lower()
            if lowered in ("", "auto"):
                return None
            if lowered not in {c.value for c in ContextType}:
                raise ValueError(f"unknown context_type {value!r}; use technical, conversational or mixed")
            return lowered
        return value

    @field_validator("document_versions", mode="before")
    @classmethod
    def _versions(cls, value: Any) -> Any:
        if isinstance(value, Mapping):  # "DNS": 1.0 written as a number means the version "1.0"
            return {
                k: str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for k, v in value.items()
            }
        return value

    @classmethod
    def parse(cls, data: AuditRequest | Mapping[str, Any], *, source: str | None = None) -> AuditRequest:
        """Validate a mapping into a request; bad fields raise :class:`InvalidInputError` naming them."""
        if isinstance(data, AuditRequest):
            return data
        if not isinstance(data, Mapping):
            raise InvalidInputError(
                f"an audit request must be a JSON object, not {type(data).__name__}",
                source=source,
                hint="see `norma audit schema`",
            )
        try:
            return cls.model_validate(dict(data))
        except pydantic.ValidationError as exc:
            raise InvalidInputError(
                describe_validation_error(exc, root="request"), source=source, hint="see `norma audit schema`"
            ) from None


class Violation(BaseModel):
    """One broken rule at one place of the output (§2)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    rule: str
    """The rule id, ``IR.x.y``."""
    severity: AuditSeverity
    """ERROR or WARNING (INFO findings go to ``AuditReport.info``)."""
    description: str
    """What is wrong, in one sentence."""
    location: str
    """``"output line N"`` (or ``"output"`` / ``"input"`` / ``"documents"`` when no output line applies)."""
    line: int | None = None
    """The 1-based output line, when there is one (SARIF ``region.startLine``)."""
    evidence: str = ""
    """The text that triggered it (a term, a phrase, a citation), possibly shortened."""


class RuleOutcome(BaseModel):
    """What one rule did in one audit (JUnit: one test case per rule)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    rule: str
    title: str
    severity: AuditSeverity
    version: str
    status: RuleStatus
    reason: str = ""
    """Why a rule was not applicable or not evaluated."""


class Metrics(BaseModel):
    """§2's metrics plus §7's scores; a score that could not be computed is null, never a made-up number."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    rules_referenced: int = 0
    """Distinct normative references cited in the audited output (§7.01)."""
    technical_decisions: int = 0
    """Technical decisions found in the audited output (docs/design/060-audit.md)."""
    coverage_ratio: float | None = None
    """rules_referenced / technical_decisions; null without decisions (§7.01, optimum >= 0.60)."""
    determinism_score: float | None = None
    """Mean pairwise semantic similarity of the output and its re-runs; null without re-runs (§7.02)."""
    drift_score: float | None = None
    """novel_concepts / technical_concepts; null without concepts or without documents (§7.03)."""
    major_decisions: int = 0
    """Decisions that need a reference of their own (IR.0.01)."""
    references: int = 0
    """Normative references cited, counting repeats."""
    technical_concepts: int = 0
    """Distinct technical concepts (identifiers, acronyms) in the audited output."""
    novel_concepts: tuple[str, ...] = ()
    """The concepts counted as novel for the drift score."""


class AuditReport(BaseModel):
    """The analyzer's answer (§2) with the extensions described in the module docstring."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    result: AuditVerdict
    """PASS, FAIL or SKIP."""
    context_type_detected: ContextType
    """What §4.01's classifier says about the input."""
    violations: tuple[Violation, ...] = ()
    """ERROR and WARNING violations, by line then rule id."""
    metrics: Metrics = Field(default_factory=Metrics)
    notes: str = ""
    """Anything worth knowing that is not a violation (rules not evaluated, overridden violations)."""
    context_type_applied: ContextType = ContextType.TECHNICAL
    """The context the rules were applied for: the declared ``context_type`` when given, else the detected one."""
    info: tuple[Violation, ...] = ()
    """INFO findings (§8.01): metrics off their optimum, rules demoted to INFO by configuration."""
    rules: tuple[RuleOutcome, ...] = ()
    """Every registered rule and what it did, by id."""
    analyzer_version: str = ""
    """The rule set's version (§9.02)."""
    lang: str = "en"
    """The language of the titles, descriptions, reasons and notes: ``en`` or ``es`` (``AuditConfig.lang``, else
    the language of the request's input)."""

    @property
    def verdict(self) -> Verdict:
        """Alias of ``result``."""
        return self.result

    def errors(self) -> list[Violation]:
        """The ERROR violations."""
        return [v for v in self.violations if v.severity is Severity.ERROR]

    def warnings(self) -> list[Violation]:
        """The WARNING violations."""
        return [v for v in self.violations if v.severity is Severity.WARNING]
