"""The guarded turn: the rules that govern the turn go into the prompt, the answer is checked before anyone sees it.

:class:`Guard` is built once from rules (a :class:`~norma.turns.Norma`, a rulebook path, a matcher) and a chat model
(any :class:`~norma.llm.LLMClient`). One call with the conversation:

1. :meth:`Guard.prepare` matches the last user message (and the session), picks the rules that govern the turn (the
   enforced matches, then the rules with ``when: always`` checks) and writes them into the system message;
2. the model answers;
3. :meth:`Guard.review` runs the turn check on the answer against the same match (nothing is matched twice);
4. by :class:`GuardPolicy`: ``repair`` asks again with the failed checks as feedback (at most ``max_repairs``
   times, then blocks), ``block`` returns the fallback answer, ``flag`` returns the answer with its report.

A failing answer is never returned as passed: :attr:`GuardResult.passed` is the last report's verdict under
``fail_on``, and ``block`` (or an exhausted ``repair``) replaces the answer with the fallback.
"""

from __future__ import annotations

import asyncio
import enum
import os
import time
from collections.abc import Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from norma.errors import InvalidInputError
from norma.llm import reply_text
from norma.matching import MatchResult, RuleMatcher, SessionState
from norma.rules import FailOn, Rule, Verdict
from norma.turns import Norma, TurnReport
from norma.turns import open as open_rules

if TYPE_CHECKING:
    from norma.llm import LLMClient, Messages

__all__ = [
    "DEFAULT_FALLBACK",
    "DEFAULT_TEMPLATE",
    "Guard",
    "GuardAttempt",
    "GuardPolicy",
    "GuardResult",
    "InjectedRule",
    "Prepared",
]

DEFAULT_TEMPLATE = "Follow these rules in your answer (rule ids in brackets):\n{rules}"
"""The rules block added to the system message: ``{rules}`` becomes one numbered line per rule,
``1. [rule-id] what the rule asks``."""

DEFAULT_FALLBACK = "I'm sorry, I can't give that answer. Please rephrase your request or ask for a person to help."
"""What a blocked turn answers."""

FEEDBACK = (
    "Your previous answer broke these rules:\n{failures}\n"
    "Answer the user's last message again, following every rule. Reply with the answer only."
)
"""The repair request sent after a failing answer: ``{failures}`` lists the failed checks."""
BLOCK_TAG = "block"
"""The tag of a rule whose enforced match stops a turn before the model runs (LiteLLM's pre-call, the Agents SDK's
input guardrail): the rule model has tags already, a new field would be a second way to say the same thing."""

MAX_REPAIRS = 5
"""The most repairs a guard may ask for a turn (``max_repairs``; the service's ``--guard-max-repairs`` too)."""


class GuardPolicy(enum.StrEnum):
    """What a guard does with an answer that fails the turn check."""

    REPAIR = "repair"
    """Ask the model again with the failed checks as feedback (at most ``max_repairs`` times); still failing: block."""
    BLOCK = "block"
    """Return the fallback answer instead."""
    FLAG = "flag"
    """Return the answer, marked as failed, with its report."""


class GuardAction(enum.StrEnum):
    """What a guard did with a turn (``GuardResult.action``, the ``Norma-Action`` header of the guarded endpoint)."""

    PASSED = "passed"
    """The first answer passed."""
    REPAIRED = "repaired"
    """A later answer passed (policy ``repair``)."""
    BLOCKED = "blocked"
    """The fallback answer instead of a failing one (``block``, or ``repair`` out of attempts)."""
    FLAGGED = "flagged"
    """The failing answer, marked as failed (``flag``)."""


class InjectedRule(BaseModel):
    """A rule written into the system message."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule_id: str
    text: str
    """What the rule asks, as written into the prompt: its ``action_text`` (``if <condition_text>: <action_text>``
    for a rule that did not match; the ``condition_text`` alone for a rule without an action)."""
    why: str
    """``matched`` (an enforced match of the message) or ``always`` (a rule with ``when: always`` checks)."""


class GuardAttempt(BaseModel):
    """One model call and the check of its answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: str
    report: TurnReport
    model_ms: float
    """How long the model took."""
    check_ms: float
    """How long the turn check took."""


