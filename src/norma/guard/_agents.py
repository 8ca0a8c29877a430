"""norma in the OpenAI Agents SDK (the ``agents`` extra): the rules that apply go into the agent's instructions, the
final output gets the turn check, and rules that must stop a turn stop it before the model runs.

:func:`agent_guardrails` gives an :class:`AgentGuardrails` with three parts, each a plain object of the SDK::

    rails = agent_guardrails("rules.yaml", instructions="You are Acme's assistant.")
    agent = Agent(name="support", instructions=rails.instructions,
                  input_guardrails=[rails.input], output_guardrails=[rails.output])

* :meth:`AgentGuardrails.instructions` (dynamic instructions): the base instructions plus norma's rules block
  (:meth:`Guard.prepare`: the enforced matches of the run's last user message, then the ``when: always`` rules);
* :attr:`AgentGuardrails.output` (an ``OutputGuardrail``): the turn check of the final output against that message;
  its tripwire fires when the answer fails under ``fail_on``, and its ``output_info`` is the report;
* :attr:`AgentGuardrails.input` (a blocking ``InputGuardrail``, ``run_in_parallel=False``): its tripwire fires when
  the message matches, enforced, a rule tagged with one of ``block_tags`` (``block`` by default), before any model
  request; its ``output_info`` names those rules.

The user's message is the last ``user`` item of the run's input (``RunContextWrapper.turn_input``, what the SDK
sets before asking for the instructions); a run matches it once (the input guardrail, the instructions and the
output guardrail share the match of a run). Matching and checking run in a worker thread, off the event loop.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from norma.errors import InvalidInputError, MissingDependencyError
from norma.guard._guard import BLOCK_TAG, DEFAULT_TEMPLATE, Guard, Prepared
from norma.matching import RuleMatcher, SessionState
from norma.rules import FailOn, Rule
from norma.turns import Norma

if TYPE_CHECKING:
    from agents import Agent, GuardrailFunctionOutput, InputGuardrail, OutputGuardrail, RunContextWrapper
    from agents.items import TResponseInputItem

__all__ = ["AGENTS_INSTALL", "DEFAULT_BLOCK_TAGS", "AgentGuardrails", "agent_guardrails"]

AGENTS_INSTALL = "pip install 'norma-rules[agents]'"
DEFAULT_BLOCK_TAGS = (BLOCK_TAG,)
"""The tags that make an enforced match stop the turn (the input guardrail's tripwire)."""

_RUNS_KEPT = 1024
"""How many runs' matches are kept for the later parts of the same run (oldest dropped first)."""

Instructions = str | Callable[["RunContextWrapper[Any]", "Agent[Any]"], "str | Awaitable[str]"]
"""The agent's own instructions: text, or a function of the run context and the agent (sync or async)."""
SessionOf = Callable[["RunContextWrapper[Any]"], "SessionState | Mapping[str, Any] | None"]
"""Where a run's norma session (scenario, step, fired rules) comes from: a function of the run context."""


def _user_text(items: str | Sequence[TResponseInputItem] | None) -> str:
    """The text of the last ``user`` item of a run's input ("" when there is none)."""
    if isinstance(items, str):
        return items
    for item in reversed(list(items or ())):
        if not isinstance(item, Mapping) or item.get("role") != "user":
            continue
        content = item.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, Sequence):
            parts = [
                p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") in ("input_text", "text")
            ]
            return "\n".join(p for p in parts if isinstance(p, str))
        return ""
    return ""


def _output_text(output: Any) -> str:
    """The final output as the text the turn check reads: text as is, a structured output as JSON."""
    if isinstance(output, str):
        return output
    dump = getattr(output, "model_dump_json", None)
    if callable(dump):
        return str(dump())
    return json.dumps(output, ensure_ascii=False, default=str)


def _require_sdk() -> None:
    try:
        import agents  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            "the OpenAI Agents SDK guardrails", extra="agents", install=AGENTS_INSTALL
        ) from exc


