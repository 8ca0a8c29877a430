"""A turn checked end to end: the rules that apply to the message, the output checked against each, a reward."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from norma._trace import span
from norma.checks import CheckedOutput, CheckResult, CheckStatus
from norma.errors import InvalidInputError
from norma.matching import MatchResult, RuleMatcher, SessionState
from norma.rules import Rule, Severity
from norma.turns._report import CheckedRule, MatchedRuleSummary, TurnReport, TurnVerdict, turn_rubric

if TYPE_CHECKING:
    from norma.audit import AuditConfig, AuditReport, DocumentSet
    from norma.embeddings import Embedder
    from norma.llm import Judge
    from norma.rubrics import Rubric

__all__ = ["TurnChecker", "rule_verdict", "turn_reward"]


def rule_verdict(rule: Rule, results: Sequence[CheckResult], *, matched: bool, enforced: bool = True) -> CheckedRule:
    """One rule's verdict from its check results: ``fail`` if one failed, ``pass`` if one passed, else ``skip``;
    its score is the weighted share of its decided checks that passed; a neighbour's requirements (``skip``, not
    enforced) count in neither its weight nor ``required``."""
    applied = [r for r in results if r.enforced]
    decided = [r for r in applied if r.status is not CheckStatus.SKIP]
    decided_weight = sum(r.weight for r in decided)
    score = sum(r.weight for r in decided if r.status is CheckStatus.PASS) / decided_weight if decided else None
    if any(r.status is CheckStatus.FAIL for r in results):
        verdict = CheckStatus.FAIL
    else:
        verdict = CheckStatus.PASS if decided else CheckStatus.SKIP
    return CheckedRule(
        rule_id=rule.id,
        description=rule.action_text or rule.condition_text,
        matched=matched,
        enforced=matched and enforced,
        verdict=verdict,
        score=score,
        weight=sum(r.weight for r in applied),
        required=any(r.severity is Severity.ERROR for r in applied),
        checks=tuple(results),
    )


def turn_reward(rules: Sequence[CheckedRule]) -> float | None:
    """The reward of checked rules: their scores combined by :mod:`norma.rubrics` on :func:`turn_rubric` (one
    ``weighted_mean`` criterion per rule with a score; None when no rule has one)."""
    return _reward(rules, turn_rubric(rules))


def _reward(rules: Sequence[CheckedRule], rubric: Rubric) -> float | None:
    from norma.rubrics import evaluate_values

    if not rubric.criteria:
        return None
    values = {r.rule_id: r.score for r in rules if r.score is not None}
    reward = evaluate_values(rubric.criteria, values, rubric.aggregation)["reward"]
    return None if reward is None else float(reward)


Turn = tuple[str, str] | tuple[str, str, SessionState | Mapping[str, Any] | None] | list[Any] | Mapping[str, Any]
"""A turn :meth:`Norma.check_many <norma.turns.Norma.check_many>` takes: a ``(message, output)`` pair, a
``(message, output, session)`` triple, or a turn record as ``norma check --batch`` reads them (``{"message",
"output", "session"?, "id"?}``)."""

CheckedTurn = tuple[str, str, SessionState | None]
"""A turn checked before anything is matched (:func:`_turn`): the message, the output, the session."""

_RECORD_FIELDS = ("id", "message", "output", "session")
"""The fields of a turn record (a JSON Lines line of ``norma check --batch``)."""

_TURN_SHAPES = "a (message, output) pair, a (message, output, session) triple or a turn record"
_TURN_EXAMPLE = 'write ("hi", "hello"), ("hi", "hello", {"turn": 2}) or {"message": "hi", "output": "hello"}'


def _a(name: str) -> str:
    return f"an {name}" if name[:1] in "aeiou" else f"a {name}"


def checked_message(message: object, location: str, hint: str) -> str:
    """``message`` when it is text with something in it; else the :class:`InvalidInputError` of ``norma match``,
    ``norma check``, the MCP tools and the service (an empty or whitespace-only message has nothing to match)."""
    if not isinstance(message, str):
        raise InvalidInputError(
            f"the message must be text, not {type(message).__name__}",
            location=location,
            hint="pass the user's message as a string",
        )
    if not message.strip():
        raise InvalidInputError("the message is empty", location=location, hint=hint)
    return message


def _turn(message: object, output: object, session: object, where: str) -> CheckedTurn:
    """One turn checked before anything is matched; the errors' ``location`` is the field, after ``where.``
    (``turns[2].message``) when ``where`` is given."""

    def at(name: str) -> str:
        return f"{where}.{name}" if where else name

    text = checked_message(message, at("message"), "give the user's message")
    if not isinstance(output, str):
        raise InvalidInputError(
            f"the output to check must be text, not {type(output).__name__}",
            location=at("output"),
            hint="pass the AI's answer as a string",
        )
    if session is None or isinstance(session, SessionState):
        return text, output, session
    if not isinstance(session, Mapping):
        raise InvalidInputError(
            f"a session must be a mapping of fields, got {type(session).__name__}",
            location=at("session"),
            hint="run `norma docs matching` for the session fields",
        )
    try:
        return text, output, SessionState.from_mapping(session)
    except InvalidInputError as exc:  # a session that does not fit: say where it is
        exc.location = at("session")
        raise


def refuse_unknown_fields(record: Mapping[str, Any], where: str) -> None:
    """InvalidInputError at ``where`` for a turn record with a field a turn record does not have (a typo)."""
    unknown = [key for key in record if key not in _RECORD_FIELDS]
    if unknown:
        raise InvalidInputError(
            f"unknown field {unknown[0]!r} in a turn record",
            location=where,
            hint="a turn record has id, message, output, session",
        )


def _turn_of(item: object, index: int) -> CheckedTurn:
    """Item ``index`` of :meth:`Norma.check_many <norma.turns.Norma.check_many>`'s turns (see :data:`Turn`), checked."""
    where = f"turns[{index}]"
    if isinstance(item, Mapping):
        refuse_unknown_fields(item, where)
        if "message" not in item or "output" not in item:
            missing = "message" if "message" not in item else "output"
            raise InvalidInputError(
                f'a turn record needs "message" and "output" (no "{missing}" here)',
                location=where,
                hint='write {"message": "...", "output": "...", "session": {}}',
            )
        return _turn(item["message"], item["output"], item.get("session"), where)
    if isinstance(item, tuple | list) and len(item) in (2, 3):
        return _turn(item[0], item[1], item[2] if len(item) == 3 else None, where)
    if isinstance(item, tuple | list):
        shape = f"{_a(type(item).__name__)} of {len(item)} item{'' if len(item) == 1 else 's'}"
    else:
        shape = _a(type(item).__name__)
    raise InvalidInputError(f"a turn is {_TURN_SHAPES}, not {shape}", location=where, hint=_TURN_EXAMPLE)


