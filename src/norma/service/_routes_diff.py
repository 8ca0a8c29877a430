"""``POST /v1/tenants/{tenant}/diff``: what a change of a tenant's stored rules does to recorded turns. The turns
of the request are checked against two stored versions of the tenant's rules (``norma.open(tenant=..., version=...)``,
:func:`norma.turns.diff_turns`) and the answer is :meth:`~norma.turns.RulebookDiff.to_dict`, as ``norma rules diff
TENANT@OLD TENANT@NEW --format json`` writes it (without the turns file's lines).

At most :data:`MAX_DIFF_TURNS` turns a request (413 beyond, naming the CLI for more); a version the tenant does not
have is a 404 naming ``old_version`` or ``new_version``. The tenant's key, or an admin key, as every tenant route.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from norma.checks import CheckResult
from norma.errors import LimitExceededError, NotFoundError
from norma.matching import SessionState
from norma.rules import Verdict
from norma.service._auth import Principal
from norma.service._bodies import StrictJsonRoute
from norma.service._routes_tenants import TenantId, tenant_caller
from norma.service._schemas import MAX_MESSAGE_CHARS, MAX_OUTPUT_CHARS, PROBLEM_RESPONSES
from norma.service._state import ServiceState, get_state
from norma.turns import ChangeKind, EditKind, RuleStatus

if TYPE_CHECKING:
    from norma.llm import Judge
    from norma.turns import Norma

__all__ = ["MAX_DIFF_TURNS", "RulesDiffRequest", "RulesDiffResponse", "router"]

MAX_DIFF_TURNS = 1_000
"""Most turns one request may carry: each is checked twice, within the request's time limit (``--timeout``)."""

router = APIRouter(
    prefix="/v1/tenants/{tenant}", tags=["tenants"], responses=PROBLEM_RESPONSES, route_class=StrictJsonRoute
)

_STRICT = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class DiffTurn(BaseModel):
    """A recorded turn: the user's message and the AI's output (a line of ``norma check --batch``'s turns)."""

    model_config = _STRICT
    message: str = Field(min_length=1, max_length=MAX_MESSAGE_CHARS)
    """The user's message (matched against both versions of the rules)."""
    output: str = Field(max_length=MAX_OUTPUT_CHARS)
    """The AI's answer, checked against the checks of the rules that apply under each version (may be empty)."""
    session: SessionState | None = None
    """Where the conversation was (active scenario and step, turn, fire counts); None: a fresh session."""
    id: str | int | None = None
    """The turn's id, reported with its change."""

    @field_validator("message")
    @classmethod
    def _not_blank(cls, message: str) -> str:
        if not message.strip():  # as /match, /check and the library refuse it
            raise ValueError("the message is empty (only whitespace): give the user's message")
        return message


class RulesDiffRequest(BaseModel):
    """Two versions of the tenant's rules and the turns to check against both."""

    model_config = _STRICT
    old_version: int = Field(ge=1)
    """The version before the change (``GET /v1/tenants/{tenant}`` shows the current one; a rule's history which
    version changed it)."""
    new_version: int | None = Field(default=None, ge=1)
    """The version after it; None: the tenant's current version."""
    turns: list[DiffTurn]
    """The recorded turns, at most 1,000 (413 beyond: the CLI, ``norma rules diff``, takes any number)."""


class DiffSide(BaseModel):
    model_config = _STRICT
    source: str | None
    """The rulebook file (None: a stored tenant, always here)."""
    tenant: str
    version: int | None
    """The tenant's rules version."""
    rules: int
    """How many rules that version has."""


class DiffCounts(BaseModel):
    model_config = _STRICT
    turns: int
    changed: int
    """Turns whose verdict, reward, governing or matched rules or failing checks differ."""
    verdict_changed: int
    newly_failing: int
    newly_passing: int
    newly_skipped: int
    same_verdict: int
    """Changed turns whose verdict is the same."""
    unchanged: int


class DiffEdit(BaseModel):
    model_config = _STRICT
    rule_id: str
    edit: EditKind
    fields: list[str]
    """The fields that changed (``condition_text``, ``examples``, ``checks``...; empty unless ``changed``)."""
    turns: int
    """Changed turns that involve the rule."""


