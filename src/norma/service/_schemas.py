"""Request and response bodies of the routes (documented in the OpenAPI schema); library models where they exist."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from norma.matching import MatchedRuleData, SessionState
from norma.names import DEFAULT_RULE_PERCENTAGE
from norma.rubrics import RubricIssue
from norma.rules import MAX_RULEBOOK_RULES, Rule
from norma.store import ApiKey, RuleVersion
from norma.turns import TurnReport

__all__ = [
    "PROBLEM_RESPONSES",
    "ApiKeyCreated",
    "CalibrateRequest",
    "CheckRequest",
    "CheckResponse",
    "GateResponse",
    "Health",
    "KeyList",
    "KeyRequest",
    "LabelledMessage",
    "MatchRequest",
    "MatchResponse",
    "NamesGenerateRequest",
    "NamesGenerated",
    "NamesQueryRequest",
    "NamesQueryResponse",
    "NamesScoreRequest",
    "Problem",
    "ProblemItem",
    "RubricEvaluateRequest",
    "RubricValidateRequest",
    "RubricValidation",
    "RuleHistory",
    "RuleWritten",
    "RulebookBody",
    "RulesWritten",
    "TenantInfo",
    "TenantList",
    "TenantRules",
]

MAX_MESSAGE_CHARS = 20_000
"""Longest user message a match request may carry."""

_STRICT = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class Health(BaseModel):
    model_config = _STRICT
    status: Literal["ok", "ready", "not ready"]
    """``ok`` (liveness), ``ready`` / ``not ready`` (readiness)."""
    version: str
    """norma's version."""
    checks: dict[str, str] = Field(default_factory=dict)
    """Each dependency checked by the readiness probe and what it said."""


class MatchRequest(BaseModel):
    """One user message to match against the tenant's rules."""

    model_config = _STRICT
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    """The user's message (not empty: an empty message is a 422, as `norma match ""` is a usage error)."""
    session: SessionState | None = None
    """Where the conversation is (active scenario and step, turn, fire counts); None: a fresh session."""
    explain: bool = False
    """Also explain why filtered rules were dropped."""
    tags: list[str] | None = Field(default=None, max_length=100)
    """Only rules carrying at least one of these tags."""


class MatchResponse(BaseModel):
    model_config = _STRICT
    tenant_id: str
    rules_version: int
    """The tenant's rule-set version the answer reflects (the store's, as ``GET /v1/tenants/{tenant}`` shows it):
    lower than the current one for at most 0.5 s after a write, or while the store is unreachable (then the answer
    carries ``Norma-Stale-Since``)."""
    matches: list[MatchedRuleData]
    """Best first: the rule, its scores, whether it governs the turn (``enforcement``) and the explanation."""
    dropped: list[dict[str, Any]] = Field(default_factory=list)
    """With ``explain``: the rules left out and why (scope, disabled, tags, fire limits, threshold...)."""
    gate: dict[str, Any] | None = None
    """The gate applied: ``kind`` (confidence, calibrated, fixed, none), ``score``, ``threshold``, ``terms`` and a
    one-line ``description``."""


MAX_OUTPUT_CHARS = 200_000
"""Longest AI output ``POST /v1/tenants/{tenant}/check`` takes."""


class CheckRequest(BaseModel):
    """One turn to check: the user's message, the AI's output, and where the conversation is."""

    model_config = _STRICT
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    """The user's message (matched against the tenant's rules)."""
    output: str = Field(max_length=MAX_OUTPUT_CHARS)
    """The AI's answer, checked against the checks of the rules that apply (may be empty)."""
    session: SessionState | None = None
    """Where the conversation is (active scenario and step, turn, fire counts); None: a fresh session."""
    audit: bool = False
    """Also run the IR.x.y audit on the output (its FAIL fails the turn)."""