class GuardResult(BaseModel):
    """What a guarded turn gives: the answer to show, whether it passed, and everything that led to it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: str
    """What to show the user: a passing answer, the fallback (``blocked``) or the failing answer (``flagged``)."""
    passed: bool
    """Whether :attr:`answer` is a model answer that passed the turn check (never True for a failing one)."""
    action: GuardAction
    """``passed`` (first answer), ``repaired`` (a later one passed), ``blocked`` or ``flagged``."""
    policy: GuardPolicy
    report: TurnReport
    """The turn check of the last answer the model gave."""
    rules: tuple[InjectedRule, ...]
    """The rules written into the system message."""
    attempts: tuple[GuardAttempt, ...]
    """Every model call, in order."""
    prepare_ms: float
    """Matching and writing the prompt."""
    total_ms: float
    """The whole turn, model calls included."""

    @property
    def guard_ms(self) -> float:
        """The guard's own work: :attr:`total_ms` less the model calls."""
        return self.total_ms - sum(a.model_ms for a in self.attempts)

    def __repr__(self) -> str:
        """``<GuardResult blocked after 2 attempts; rules refund, no-cards; fail, reward 0.750 (...), failed
        refund/policy>``: the action, the rules written into the prompt and the last answer's turn check
        (:meth:`TurnReport.summary`)."""
        count = len(self.attempts)
        rules = ", ".join(r.rule_id for r in self.rules) or "none"
        return (
            f"<GuardResult {self.action} after {count} attempt{'' if count == 1 else 's'}; rules {rules}; "
            f"{self.report.summary()}>"
        )

    def __str__(self) -> str:
        return repr(self)

    def to_dict(self, *, answers: bool = True) -> dict[str, Any]:
        """A JSON-ready mapping (each report as :meth:`TurnReport.to_dict`). ``answers=False`` leaves out the answer
        texts (the turn's and each attempt's): the guarded endpoint's ``norma`` field, whose client has the answer
        in the message and must never see a blocked one (:meth:`json_model` is its schema)."""
        data = self.model_dump(
            mode="json", exclude={"report", "attempts"} if answers else {"answer", "report", "attempts"}
        )
        data["report"] = self.report.to_dict()
        data["attempts"] = [
            {"answer": a.answer, "verdict": a.report.verdict.value, "model_ms": a.model_ms, "check_ms": a.check_ms}
            if answers
            else {"verdict": a.report.verdict.value, "model_ms": a.model_ms, "check_ms": a.check_ms}
            for a in self.attempts
        ]
        data["guard_ms"] = self.guard_ms
        return data

    @classmethod
    def json_model(cls, name: str, *, module: str | None = None) -> type[BaseModel]:
        """The schema of ``to_dict(answers=False)``, generated from this model's fields (never declared again):
        the guarded endpoint's ``norma`` field."""
        fields: dict[str, Any] = {
            field: (info.annotation, Field(description=info.description))
            for field, info in cls.model_fields.items()
            if field not in ("answer", "report", "attempts")
        }
        fields["report"] = (
            TurnReport.json_model(f"{name}Report", _TURN_DOC, module=module),
            Field(description=_TURN_DOC),
        )
        fields["attempts"] = (
            list[_AttemptJSON],
            Field(description="Every model call, in order: its verdict and timings."),
        )
        fields["guard_ms"] = (float, Field(description="The guard's own work: ``total_ms`` less the model calls."))
        doc = "A guarded turn without its answer texts (``GuardResult.to_dict(answers=False)``)."
        return create_model(
            name, __doc__=doc, __config__=ConfigDict(extra="forbid"), __module__=module or cls.__module__, **fields
        )


_TURN_DOC = "The turn check of the last answer the model gave (``TurnReport.to_dict()``)."


