"""Labelled messages written by an LLM, to calibrate a tenant's gate without labelling anything by hand.

For each rule the model writes ``per_rule`` messages the rule should apply to (:func:`generate_examples`'s
prompt: fresh paraphrases, not the rule's stored examples, which the matcher already holds) and ``per_rule``
**near misses**: messages close to the rule's subject that the rule must not apply to. A near miss only says what
the rule it was written for must not do: :func:`~norma.matching.calibrate_gate` counts that rule, returned for it,
as a false positive, and ignores any other rule returned (another rule of the rulebook may well apply to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from norma.errors import InvalidInputError
from norma.llm import reply_text
from norma.matching._examples import MAX_EXAMPLE_CHARS, generate_examples, parse_examples
from norma.matching._labelled import LabelledMessage
from norma.rules import Rule

if TYPE_CHECKING:
    from norma.llm import LLMClient

__all__ = ["NearMiss", "SyntheticLabels", "near_miss_prompt", "synthesize_labelled"]

_SYSTEM = (
    "You write realistic messages that users send to a chat assistant. "
    "Reply with a JSON array of strings and nothing else."
)
MAX_PER_RULE = 20


@dataclass(frozen=True)
class NearMiss:
    """A message the rule ``rule_id`` must not apply to (other rules may)."""

    message: str
    rule_id: str
    scenario: str | None = None
    step: str | None = None


@dataclass(frozen=True)
class SyntheticLabels:
    """What :func:`synthesize_labelled` wrote: messages with the rule they expect, and near misses."""

    positives: tuple[LabelledMessage, ...]
    near_misses: tuple[NearMiss, ...]
    failed: tuple[str, ...] = ()
    """Rules for which the model's replies held no usable message."""


def near_miss_prompt(rule: Rule, n: int) -> list[dict[str, str]]:
    """The chat messages asking for ``n`` messages close to ``rule``'s subject that it must not apply to."""
    lines = [f"A rule of a chat assistant applies when: {rule.condition_text.strip()}"]
    if rule.action_text.strip():
        lines.append(f"When it applies, the assistant will: {rule.action_text.strip()}")
    lines += [
        f"Write {n} different messages a user might send that are about a closely related subject, share words "
        "with the rule, and yet are NOT a case this rule applies to (a different request, a neighbouring topic, "
        "or the opposite situation).",
        "Write each as the user would type it, in the first person.",
        f"Reply with a JSON array of {n} strings.",
    ]
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": "\n".join(lines)}]


def synthesize_labelled(
    rules: list[Rule] | tuple[Rule, ...],
    *,
    llm: LLMClient,
    per_rule: int = 3,
    seed: int | None = 0,
) -> SyntheticLabels:
    """Positives and near misses for every enabled rule of ``rules`` (see the module docstring), in rule order.

    A SCENARIO / STEP rule's messages are matched in its scenario and step. Lets
    :class:`~norma.errors.BackendError` through when the model fails; nothing is stored.
    """
    if not isinstance(per_rule, int) or not 1 <= per_rule <= MAX_PER_RULE:
        raise InvalidInputError(f"per_rule must be an integer from 1 to {MAX_PER_RULE}, not {per_rule!r}")
    positives: list[LabelledMessage] = []
    misses: list[NearMiss] = []
    failed: list[str] = []
    for rule in rules:
        if not rule.enabled:
            continue
        where = {"scenario": rule.scenario_id, "step": rule.step_id}
        wrote = generate_examples(rule, per_rule, llm=llm, seed=seed)
        reply = reply_text(llm.complete(near_miss_prompt(rule, per_rule), temperature=0.7, seed=seed))
        condition = " ".join(rule.condition_text.split()).casefold()
        own = {text.casefold() for text in wrote} | {e.casefold() for e in rule.examples} | {condition}
        near = [t for t in parse_examples(reply, max_chars=MAX_EXAMPLE_CHARS) if t.casefold() not in own][:per_rule]
        if not wrote and not near:
            failed.append(rule.id)
        positives.extend(LabelledMessage(message=text, expected=(rule.id,), **where) for text in wrote)
        misses.extend(NearMiss(text, rule.id, **where) for text in near)
    return SyntheticLabels(tuple(positives), tuple(misses), tuple(failed))