CheckResponse = TurnReport.json_model(
    "CheckResponse",
    "The turn checked (`norma docs check`): ``TurnReport.to_dict()``, with the tenant's id first.",
    module=__name__,
    first=("tenant_id",),
)
"""The ``/check`` answer, generated from :class:`~norma.turns.TurnReport` (:meth:`TurnReport.json_model
<norma.turns.TurnReport.json_model>`: the report's fields and ``counts``, as ``TurnReport.to_dict()`` writes them),
``tenant_id`` first as the route writes it."""


class LabelledMessage(BaseModel):
    """A message and the ids of the rules that should match it (``[]``: none)."""

    model_config = _STRICT
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    expected: list[str] = Field(max_length=1000)
    scenario: str | None = Field(default=None, max_length=200)
    """The active scenario the message is matched in (None: none)."""
    step: str | None = Field(default=None, max_length=200)
    """The active step (None: none)."""


class CalibrateRequest(BaseModel):
    """Labelled messages to fit the tenant's confidence (and gate) to, and the target (none: ``balanced``, the default
    gate on the refitted confidence, which needs messages that expect no rule; a target: a similarity threshold)."""

    model_config = _STRICT
    messages: list[LabelledMessage] = Field(min_length=1, max_length=10_000)
    target_precision: float | None = Field(default=None, gt=0, le=1)
    target_recall: float | None = Field(default=None, gt=0, le=1)
    best_f1: bool = False
    """The single threshold with the best F1 of every returned rule (instead of ``balanced``)."""
    dry_run: bool = False
    """Compute and return the gate without storing it."""


class GateResponse(BaseModel):
    model_config = _STRICT
    tenant_id: str
    version: int
    """The tenant's version (after storing the gate)."""
    calibrated: bool
    """Whether a calibrated gate is stored for the tenant."""
    gate: dict[str, Any] | None
    """The gate (see the match response's ``gate``); None after removing it."""


class RulebookBody(BaseModel):
    """A rulebook (docs/store.md): the rules to insert or replace, written in one transaction."""

    model_config = _STRICT
    format: str | None = None
    """``norma.rulebook/v1`` (optional)."""
    tenant: str | None = None
    """Must be the path's tenant when given."""
    description: str | None = None
    rules: list[dict[str, Any]] = Field(max_length=MAX_RULEBOOK_RULES)
    """Each with the fields of a rule (id, condition_text, ...)."""


class RulesWritten(BaseModel):
    model_config = _STRICT
    tenant_id: str
    version: int
    """The tenant's rule-set version after the write."""
    count: int
    """Rules written or deleted."""


class KeyRequest(BaseModel):
    model_config = _STRICT
    name: str = Field(default="", max_length=200)
    """A label for people ("ci", "support-bot")."""


class ApiKeyCreated(BaseModel):
    model_config = _STRICT
    key_id: str
    tenant_id: str | None
    name: str
    secret: str
    """The key itself: shown once, only its hash is kept."""


class RubricValidateRequest(BaseModel):
    model_config = _STRICT
    rubric: dict[str, Any]
    """The rubric as a JSON object (the synth-ai format)."""
    strict: bool = False
    """Check the strict verifier format (weights in (0, 1] summing to 1)."""


class RubricEvaluateRequest(BaseModel):
    model_config = _STRICT
    rubric: dict[str, Any]
    events: list[Any] | None = None
    """Judgement events ``{criterion_id, reward}``; give this or ``outcome``."""
    outcome: dict[str, Any] | None = None
    """``{criterion_id: value}``; give this or ``events``."""
    enforce_required: bool = False
    pass_threshold: float | None = None
    aggregator: str | None = None


class NamesScoreRequest(BaseModel):
    model_config = _STRICT
    name: str = Field(max_length=200)
    variations: list[str] = Field(max_length=500)
    labels: dict[str, Any]
    """What the query builder returns: variation_count, phonetic_similarity, orthographic_similarity, rule_based."""
    compat: Literal["miid", "stable"] = "miid"
    hash_seed: int = Field(default=0, ge=0, le=4294967295)
    """The validator's PYTHONHASHSEED to score under (compat miid); the same score in every process."""
    metrics: bool = False


class NamesQueryRequest(BaseModel):
    model_config = _STRICT
    name: str | None = Field(default=None, max_length=200)
    seed: int | None = None