class _AttemptJSON(BaseModel):
    """One model call of a guarded turn, without its answer."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    verdict: Verdict
    """The turn check of its answer."""
    model_ms: float
    """How long the model took."""
    check_ms: float
    """How long the turn check took."""


@dataclass(frozen=True)
class Prepared:
    """A turn ready for the model: the user's message, its match, the rules injected and the messages to send."""

    message: str
    """The last user message."""
    match: MatchResult
    rules: tuple[InjectedRule, ...]
    messages: tuple[dict[str, str], ...]
    """The conversation with the rules in its system message."""
    prepare_ms: float
    block: str = ""
    """The rules block written into the system message (:attr:`Guard.template` filled in; empty without rules): what
    an integration that writes the prompt itself adds (the Agents SDK's instructions, LiteLLM's texts)."""

    def with_rules(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` (the conversation :meth:`Guard.prepare` was given, each message's other fields kept: a
        gateway relays them) with the rules block written into its system message as in :attr:`messages`."""
        return _with_block(messages, self.block)

    def blocking(self, tags: Iterable[str] = (BLOCK_TAG,)) -> list[Rule]:
        """The rules that stop this turn before the model runs: enforced matches tagged with one of ``tags``."""
        wanted = set(tags)
        return [m.rule for m in self.match if m.enforced and wanted.intersection(m.rule.tags)]


def finished(done: StopIteration) -> GuardResult:
    """The result :meth:`Guard.turn` returned (what ``steps.send`` raised it with)."""
    assert isinstance(done.value, GuardResult)
    return done.value


def _with_block(messages: Sequence[Mapping[str, Any]], block: str) -> list[dict[str, Any]]:
    """The conversation with ``block`` at the end of its first system message, or in a new one first (none when
    ``block`` is empty)."""
    out = [dict(m) for m in messages]
    if block:
        if out and out[0].get("role") == "system":
            out[0]["content"] = f"{str(out[0]['content']).rstrip()}\n\n{block}"
        else:
            out.insert(0, {"role": "system", "content": block})
    return out


def _last_user_message(messages: Messages) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            if not isinstance(content, str):
                raise InvalidInputError("the last user message has no text content", location="messages")
            return content
    raise InvalidInputError(
        "the conversation has no user message", location="messages", hint='add {"role": "user", "content": "..."}'
    )


def _check_messages(messages: Any) -> list[dict[str, str]]:
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence) or not messages:
        raise InvalidInputError(
            "messages must be a non-empty list of chat messages",
            location="messages",
            hint='[{"role": "user", "content": "..."}]',
        )
    out: list[dict[str, str]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise InvalidInputError(
                "a chat message is an object with a role and a content", location=f"messages[{index}]"
            )
        content = message.get("content")
        if not isinstance(content, str):
            raise InvalidInputError("only text content is supported", location=f"messages[{index}].content")
        out.append({"role": str(message["role"]), "content": content})
    return out


def _rule_text(rule: Rule, *, matched: bool) -> str:
    """What the prompt says of a rule: what it asks (its ``action_text``); for a rule that did not match (its
    ``when: always`` checks), also when it applies."""
    action, condition = " ".join(rule.action_text.split()), " ".join(rule.condition_text.split())
    if not action:
        return condition
    return action if matched or not condition else f"if {condition}: {action}"


class Guard:
    """Guards turns of a chat model with one set of rules (see the module docstring).

    Args:
        rules: a :class:`~norma.turns.Norma` (its judge decides ``judge`` checks), a rulebook path, a
            :class:`~norma.matching.RuleMatcher` or rules (opened with :func:`norma.open`, no judge).
        llm: the chat model (:class:`~norma.llm.LLMClient`); None for :meth:`prepare` and :meth:`review` alone
            (a proxy that calls the model itself).
        policy: ``repair`` (default), ``block`` or ``flag``.
        max_repairs: how many times ``repair`` asks again (default 1, at most 5).
        fallback: the answer of a blocked turn.
        template: the rules block of the system message, with ``{rules}`` where the numbered rules go.
        fail_on: which failed checks fail the answer: ``error`` (default, the turn check's FAIL) or ``warning``.
        temperature, max_tokens: passed to the model.
    """

    def __init__(
        self,
        rules: Norma | RuleMatcher | Sequence[Rule] | str | os.PathLike[str],
        llm: LLMClient | None = None,
        *,
        policy: GuardPolicy | str = GuardPolicy.REPAIR,
        max_repairs: int = 1,
        fallback: str = DEFAULT_FALLBACK,
        template: str = DEFAULT_TEMPLATE,
        fail_on: FailOn | str = FailOn.ERROR,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> None:
        self.norma = rules if isinstance(rules, Norma) else open_rules(rules, judge=None)
        self.llm = llm
        try:
            self.policy = GuardPolicy(policy)
        except ValueError:
            raise InvalidInputError(
                f"policy must be repair, block or flag, not {policy!r}", location="policy"
            ) from None
        if isinstance(max_repairs, bool) or not isinstance(max_repairs, int) or not 0 <= max_repairs <= MAX_REPAIRS:
            raise InvalidInputError(
                f"max_repairs must be a whole number from 0 to {MAX_REPAIRS}, not {max_repairs!r}",
                location="max_repairs",
            )
        self.max_repairs = max_repairs
        if not isinstance(template, str) or "{rules}" not in template:
            raise InvalidInputError("the template must contain {rules}", location="template")
        try:
            template.format(rules="")
        except (IndexError, KeyError, ValueError) as exc:
            raise InvalidInputError(
                f"the template has a placeholder other than {{rules}}: {exc}",
                location="template",
                hint="write literal braces as {{ and }}",
            ) from None
        if not isinstance(fallback, str) or not fallback.strip():
            raise InvalidInputError("the fallback answer must be non-empty text", location="fallback")
        self.template = template
        self.fallback = fallback
        self.fail_on = FailOn.parse(fail_on)
        self.temperature = temperature
        self.max_tokens = max_tokens

    # --- the parts a proxy uses ------------------------------------------------------------------------------------

    def prepare(self, messages: Messages, session: SessionState | Mapping[str, Any] | None = None) -> Prepared:
        """Match the conversation's last user message and write the rules that govern the turn into its system
        message (prepended to the first system message, or a new one first)."""
        started = time.perf_counter()
        conversation = _check_messages(messages)
        message = _last_user_message(conversation)
        match = self.norma.match(message, session, allow_empty=True)  # blank (tool calls only): the always rules
        injected = self.injected(match)
        block = ""
        if injected:
            lines = "\n".join(f"{n}. [{r.rule_id}] {r.text}" for n, r in enumerate(injected, 1))
            block = self.template.format(rules=lines)
        return Prepared(
            message=message,
            match=match,
            rules=injected,
            messages=tuple(_with_block(conversation, block)),
            prepare_ms=(time.perf_counter() - started) * 1000,
            block=block,
        )

    def injected(self, match: MatchResult) -> tuple[InjectedRule, ...]:
        """The rules that govern a turn: its enforced matches (best first), then the rules with ``when: always``
        checks that did not match."""
        found = [
            InjectedRule(rule_id=m.rule.id, text=_rule_text(m.rule, matched=True), why="matched")
            for m in match
            if m.enforced
        ]
        seen = {r.rule_id for r in found}
        found += [
            InjectedRule(rule_id=rule.id, text=_rule_text(rule, matched=False), why="always")
            for rule in self.norma.always_rules
            if rule.id not in seen
        ]
        return tuple(found)

    def review(self, prepared: Prepared, answer: str) -> TurnReport:
        """The turn check of ``answer`` against the turn's match (the message is not matched again)."""
        return self.norma.review(prepared.message, answer, prepared.match)

    def fails(self, report: TurnReport) -> bool:
        """Whether ``report`` fails under this guard's ``fail_on``."""
        return report.failing(self.fail_on)

    def feedback(self, prepared: Prepared, attempts: Sequence[GuardAttempt]) -> list[dict[str, str]]:
        """The messages of a repair: the turn's messages, each failing answer and what it broke."""
        return [*prepared.messages, *self.repair_messages(attempts)]

    def failures(self, report: TurnReport) -> list[str]:
        """What a failing answer broke, a line each (``[rule/check] message``): the failed checks at this guard's
        ``fail_on`` severities (all failed checks when none is), else the audit's violations (``[IR.x.y] ...``)."""
        levels = self.fail_on.severities
        failed = [r for r in report.failures if r.severity in levels] or report.failures
        listed = [f"[{r.rule_id}/{r.check_id}] {r.message}" for r in failed]
        if report.audit is not None and not listed:
            listed = [f"[{v.rule}] {v.description}" for v in report.audit.violations]
        return listed

    def repair_messages(self, attempts: Sequence[GuardAttempt]) -> list[dict[str, str]]:
        """What a repair adds after the turn's messages: each failing answer and what it broke."""
        added: list[dict[str, str]] = []
        for attempt in attempts:
            listed = "\n".join(f"- {line}" for line in self.failures(attempt.report))
            added.append({"role": "assistant", "content": attempt.answer})
            added.append({"role": "user", "content": FEEDBACK.format(failures=listed or "- (the turn check)")})
        return added

    def attempt(self, prepared: Prepared, answer: str, model_ms: float) -> GuardAttempt:
        """One model answer checked (:meth:`review`), with how long the model and the check took."""
        checked = time.perf_counter()
        report = self.review(prepared, answer)
        return GuardAttempt(
            answer=answer, report=report, model_ms=model_ms, check_ms=(time.perf_counter() - checked) * 1000
        )

    def turn(self, prepared: Prepared, started: float) -> Generator[list[dict[str, str]], GuardAttempt, GuardResult]:
        """The guarded turn's decisions, without I/O: the one loop every driver runs (:meth:`run`, :meth:`arun`,
        the guarded endpoint, its streams).

        Yields what to add after the turn's messages before the next model call (nothing the first time, then the
        repair's messages); is sent each :meth:`attempt`; returns the :class:`GuardResult` once the policy is done
        (``StopIteration.value``)::

            steps = guard.turn(prepared, started)
            added = next(steps)
            while True:
                answer = model(prepared.messages + added)
                try:
                    added = steps.send(guard.attempt(prepared, answer, model_ms))
                except StopIteration as done:
                    return done.value
        """
        attempts: list[GuardAttempt] = []
        added: list[dict[str, str]] = []
        while True:
            attempts.append((yield added))
            if not self.wants_repair(attempts):
                return self.decide(prepared, attempts, started)
            added = self.repair_messages(attempts)

    def decide(self, prepared: Prepared, attempts: Sequence[GuardAttempt], started: float) -> GuardResult:
        """The result of a turn whose attempts are done: the last one passed, or the policy's answer."""
        last = attempts[-1]
        failing = self.fails(last.report)
        if not failing:
            action, answer = (GuardAction.PASSED if len(attempts) == 1 else GuardAction.REPAIRED), last.answer
        elif self.policy is GuardPolicy.FLAG:
            action, answer = GuardAction.FLAGGED, last.answer
        else:
            action, answer = GuardAction.BLOCKED, self.fallback
        return GuardResult(
            answer=answer,
            passed=not failing,
            action=action,
            policy=self.policy,
            report=last.report,
            rules=prepared.rules,
            attempts=tuple(attempts),
            prepare_ms=prepared.prepare_ms,
            total_ms=(time.perf_counter() - started) * 1000,
        )

    def wants_repair(self, attempts: Sequence[GuardAttempt]) -> bool:
        """Whether to ask the model again after ``attempts``."""
        return (
            self.policy is GuardPolicy.REPAIR and self.fails(attempts[-1].report) and len(attempts) <= self.max_repairs
        )

    # --- one call --------------------------------------------------------------------------------------------------

    def _model(self) -> LLMClient:
        if self.llm is None:
            raise InvalidInputError(
                "this guard has no chat model", location="llm", hint="Guard(rules, llm=OpenAIClient(...))"
            )
        return self.llm

    def run(self, messages: Messages, session: SessionState | Mapping[str, Any] | None = None) -> GuardResult:
        """Guard one turn: prepare, call the model, check, and repair, block or flag by policy (:meth:`turn`).

        Raises:
            InvalidInputError: no user message, non-text content, a bad session.
            BackendError: the model failed (after its client's retries).
        """
        started = time.perf_counter()
        llm = self._model()
        prepared = self.prepare(messages, session)
        steps = self.turn(prepared, started)
        added = next(steps)
        while True:
            called = time.perf_counter()
            answer = reply_text(
                llm.complete([*prepared.messages, *added], temperature=self.temperature, max_tokens=self.max_tokens)
            )
            attempt = self.attempt(prepared, answer, (time.perf_counter() - called) * 1000)
            try:
                added = steps.send(attempt)
            except StopIteration as done:
                return finished(done)

    async def arun(self, messages: Messages, session: SessionState | Mapping[str, Any] | None = None) -> GuardResult:
        """:meth:`run` without blocking the event loop: the model through ``acomplete``, matching and checking in
        a worker thread."""
        started = time.perf_counter()
        llm = self._model()
        prepared = await asyncio.to_thread(self.prepare, messages, session)
        steps = self.turn(prepared, started)
        added = next(steps)
        while True:
            called = time.perf_counter()
            conversation = [*prepared.messages, *added]
            answer = reply_text(
                await llm.acomplete(conversation, temperature=self.temperature, max_tokens=self.max_tokens)
            )
            attempt = await asyncio.to_thread(self.attempt, prepared, answer, (time.perf_counter() - called) * 1000)
            try:
                added = steps.send(attempt)
            except StopIteration as done:
                return finished(done)
