"""The guarded turn (issue #49): norma in the LLM call.

* :class:`Guard` — built once from rules (:func:`norma.open`'s :class:`~norma.turns.Norma`, a rulebook, a matcher)
  and a chat model (:class:`~norma.llm.LLMClient`); :meth:`Guard.run` / :meth:`Guard.arun` guard one turn: the rules
  that govern it go into the system message, the model answers, the turn check decides, and by
  :class:`GuardPolicy` the answer is repaired, blocked or flagged. :class:`GuardResult` carries the answer, the
  report, the rules injected, every attempt and the timings.

* :func:`agent_guardrails` — the OpenAI Agents SDK (the ``agents`` extra): dynamic instructions with the rules that
  apply, an output guardrail running the turn check and an input guardrail for rules that stop a turn.

The guarded endpoint of ``norma serve`` and the integrations (LiteLLM, the OpenAI Agents SDK) are built on
:meth:`Guard.prepare` and :meth:`Guard.review`. See docs/guard.md.
"""

from __future__ import annotations

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.guard._agents import AgentGuardrails as AgentGuardrails
    from norma.guard._agents import agent_guardrails as agent_guardrails
    from norma.guard._guard import BLOCK_TAG as BLOCK_TAG
    from norma.guard._guard import DEFAULT_FALLBACK as DEFAULT_FALLBACK
    from norma.guard._guard import DEFAULT_TEMPLATE as DEFAULT_TEMPLATE
    from norma.guard._guard import MAX_REPAIRS as MAX_REPAIRS
    from norma.guard._guard import Guard as Guard
    from norma.guard._guard import GuardAction as GuardAction
    from norma.guard._guard import GuardAttempt as GuardAttempt
    from norma.guard._guard import GuardPolicy as GuardPolicy
    from norma.guard._guard import GuardResult as GuardResult
    from norma.guard._guard import InjectedRule as InjectedRule
    from norma.guard._guard import Prepared as Prepared
    from norma.guard._guard import finished as finished

_PUBLIC: dict[str, str] = {
    "Guard": "_guard",
    "GuardAction": "_guard",
    "GuardPolicy": "_guard",
    "GuardResult": "_guard",
    "agent_guardrails": "_agents",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "AgentGuardrails": "_agents",
    "BLOCK_TAG": "_guard",
    "DEFAULT_FALLBACK": "_guard",
    "DEFAULT_TEMPLATE": "_guard",
    "GuardAttempt": "_guard",
    "InjectedRule": "_guard",
    "MAX_REPAIRS": "_guard",
    "Prepared": "_guard",
    "finished": "_guard",
}
"""What norma's service, integrations and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
