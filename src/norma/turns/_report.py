"""What checking one turn gives: the matched rules, each checked rule's verdict with its check results, the turn's
verdict and its reward, and (optionally) the IR.x.y audit of the same output."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from norma.audit import AuditReport
from norma.checks import CheckResult
from norma.matching import EnforcementData, ExplanationData
from norma.rules import FailOn, Verdict

if TYPE_CHECKING:
    from norma.rubrics import Rubric

__all__ = ["CheckedRule", "MatchedRuleSummary", "TurnReport", "TurnVerdict", "turn_rubric"]


TurnVerdict = Verdict
"""A turn's verdict, the one :class:`norma.rules.Verdict` (this name is kept for code that imports it):
``fail``: an ``error`` check failed (or the audit, when asked, said FAIL); ``skip``: no check applied, none could be
decided, or an ``error`` check could not be decided (a ``judge`` check without an LLM); ``pass``: every ``error``
check that applied passed, and at least one check was decided."""


_PART = ConfigDict(
    frozen=True, extra="forbid", use_attribute_docstrings=True, json_schema_serialization_defaults_required=True
)
"""A part of a report: the fields with a default are still always written, so the schema of its JSON requires
them."""


class MatchedRuleSummary(BaseModel):
    """A rule the message matched, with the matcher's scores and explanation."""

    model_config = _PART

    rule_id: str
    """The rule."""
    final_score: float
    """The matcher's final score (results are sorted by it)."""
    enforced: bool = True
    """Whether the rule governs the turn (its requirements apply): its confidence that it does reaches 0.7."""
    enforcement: EnforcementData
    """Why: ``enforced``, ``reason`` (``governs`` or ``neighbour``), ``confidence`` and ``detail`` (the JSON of the
    match's :class:`~norma.matching.Enforcement`, as ``norma match`` gives it)."""
    explanation: ExplanationData
    """How the matcher's final score was made (the JSON of the match's :class:`~norma.matching.MatchExplanation`, as
    ``norma match`` gives it)."""


class CheckedRule(BaseModel):
    """A rule whose checks applied to the output: matched, or carrying a ``when: always`` check."""

    model_config = _PART

    rule_id: str
    """The rule."""
    description: str
    """What the rule asks of the output: its ``action_text`` (its ``condition_text`` when it has none)."""
    matched: bool
    """Whether the message matched the rule (False: only its ``when: always`` checks ran)."""
    enforced: bool = False
    """Whether the rule governs the turn (False: it matched only as a neighbour, and its requirements are
    ``skip``; or it did not match)."""
    verdict: Verdict
    """``fail`` if one of its checks failed, ``pass`` if one passed and none failed, else ``skip``."""
    score: float | None
    """The weighted share of its decided checks that passed (None: none was decided): its criterion's value."""
    weight: float
    """The sum of the weights of its checks that applied (a neighbour's requirements do not): its criterion's
    weight."""
    required: bool
    """Whether one of its checks that applied is an ``error`` check: its criterion is then required."""
    checks: tuple[CheckResult, ...]
    """Each check that applied, in the rule's order, and a neighbour's requirements (``skip``, not enforced)."""


_SHOWN_FAILURES = 5
"""How many failed checks a report's one-line summary names (then ``and N more``)."""


