"""Labelled messages: user messages with the rule ids that should apply to each, read from JSONL.

One JSON object per line::

    {"message": "there's a payment I don't recognise", "expected": ["fraud-suspected"]}
    {"message": "what's the weather tomorrow", "expected": []}
    {"message": "how long will it take", "expected": ["dispute-timeline"], "scenario": "dispute"}

``message`` (non-blank text) and ``expected`` (a list of distinct rule ids; ``[]``: the message should match no
rule) are required; ``scenario`` and ``step`` (text) optionally name the active scenario and step the message is
matched in, so that SCENARIO and STEP rules can be expected. No other key is accepted. Blank lines are skipped.
Every problem raises :class:`LabelledMessagesError` naming the file and the line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from norma._safety import json_lines, load_json
from norma.errors import InvalidInputError, LimitExceededError, NormaError
from norma.rules import Rule, Scope

__all__ = [
    "MAX_LABELLED_MESSAGES",
    "LabelledMessage",
    "LabelledMessagesError",
    "check_labelled",
    "load_labelled",
    "parse_labelled",
]

MAX_LABELLED_MESSAGES = 100_000
"""Most messages one labelled file may hold."""
_KEYS = ("message", "expected", "scenario", "step")


class LabelledMessagesError(InvalidInputError):
    """A labelled-messages file (or list) with a problem: the file, the line and what is wrong."""


class LabelledMessage(BaseModel):
    """A user message and the ids of the rules that should apply to it (none: it should match nothing)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    message: str = Field(min_length=1)
    """The user message."""
    expected: tuple[str, ...] = ()
    """The ids of every rule that should apply, in the file's order; empty: no rule should."""
    scenario: str | None = None
    """The active scenario the message is matched in (None: none)."""
    step: str | None = None
    """The active step the message is matched in (None: none)."""
    line: int | None = None
    """The line of the file it came from (None when built in code)."""

    @property
    def where(self) -> str | None:
        """``line N`` when the message came from a file."""
        return None if self.line is None else f"line {self.line}"


def _fail(message: str, source: str, line: int | None, hint: str | None = None) -> LabelledMessagesError:
    return LabelledMessagesError(message, source=source, location=None if line is None else f"line {line}", hint=hint)


def _text(value: Any, key: str, source: str, line: int, *, optional: bool) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        kind = "null" if value is None else type(value).__name__
        raise _fail(f'"{key}" must be non-blank text, not {kind} {value!r:.60}', source, line)
    return value


def _record(data: Any, source: str, line: int) -> LabelledMessage:
    if not isinstance(data, dict):
        raise _fail(f"expected a JSON object, got {type(data).__name__}", source, line,
                    hint='write {"message": "...", "expected": ["rule-id"]} on each line')  # fmt: skip
    unknown = sorted(str(k) for k in data if k not in _KEYS)
    if unknown:
        raise _fail(f"unknown key(s) {', '.join(map(repr, unknown))}", source, line,
                    hint=f"the keys are {', '.join(_KEYS)}")  # fmt: skip
    for key in ("message", "expected"):
        if key not in data:
            raise _fail(f'"{key}" is missing', source, line)
    message = _text(data["message"], "message", source, line, optional=False)
    expected = data["expected"]
    if not isinstance(expected, list) or not all(isinstance(i, str) and i for i in expected):
        raise _fail(f'"expected" must be a list of rule ids (text), not {expected!r:.80}', source, line,
                    hint="[] means the message should match no rule")  # fmt: skip
    repeated = sorted({i for i in expected if expected.count(i) > 1})
    if repeated:
        raise _fail(f'"expected" names {", ".join(map(repr, repeated))} more than once', source, line)
    return LabelledMessage(
        message=str(message),
        expected=tuple(expected),
        scenario=_text(data.get("scenario"), "scenario", source, line, optional=True),
        step=_text(data.get("step"), "step", source, line, optional=True),
        line=line,
    )


def parse_labelled(text: str, *, source: str = "<labelled>") -> tuple[LabelledMessage, ...]:
    """Labelled messages from JSONL text (see the module docstring); blank lines are skipped.

    Raises :class:`LabelledMessagesError` for the first bad line (file and line named), and for a text with no
    message at all.
    """
    found: list[LabelledMessage] = []
    for number, raw in enumerate(json_lines(text), start=1):
        if not raw.strip():
            continue
        if len(found) == MAX_LABELLED_MESSAGES:
            raise LimitExceededError(
                f"more than {MAX_LABELLED_MESSAGES:,} labelled messages", source=source, location=f"line {number}",
                hint="split the file",
            )  # fmt: skip
        try:
            data = load_json(raw, source=source)
        except NormaError as exc:
            raise _fail(exc.message, source, number) from None
        found.append(_record(data, source, number))
    if not found:
        raise _fail("no labelled message (the file is empty)", source, None,
                    hint='write {"message": "...", "expected": ["rule-id"]} on each line')  # fmt: skip
    return tuple(found)


def load_labelled(path: str | os.PathLike[str]) -> tuple[LabelledMessage, ...]:
    """Labelled messages from a JSONL file (UTF-8; see the module docstring).

    Raises :class:`LabelledMessagesError` naming the file and line of the first problem; ``OSError`` when the file
    cannot be read. Rule ids are checked against a rulebook by :func:`check_labelled` (the evaluation does it).
    """
    file = Path(path)
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(f"not valid UTF-8 at byte {exc.start}", str(file), None) from None
    return parse_labelled(text, source=str(file))


def _reachable(rule: Rule, item: LabelledMessage) -> str | None:
    """Why ``rule`` can never match ``item`` (None: it can)."""
    if not rule.enabled:
        return f"rule {rule.id!r} is disabled: it matches nothing"
    if rule.scope is Scope.SCENARIO and item.scenario != rule.scenario_id:
        return f'rule {rule.id!r} is a rule of scenario {rule.scenario_id!r}: add "scenario": "{rule.scenario_id}"'
    if rule.scope is Scope.STEP:
        if item.step != rule.step_id:
            return f'rule {rule.id!r} is a rule of step {rule.step_id!r}: add "step": "{rule.step_id}"'
        if rule.scenario_id is not None and item.scenario != rule.scenario_id:
            return f'rule {rule.id!r} is a step of scenario {rule.scenario_id!r}: add "scenario": "{rule.scenario_id}"'
    return None


def check_labelled(labelled: Sequence[LabelledMessage], rules: Iterable[Rule], *, source: str = "<labelled>") -> None:
    """Check that every expected id names one of ``rules`` and that the rule can match that message.

    Raises :class:`LabelledMessagesError` at the first message with an unknown id (every unknown id of that message
    listed), an expected rule that is disabled, or a SCENARIO / STEP rule expected without its scenario / step.
    """
    by_id = {rule.id: rule for rule in rules}
    if not labelled:
        raise _fail("no labelled message", source, None)
    for index, item in enumerate(labelled):
        if not isinstance(item, LabelledMessage):
            raise LabelledMessagesError(
                f"expected a LabelledMessage, not {type(item).__name__}", source=source, location=f"[{index}]"
            )
        line = item.line
        where = f"line {line}" if line is not None else f"[{index}]"
        unknown = [i for i in item.expected if i not in by_id]
        if unknown:
            raise LabelledMessagesError(
                f"unknown rule id(s) {', '.join(map(repr, unknown))}",
                source=source,
                location=where,
                hint="expected ids must be rules of the rulebook evaluated",
            )
        for rule_id in item.expected:
            problem = _reachable(by_id[rule_id], item)
            if problem is not None:
                raise LabelledMessagesError(problem, source=source, location=where)
