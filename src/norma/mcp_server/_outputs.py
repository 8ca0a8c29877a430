"""What each tool answers, composed of the library's own models (``MatchedRuleData``, ``TurnReport``'s parts,
``AuditReport``, ``RubricScore``, ``NameScore``: the same JSON the CLI's ``--format json`` prints and the service
answers), and the error a failed call carries. A field that is absent unless given has ``exclude_if``: the tool
layer serialises the model once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from norma.matching import MatchedRuleData
from norma.turns import TurnReport

__all__ = [
    "CheckTurnOutput",
    "DroppedRuleOutput",
    "MatchRulesOutput",
    "RuleListOutput",
    "RuleSummary",
    "ToolFailure",
]

_OUT = ConfigDict(extra="forbid", use_attribute_docstrings=True)


def _absent(value: object) -> bool:
    """An optional key left out of the payload (absent, not null) when it was not given."""
    return value is None


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
    matches: list[MatchedRuleData]
    dropped: list[DroppedRuleOutput] | None = Field(default=None, exclude_if=_absent)
    """With ``explain``: the rules left out and why."""
    gate: dict[str, Any] | None
    """The gate applied: kind, score, threshold, terms and a one-line description."""
    tenant: str | None = Field(default=None, exclude_if=_absent)
    """The tenant matched (absent for the served rulebook)."""


if TYPE_CHECKING:  # a class made at run time: to the type checker, a model
    CheckTurnOutput = BaseModel
else:
    CheckTurnOutput = TurnReport.json_model(
        "CheckTurnOutput",
        "One turn checked (``TurnReport.to_dict()``, what ``norma check --format json`` prints without its "
        "``name``), and the tenant named in the call.",
        module=__name__,
        tenant=(
            str | None,
            Field(
                default=None,
                exclude_if=_absent,
                description="The tenant named in the call (absent for the served rulebook).",
            ),
        ),
    )
"""The model of ``check_turn``'s output, generated from :class:`~norma.turns.TurnReport` (:meth:`TurnReport.json_model
<norma.turns.TurnReport.json_model>`: the report's fields and ``counts``, as ``TurnReport.to_dict()`` writes them),
then ``tenant``, absent unless given."""


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