class _Runs:
    """The match of each run in flight, by run context (the SDK passes one context object through a run); a run's
    entry goes once its context is gone (at most :data:`_RUNS_KEPT` are kept in any case)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[int, tuple[weakref.ref[Any], Prepared]] = OrderedDict()
        self._gone: list[int] = []
        """Keys of contexts collected since the last purge (appended by weakref callbacks, which may run in the
        middle of anything, so they only append)."""

    def _purge(self) -> None:
        while self._gone:
            key = self._gone.pop()
            kept = self._items.get(key)
            if kept is not None and kept[0]() is None:
                del self._items[key]

    def get(self, context: object, message: str) -> Prepared | None:
        with self._lock:
            self._purge()
            kept = self._items.get(id(context))
        if kept is None or kept[0]() is not context or kept[1].message != message:
            return None
        return kept[1]

    def put(self, context: object, prepared: Prepared) -> None:
        key = id(context)
        try:
            ref = weakref.ref(context, lambda _: self._gone.append(key))
        except TypeError:  # a context that takes no weak reference is matched again by each part
            return
        with self._lock:
            self._purge()
            self._items[key] = (ref, prepared)
            self._items.move_to_end(key)
            while len(self._items) > _RUNS_KEPT:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            self._purge()
            return len(self._items)


class AgentGuardrails:
    """Dynamic instructions and input and output guardrails of the OpenAI Agents SDK over one :class:`Guard`
    (built by :func:`agent_guardrails`; see the module docstring).

    Attributes:
        guard: the guard whose rules, template and ``fail_on`` apply.
        input: the input guardrail (blocking: it runs before the model).
        output: the output guardrail (the turn check).
    """

    def __init__(
        self,
        guard: Guard,
        *,
        instructions: Instructions | None = None,
        session: SessionOf | None = None,
        block_tags: Sequence[str] = DEFAULT_BLOCK_TAGS,
    ) -> None:
        _require_sdk()
        from agents import InputGuardrail, OutputGuardrail

        if instructions is not None and not isinstance(instructions, str) and not callable(instructions):
            raise InvalidInputError(
                f"instructions must be text or a function of (context, agent), not {type(instructions).__name__}",
                location="instructions",
            )
        if isinstance(block_tags, str) or not all(isinstance(t, str) and t for t in block_tags):
            raise InvalidInputError(
                "block_tags must be a list of non-empty tags", location="block_tags", hint='block_tags=["block"]'
            )
        if session is not None and not callable(session):
            raise InvalidInputError("session must be a function of the run context", location="session")
        self.guard = guard
        self.base = instructions
        self.session = session
        self.block_tags = frozenset(block_tags)
        self._runs = _Runs()
        self.input: InputGuardrail[Any] = InputGuardrail(
            guardrail_function=self._check_input, name="norma_input", run_in_parallel=False
        )
        self.output: OutputGuardrail[Any] = OutputGuardrail(guardrail_function=self._check_output, name="norma_output")

    def __repr__(self) -> str:
        return f"AgentGuardrails({self.guard.norma!r}, block_tags={sorted(self.block_tags)})"

    async def _prepared(self, context: RunContextWrapper[Any], message: str) -> Prepared:
        """The run's match of ``message`` (matched once per run, in a worker thread)."""
        kept = self._runs.get(context, message)
        if kept is not None:
            return kept
        session = self.session(context) if self.session is not None else None
        prepared = await asyncio.to_thread(self.guard.prepare, [{"role": "user", "content": message}], session)
        self._runs.put(context, prepared)
        return prepared

    async def _base(self, context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        if self.base is None or isinstance(self.base, str):
            return self.base or ""
        result = self.base(context, agent)
        text = await result if inspect.isawaitable(result) else result
        if not isinstance(text, str):
            raise InvalidInputError(
                f"the instructions function returned {type(text).__name__}, not text", location="instructions"
            )
        return text

    async def instructions(self, context: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        """The agent's instructions: its base instructions, then the rules block of the rules that govern the turn
        (``Agent(instructions=rails.instructions)``)."""
        base = await self._base(context, agent)
        prepared = await self._prepared(context, _user_text(context.turn_input))
        if not prepared.block:
            return base
        return f"{base.rstrip()}\n\n{prepared.block}" if base.strip() else prepared.block

    async def _check_input(
        self, context: RunContextWrapper[Any], agent: Agent[Any], items: str | list[TResponseInputItem]
    ) -> GuardrailFunctionOutput:
        from agents import GuardrailFunctionOutput

        prepared = await self._prepared(context, _user_text(items))
        tagged = {m.rule.id: sorted(self.block_tags.intersection(m.rule.tags)) for m in prepared.match if m.enforced}
        stopping = [
            {**r.model_dump(mode="json"), "tags": tagged[r.rule_id]} for r in prepared.rules if tagged.get(r.rule_id)
        ]
        return GuardrailFunctionOutput(output_info={"rules": stopping}, tripwire_triggered=bool(stopping))

    async def _check_output(
        self, context: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> GuardrailFunctionOutput:
        from agents import GuardrailFunctionOutput

        prepared = await self._prepared(context, _user_text(context.turn_input))
        report = await asyncio.to_thread(self.guard.review, prepared, _output_text(output))
        failing = self.guard.fails(report)
        info = {
            "passed": not failing,
            "fail_on": self.guard.fail_on.value,
            "rules": [r.model_dump(mode="json") for r in prepared.rules],
            "report": report.to_dict(),
        }
        return GuardrailFunctionOutput(output_info=info, tripwire_triggered=failing)


def agent_guardrails(
    rules: Guard | Norma | RuleMatcher | Sequence[Rule] | str | os.PathLike[str],
    *,
    instructions: Instructions | None = None,
    session: SessionOf | None = None,
    block_tags: Sequence[str] = DEFAULT_BLOCK_TAGS,
    fail_on: FailOn | str = FailOn.ERROR,
    template: str = DEFAULT_TEMPLATE,
) -> AgentGuardrails:
    """norma's guardrails for an OpenAI Agents SDK agent (needs the ``agents`` extra).

    Args:
        rules: a :class:`Guard` (its template and ``fail_on`` apply), or what :class:`Guard` takes: a
            :class:`~norma.turns.Norma` (its judge decides ``judge`` checks), a rulebook path, a matcher or rules.
        instructions: the agent's own instructions (text, or a function of the run context and the agent); the
            rules block follows them.
        session: a function of the run context giving the run's norma session (scenario, step, fired rules), for
            rulebooks with scenarios; None: no session.
        block_tags: a rule tagged with one of these stops the turn when the message matches it (enforced).
        fail_on: which failed checks trip the output guardrail: ``error`` (default) or ``warning``.
        template: the rules block, with ``{rules}`` where the numbered rules go.

    Raises:
        MissingDependencyError: the OpenAI Agents SDK is not installed (``pip install 'norma-rules[agents]'``).
        InvalidInputError: bad rules, template, ``fail_on``, ``block_tags`` or ``instructions``.
    """
    _require_sdk()
    guard = rules if isinstance(rules, Guard) else Guard(rules, fail_on=fail_on, template=template)
    return AgentGuardrails(guard, instructions=instructions, session=session, block_tags=block_tags)