class NamesGenerateRequest(BaseModel):
    model_config = _STRICT
    name: str = Field(max_length=200)
    count: int = Field(ge=1, le=100)
    phonetic_similarity: dict[str, float] | None = None
    orthographic_similarity: dict[str, float] | None = None
    rules: list[str] = Field(default_factory=list, max_length=50)
    rule_percentage: float = Field(default=DEFAULT_RULE_PERCENTAGE, ge=0, le=100)
    seed: int | None = None
    compat: Literal["miid", "stable"] = "miid"
    hash_seed: int = Field(default=0, ge=0, le=4294967295)
    """The validator's PYTHONHASHSEED to aim at (compat miid)."""


class TenantInfo(BaseModel):
    model_config = _STRICT
    tenant_id: str
    version: int
    """The tenant's rule-set version."""
    rules: int
    """How many rules the tenant has."""


class TenantRules(BaseModel):
    model_config = _STRICT
    tenant_id: str
    version: int
    """The tenant's rule-set version the list reflects."""
    rules: list[Rule]
    """The rules, sorted by id."""


class RuleWritten(BaseModel):
    model_config = _STRICT
    tenant_id: str
    version: int
    """The tenant's rule-set version after the write."""
    rule: Rule
    """The rule as stored."""


class RuleHistory(BaseModel):
    model_config = _STRICT
    tenant_id: str
    rule_id: str
    history: list[RuleVersion]
    """Every committed version of the rule, oldest first (``rule`` None: a deletion)."""


class TenantList(BaseModel):
    model_config = _STRICT
    tenants: list[str]
    """Every tenant with committed rules, sorted."""


class KeyList(BaseModel):
    model_config = _STRICT
    tenant_id: str
    keys: list[ApiKey]
    """The tenant's keys (never their secrets)."""


class RubricValidation(BaseModel):
    """The verdict of ``norma rubric validate`` (:class:`norma.rubrics.RubricValidity` without the file)."""

    model_config = _STRICT
    valid: bool
    strict: bool
    """Whether the strict format was checked."""
    issues: list[RubricIssue]
    """Every problem, with its field path; empty when valid."""
    criteria: int
    """Number of criteria of a valid rubric (0 when invalid)."""


class NamesQueryResponse(BaseModel):
    """A validator's query (:class:`norma.names.VariationQuery`) and its text."""

    model_config = _STRICT
    labels: dict[str, Any]
    """``variation_count``, ``phonetic_similarity``, ``orthographic_similarity`` and ``rule_based``."""
    template: str
    """The query text with a literal ``{name}`` placeholder."""
    name: str | None
    phrased_by: str | None
    """The LLM model that phrased the template; None for the fixed template."""
    text: str
    """The template with the name in place of ``{name}``."""


class NamesGenerated(BaseModel):
    model_config = _STRICT
    name: str
    variations: list[str]


class ProblemItem(BaseModel):
    model_config = _STRICT
    field: str
    """The field at fault: ``rules[3].priority``, ``body.session.turn``."""
    message: str


class Problem(BaseModel):
    """An error (RFC 9457, ``application/problem+json``)."""

    model_config = _STRICT
    type: str
    title: str
    status: int
    detail: str
    field: str | None = None
    """The (first) field at fault, when one is."""
    errors: list[ProblemItem] = Field(default_factory=list)
    """Every problem found, when there are several."""
    hint: str | None = None
    """What to do about it."""


_PROBLEMS = {
    400: "Invalid input (the library refused a value; `field` names it)",
    401: "No API key, or an unknown or revoked one",
    404: "Not found (also: another tenant's routes)",
    413: "Request body over the size limit",
    422: "The body does not fit the route's schema",
    429: "Rate limit exceeded for this key (see Retry-After)",
    503: "Store or backend unavailable, or the request timed out",
}

PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": Problem, "description": description} for status, description in _PROBLEMS.items()
}
"""The error answers every authenticated route can give (documented in the OpenAPI schema)."""
