"""What each tool answers: the models its output schema is made from (the payloads are the library's own
``to_dict()`` / ``model_dump()``, the same JSON the CLI's ``--format json`` prints), and the error a failed call
carries."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from norma.audit import AuditReport
from norma.matching import EnforcementReason
from norma.rules import Verdict
from norma.turns import CheckedRule, MatchedRuleSummary

__all__ = [
    "CheckTurnOutput",
    "DroppedRuleOutput",
    "EnforcementOutput",
    "MatchRulesOutput",
    "MatchedRuleOutput",
    "NameScoreOutput",
    "RubricCriterionOutput",
    "RubricScoreOutput",
    "RuleListOutput",
    "RuleSummary",
    "ToolFailure",
]

_OUT = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class EnforcementOutput(BaseModel):
    """Whether a match governs the turn, that is whether ``check_turn`` applies its requirements, and why
    (``Enforcement.to_dict()``)."""

    model_config = _OUT
    enforced: bool
    """True for the top match and a match as close to the message as it; False for a neighbour: its requirement
    checks are reported ``skip``, its prohibitions still apply."""
    reason: EnforcementReason
    """top: the most relevant match; as_close_as_top: its similarity is within 0.01 of the top match's (or above
    it); neighbour: every other match, relevant but not enforced."""
    detail: str
    """The reason in words, with the figures."""


class MatchedRuleOutput(BaseModel):
    """One rule that applies to the message (``MatchedRule.to_dict()``)."""

    model_config = _OUT
    rule_id: str
    similarity_score: float
    """Cosine similarity of the message to the rule's text or its nearest example."""
    bm25_score: float
    """Normalised BM25 in [0, 1]."""
    final_score: float
    """The score the matches are sorted by (hybrid score, priority and scope; see docs/matching.md)."""
    enforcement: EnforcementOutput
    """Whether the rule governs the turn, and why."""
    explanation: dict[str, Any]
    """How the final score was made: similarity, matched_text, matched_example, bm25_raw, hybrid,
    priority_normalized, scope_weight, final, threshold, weights..."""
    rule: dict[str, Any]
    """The rule itself (id, condition_text, action_text, scope, priority, tags, examples...)."""


class DroppedRuleOutput(BaseModel):
    """A candidate rule left out, and why (``DroppedRule.to_dict()``; with ``explain``)."""

    model_config = _OUT
    rule_id: str
    reason: str
    """scope, disabled, tags, max_fires_per_session, cooldown, threshold or max_matched."""
    detail: str
    similarity: float
    final_score: float | None = None


class MatchRulesOutput(BaseModel):
    """The rules that apply to a message, best first (what ``norma match --format json`` prints)."""

    model_config = _OUT
    message: str
    rules: int
    """How many rules the rulebook or the tenant has."""
    tenant: str | None = None
    """The tenant matched (absent for the served rulebook)."""
    matches: list[MatchedRuleOutput]
    dropped: list[DroppedRuleOutput] | None = None
    """With ``explain``: the rules left out and why."""
    gate: dict[str, Any] | None
    """The gate applied: kind, score, threshold, terms and a one-line description."""


class CheckTurnOutput(BaseModel):
    """One turn checked (``TurnReport.to_dict()``, what ``norma check --format json`` prints without its ``name``)."""

    model_config = _OUT
    verdict: Verdict
    """fail: an error check failed (or the audit, when asked); skip: nothing decided, or an error check could not
    be (a judge check without an LLM); pass: otherwise."""
    reward: float | None
    """The weighted mean of the checked rules' scores, in [0, 1] (None: no check was decided)."""
    tenant_id: str
    """The tenant of the rules (the rulebook's own tenant for the served rulebook)."""
    rules_version: int | None
    """The version of a stored tenant's rules."""
    matches: list[MatchedRuleSummary]
    """The rules the message matched, best first."""
    rules: list[CheckedRule]
    """The rules whose checks applied (matched, or with a check that applies always), each with its verdict, score
    and check results (status, severity, message, evidence with line and column)."""
    counts: dict[str, int]
    """How many checks passed, failed and were skipped (pass, fail, skip)."""
    audit: AuditReport | None
    """The IR.x.y audit of the output, with ``audit``."""
    tenant: str | None = None
    """The tenant named in the call (absent for the served rulebook)."""


class RubricCriterionOutput(BaseModel):
    model_config = _OUT
    reward: float | None
    weight: float
    required: bool


class RubricScoreOutput(BaseModel):
    """The reward of events or an outcome against a rubric (what ``norma rubric eval --format json`` prints)."""

    model_config = _OUT
    aggregation: str
    """weighted_sum, weighted_mean, custom..."""
    reward: float | None
    per_criterion: dict[str, RubricCriterionOutput]
    aggregator: str | None = None
    """The aggregator of a ``custom`` rubric."""
    failed_required: list[str] | None = None
    """With ``enforce_required``: the required criteria below the threshold."""
    passed: bool | None = None
    """The verdict, when one was asked for (``pass_threshold``, ``enforce_required``)."""


class NameScoreOutput(BaseModel):
    """The MIID validator's score of one set of name variations (a result row of ``norma names score``)."""

    model_config = _OUT
    compat: str
    hash_seed: int
    name: str
    final: float
    """The validator's final score."""
    base: float
    """The score before the rule-compliance part."""
    rule_compliance: float | None
    variations: int
    rule_compliant: int
    """How many variations follow one of the selected rules."""
    metrics: dict[str, Any] | None = None
    """With ``metrics``: every metric of the scorer."""


class RuleSummary(BaseModel):
    """A rule, without its examples and checks."""

    model_config = _OUT
    id: str
    condition_text: str
    """When the rule applies (a rule's title)."""
    action_text: str
    """What the assistant must do then."""
    priority: int
    scope: str
    """global, scenario or step."""
    scenario_id: str | None
    step_id: str | None
    enabled: bool
    tags: list[str]


class RuleListOutput(BaseModel):
    """The rules of the served rulebook or of a tenant, sorted by id."""

    model_config = _OUT
    tenant: str | None
    """The tenant listed (None: the served rulebook)."""
    count: int
    rules: list[RuleSummary]


class ToolFailure(BaseModel):
    """What a failed call carries as structured content (its text says the same in lines: what, where, hint)."""

    model_config = _OUT
    error: str
    """The error's class: NotFoundError, InvalidInputError, RubricError... (InternalError: a bug in norma)."""
    message: str
    """What went wrong."""
    source: str | None = None
    """The input it came from: a file, a URL, an argument."""
    location: str | None = None
    """Where in it: a line, a field path."""
    hint: str | None = None
    """What to do about it."""