class DiffRuleImpact(BaseModel):
    model_config = _STRICT
    rule_id: str
    edit: EditKind | None
    """Its edit; None: the same rule in both versions (another rule's edit moved it)."""
    governs_gained: int
    governs_lost: int
    matched_gained: int
    matched_lost: int
    failing_gained: int
    failing_lost: int


class DiffVerdicts(BaseModel):
    model_config = _STRICT
    old: Verdict
    new: Verdict


class DiffRewards(BaseModel):
    model_config = _STRICT
    old: float | None
    new: float | None


class DiffRuleIds(BaseModel):
    model_config = _STRICT
    added: list[str]
    removed: list[str]


class DiffMove(BaseModel):
    model_config = _STRICT
    rule_id: str
    old: RuleStatus
    new: RuleStatus
    old_confidence: float | None
    new_confidence: float | None


class DiffFailures(BaseModel):
    model_config = _STRICT
    added: list[CheckResult]
    """Checks that fail under the new version and did not under the old, with their evidence."""
    removed: list[CheckResult]


class DiffChange(BaseModel):
    model_config = _STRICT
    index: int
    """The turn's position in the request's ``turns``."""
    id: Any
    message: str
    change: ChangeKind
    verdict: DiffVerdicts
    reward: DiffRewards
    governs: DiffRuleIds
    matched: DiffRuleIds
    moves: list[DiffMove]
    failures: DiffFailures


class RulesDiffResponse(BaseModel):
    """What the change does (``RulebookDiff.to_dict()``, docs/diff.md): the summary, the counts, the rule edits,
    each rule's impact and the turns that changed, worst first."""

    model_config = _STRICT
    old: DiffSide
    new: DiffSide
    summary: str
    """One sentence: how many turns change verdict, newly fail, newly pass."""
    counts: DiffCounts
    edits: list[DiffEdit]
    rules: list[DiffRuleImpact]
    changes: list[DiffChange]
    reused: int
    """Rule evaluations of the new version taken from the old's (the rule identical in both)."""


State = Annotated[ServiceState, Depends(get_state)]
Caller = Annotated[Principal, Depends(tenant_caller)]


@router.post(
    "/diff",
    response_model=RulesDiffResponse,
    summary="What a change of the tenant's rules does: recorded turns checked against two stored versions",
)
async def rules_diff(tenant: TenantId, body: RulesDiffRequest, state: State, caller: Caller) -> JSONResponse:
    """Each turn is checked against ``old_version`` and ``new_version`` (the current one when null) as ``/check``
    checks a turn; the answer lists the turns that changed, worst first, with the evidence, grouped by rule and by
    rule edit. ``judge`` checks ask the service's LLM (skipped without one)."""
    if len(body.turns) > MAX_DIFF_TURNS:
        raise LimitExceededError(
            f"{len(body.turns):,} turns in one request, over the limit of {MAX_DIFF_TURNS:,}",
            location="turns",
            hint=f"send at most {MAX_DIFF_TURNS:,} turns a request, or compare any number with the CLI: norma rules "
            f"diff {tenant}@OLD {tenant}@NEW --turns FILE --db URL",
        )

    def work() -> JSONResponse:
        from norma.turns import diff_turns

        judge = state.judge()  # one judge for both: the judge checks of rules both versions have are asked once
        new_version = body.new_version if body.new_version is not None else state.store.version(tenant)
        old = _version(state, tenant, body.old_version, "old_version", judge)
        new = _version(state, tenant, new_version, "new_version", judge)
        turns = [turn.model_dump(exclude_none=True) for turn in body.turns]
        for record, turn in zip(turns, body.turns, strict=True):
            if turn.session is not None:
                record["session"] = turn.session
        return JSONResponse(diff_turns(old, new, turns).to_dict())

    return await state.run(work)


def _version(state: ServiceState, tenant: str, version: int, field: str, judge: Judge | None) -> Norma:
    """The tenant at ``version`` of its rules, read from the service's store; NotFoundError naming ``field``."""
    from norma.turns import open as open_rules

    try:
        return open_rules(tenant=tenant, version=version, store=state.store, judge=judge)
    except NotFoundError as exc:
        exc.location = field
        raise