def _turns(turns: object) -> list[CheckedTurn]:
    """:meth:`Norma.check_many <norma.turns.Norma.check_many>`'s turns, every one checked before any is matched."""
    if isinstance(turns, str | bytes | Mapping) or not isinstance(turns, Iterable):
        raise InvalidInputError(
            f"check_many() takes a list of turns, not {_a(type(turns).__name__)}",
            location="turns",
            hint=f"each turn is {_TURN_SHAPES}; check() checks one",
        )
    return [_turn_of(item, index) for index, item in enumerate(turns)]


class TurnChecker:
    """What a :class:`~norma.turns.Norma` checks turns with, for one version of the rules: the matcher, the judge,
    the audit's documents and configuration. Internal: callers check a turn through :meth:`Norma.check
    <norma.turns.Norma.check>`, :meth:`~norma.turns.Norma.check_many` and :meth:`~norma.turns.Norma.review`, which
    check the turns they are given (:func:`_turn`, :func:`_turns`) and hand them here. Thread-safe;
    the rules with ``when: always`` checks are found once per rules version (by the matcher's compiled rules,
    :attr:`~norma.matching.RuleMatcher.always_rules`).

    Args:
        matcher: the compiled rules.
        judge: evaluates ``judge`` checks (:class:`norma.llm.Judge`); without one they are ``skip``.
        audit: also run the IR.x.y audit on each output (:func:`norma.audit.analyze`); its FAIL fails the turn.
        documents: the audit's normative documents (a folder or a :class:`~norma.audit.DocumentSet`).
        audit_config: the audit's configuration.
        rules_version: the version of the rules, reported in each :class:`TurnReport` (a store's tenant).
    """

    def __init__(
        self,
        matcher: RuleMatcher,
        *,
        judge: Judge | None = None,
        audit: bool = False,
        documents: DocumentSet | str | os.PathLike[str] | None = None,
        audit_config: AuditConfig | Mapping[str, Any] | None = None,
        rules_version: int | None = None,
    ) -> None:
        self.matcher = matcher
        self.judge = judge
        self.audit = audit
        self.documents = documents
        self.audit_config = audit_config
        self.rules_version = rules_version

    def reports(self, turns: list[CheckedTurn], audit: bool | None, embedder: Embedder | None) -> list[TurnReport]:
        """The reports of turns already checked (:func:`_turn`), their messages embedded in one call
        (``embedder``: the one to make it, the matcher's when None); ``audit`` overrides the checker's."""
        sessions = [session for _, _, session in turns]
        # one parent span: norma.match, each rule's norma.checks and the reward's norma.rubric are its children
        with span("norma.turn", {"norma.tenant": self.matcher.tenant_id, "norma.turns.count": len(turns)}) as traced:
            results = self.matcher.match_many([m for m, _, _ in turns], sessions, embedder=embedder)
            run_audit = self.audit if audit is None else audit
            reports = [
                self._report(message, output, result, run_audit)
                for (message, output, _), result in zip(turns, results, strict=True)
            ]
            if traced.recording and len(reports) == 1:
                traced.set({"norma.turn.verdict": reports[0].verdict.value, "norma.turn.reward": reports[0].reward})
        return reports

    def _output(self, message: str, output: str) -> CheckedOutput:
        """``output`` as each of the turn's rules is evaluated on it (the user's message goes to the judge only)."""
        if self.judge is None:
            return CheckedOutput(output)
        return CheckedOutput(output, message=message, judge=self.judge)

    def report(self, message: str, output: str, result: MatchResult, *, audit: bool | None = None) -> TurnReport:
        """The report of a turn whose message this checker's matcher already matched (``result``): for callers
        that match themselves, such as batch jobs that embed many messages at once."""
        if not isinstance(output, str):
            raise InvalidInputError(
                f"the output to check must be text, not {type(output).__name__}",
                location="output",
                hint="pass the AI's answer as a string",
            )
        return self._report(message, output, result, self.audit if audit is None else audit)

    def _report(self, message: str, output: str, result: MatchResult, run_audit: bool) -> TurnReport:
        """:meth:`report` of an output already known to be text."""
        checked: list[CheckedRule] = []
        seen: set[str] = set()
        evaluated = self._output(message, output)  # what the checks share, computed once for every rule
        for match in result:
            rule = match.rule
            seen.add(rule.id)
            if rule.checks:
                neighbour = None if match.enforced else match.enforcement.detail
                results = evaluated.evaluate(rule, matched=True, neighbour=neighbour)
                checked.append(rule_verdict(rule, results, matched=True, enforced=match.enforced))
        for rule in self.matcher.always_rules:
            if rule.id not in seen:
                results = evaluated.evaluate(rule, matched=False)
                if results:
                    checked.append(rule_verdict(rule, results, matched=False))
        audit_report = self.audit_of(message, output) if run_audit else None
        rubric = turn_rubric(checked)  # the reward's criteria, built once: the report keeps them
        report = TurnReport(
            verdict=_verdict(checked, audit_report),
            reward=_reward(checked, rubric),
            tenant_id=self.matcher.tenant_id,
            rules_version=self.rules_version,
            matches=tuple(
                MatchedRuleSummary(
                    rule_id=m.rule.id,
                    final_score=m.final_score,
                    enforced=m.enforced,
                    enforcement=m.enforcement.to_dict(),
                    explanation=m.explanation.to_dict(),
                )
                for m in result
            ),
            rules=tuple(checked),
            audit=audit_report,
        )
        report.keep_rubric(rubric)
        return report

    def audit_of(self, message: str, output: str) -> AuditReport:
        """The IR.x.y audit of ``output``, the answer to ``message``, with this checker's documents and
        configuration (:func:`norma.audit.analyze`)."""
        from norma.audit import analyze, load_documents

        if isinstance(self.documents, str | os.PathLike):  # a folder: read at the first audit, then kept
            self.documents = load_documents(Path(self.documents))
        return analyze(
            {"input": message, "output": output},
            self.documents,
            self.audit_config,
            embedder=self.matcher.embedder,
        )


def _verdict(checked: Sequence[CheckedRule], audit_report: AuditReport | None) -> TurnVerdict:
    results = [r for rule in checked for r in rule.checks]
    if any(r.status is CheckStatus.FAIL and r.severity is Severity.ERROR for r in results):
        return TurnVerdict.FAIL
    if audit_report is not None and audit_report.result is TurnVerdict.FAIL:
        return TurnVerdict.FAIL
    if any(r.status is CheckStatus.SKIP and r.severity is Severity.ERROR and r.enforced for r in results):
        return TurnVerdict.SKIP  # an error check could not be decided (a judge without an LLM): never a pass
    if any(r.status is not CheckStatus.SKIP for r in results):
        return TurnVerdict.PASS
    if audit_report is not None and audit_report.result is TurnVerdict.PASS:
        return TurnVerdict.PASS
    return TurnVerdict.SKIP