class TurnReport(BaseModel):
    """One turn checked: ``verdict``, ``reward``, the matched rules, the checked rules and the audit if asked."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    verdict: Verdict
    """``pass``, ``fail`` or ``skip`` (:class:`norma.rules.Verdict`)."""
    reward: float | None
    """The weighted mean of the checked rules' scores, computed by :mod:`norma.rubrics` on :attr:`rubric`
    (None when no check was decided)."""
    tenant_id: str
    """The tenant of the rules."""
    rules_version: int | None = None
    """The version of the tenant's rules that answered (a store's tenant), when known."""
    matches: tuple[MatchedRuleSummary, ...] = ()
    """The rules the message matched, best first."""
    rules: tuple[CheckedRule, ...] = ()
    """The rules whose checks applied: the matched ones first (in match order), then the ``when: always`` ones by
    id."""
    audit: AuditReport | None = None
    """The IR.x.y audit of the same output, when asked (``audit=True``); its FAIL makes the turn fail."""

    @property
    def checks(self) -> list[CheckResult]:
        """Every check result, rule by rule."""
        return [result for rule in self.rules for result in rule.checks]

    @property
    def failures(self) -> list[CheckResult]:
        """The checks that failed, rule by rule."""
        return [result for result in self.checks if result.status is Verdict.FAIL]

    @property
    def counts(self) -> dict[str, int]:
        """How many checks passed, failed and were skipped: ``{"pass": n, "fail": n, "skip": n}``, as in
        :meth:`to_dict` (a property: it was a method before issue #59)."""
        found = {status.value: 0 for status in Verdict}
        for result in self.checks:
            found[result.status.value] += 1
        return found

    def summary(self) -> str:
        """The turn in one line, as ``norma check`` ends its table: ``fail, reward 0.750 (1 passed, 1 failed, 0
        skipped), failed refund/policy`` (at most five failed checks named), then the audit's result when it
        ran."""
        counts = self.counts
        reward = "none" if self.reward is None else f"{self.reward:.3f}"
        text = (
            f"{self.verdict.value}, reward {reward} "
            f"({counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped)"
        )
        failed = [f"{r.rule_id}/{r.check_id}" for r in self.failures]
        if failed:
            more = len(failed) - _SHOWN_FAILURES
            text += f", failed {', '.join(failed[:_SHOWN_FAILURES])}" + (f" and {more} more" if more > 0 else "")
        if self.audit is not None:
            text += f", audit {self.audit.result.value}"
        return text

    def __repr__(self) -> str:
        return f"<TurnReport {self.summary()}>"

    def __str__(self) -> str:
        """:meth:`summary`, then one line per failed check (``failed refund/policy (error): <its message>``)."""
        lines = [self.summary()]
        lines += [f"  failed {r.rule_id}/{r.check_id} ({r.severity.value}): {r.message}" for r in self.failures]
        return "\n".join(lines)

    def failing(self, fail_on: FailOn | str = FailOn.ERROR) -> bool:
        """Whether the turn fails under ``fail_on`` (:meth:`FailOn.fails`): ``error`` (the verdict) or ``warning`` (a
        ``warning`` check failed too, or the audit has a WARNING)."""
        severities = [r.severity for r in self.failures]
        if self.audit is not None:
            severities += [v.severity for v in self.audit.violations]
        return FailOn.parse(fail_on).fails(self.verdict is Verdict.FAIL, severities)

    def keep_rubric(self, rubric: Rubric) -> None:
        """Keep the rubric the reward was computed on (:func:`turn_rubric` of :attr:`rules`, by the checker), so
        :attr:`rubric` does not build it again (a cached property: equality and serialisation ignore it)."""
        self.__dict__["rubric"] = rubric

    @functools.cached_property
    def rubric(self) -> Rubric:
        """The rubric the reward is computed on (:func:`turn_rubric` of :attr:`rules`)."""
        return turn_rubric(self.rules)

    @property
    def outcome(self) -> dict[str, float]:
        """``{rule id: score}`` of the checked rules whose score is known: the rubric outcome of the turn."""
        return {r.rule_id: r.score for r in self.rules if r.score is not None}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (the ``--format json`` and HTTP answer): the fields, plus ``counts`` before ``audit``
        (the model of this JSON: :meth:`json_model`; written here without building one, on every turn's path)."""
        data = self.model_dump(mode="json", exclude={"audit"})
        data["counts"] = dict(self.counts)
        data["audit"] = None if self.audit is None else self.audit.model_dump(mode="json")
        return data

    def json_fields(self) -> dict[str, Any]:
        """What fills a :meth:`json_model`: each field (the parts as this report holds them), and ``counts``."""
        return {field: getattr(self, field) for field in type(self).model_fields} | {"counts": self.counts}

    @classmethod
    def json_model(
        cls, name: str, doc: str, *, module: str | None = None, first: Sequence[str] = (), **extra: Any
    ) -> type[BaseModel]:
        """A model of :meth:`to_dict`'s JSON, generated from the report's own fields (never declared again): each
        field with its description, required (the JSON always has every key), ``counts`` before ``audit``; the
        fields named in ``first`` moved to the front, then each of ``extra`` (``name=(type, Field(...))``) last;
        ``module``: the module that names it (the caller's ``__name__``).

        The service's ``/check`` answer (``CheckResponse``) and the MCP tool ``check_turn``'s output
        (``CheckTurnOutput``) are such models; one is filled from a report with
        ``model(**report.json_fields(), ...)``."""
        fields: dict[str, Any] = {}
        for field, info in cls.model_fields.items():
            if field == "audit":
                fields["counts"] = (dict[str, int], Field(description=_COUNTS))
            fields[field] = (info.annotation, Field(description=info.description))
        ordered = {field: fields.pop(field) for field in first} | fields | extra
        return create_model(name, __doc__=doc, __config__=_JSON, __module__=module or cls.__module__, **ordered)


_COUNTS = 'How many checks passed, failed and were skipped: ``{"pass": n, "fail": n, "skip": n}``.'
"""The description of the one key a report's JSON adds to its fields (:attr:`TurnReport.counts`)."""

_JSON = ConfigDict(extra="forbid")
"""A report's JSON: no other key."""


def turn_rubric(rules: Sequence[CheckedRule]) -> Rubric:
    """The rubric of a turn's reward: one criterion per checked rule whose score is known (id: the rule id, weight:
    :attr:`CheckedRule.weight`, required: :attr:`CheckedRule.required`), ``weighted_mean``."""
    from norma.rubrics import Criterion, Rubric

    criteria = [
        Criterion(id=r.rule_id, description=r.description or r.rule_id, weight=r.weight, required=r.required)
        for r in rules
        if r.score is not None
    ]
    return Rubric(version="turn", criteria=criteria, aggregation="weighted_mean")
