"""Evaluating a rule's checks on one output: one small function per kind, found by kind in a plain registry.

Each evaluator takes the check, the rule and an :class:`_Output` (the text with what several checks share: its
folded form, its line index, the user's message and the judge) and returns ``(status, message, spans)``.
Evaluation is pure but for ``judge`` checks, which ask the :class:`norma.llm.Judge` they are given (and are
skipped without one).

A :class:`CheckedOutput` holds one ``_Output`` for every rule it evaluates: a turn checks one output against each of
its rules, and what the checks share is computed once for all of them. Nothing is kept from one output to the next.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from norma._safety import Pattern, compile_pattern, is_unicode
from norma._trace import span as trace_span
from norma.checks._pii import PII_LABELS, find_pii, mask
from norma.checks._results import MAX_EVIDENCE, CheckResult, CheckStatus, Span, span_attributes
from norma.checks._text import FoldedText, Locator
from norma.errors import BackendError, InvalidInputError
from norma.rules import (
    Check,
    ContainsCheck,
    JsonCheck,
    JudgeCheck,
    LengthCheck,
    NoPiiCheck,
    RegexCheck,
    Rule,
    When,
)

if TYPE_CHECKING:
    from norma.llm import Judge

__all__ = ["NO_LLM", "CheckedOutput", "evaluate_checks"]

NO_LLM = "no LLM configured: a judge check is skipped, never passed"
"""The message of a ``judge`` result when :func:`evaluate_checks` is given no judge."""
JUDGE_FAILED = "the judge could not decide, so the check is skipped, never passed"
"""The start of a ``judge`` result's message when the model failed or its reply was not a verdict."""

_Outcome = tuple[CheckStatus, str, list[tuple[int, int]]]
"""Status, message, and ``(start, end)`` of each violation, in text order."""


_RUN = re.compile(r"\S+")
_ALNUM = re.compile(r"[^\W_]")


class _Output:
    """The output under test, with what several checks share, computed on first use."""

    def __init__(self, text: str, message: str | None = None, judge: Judge | None = None) -> None:
        self.text = text
        self.locate = Locator(text)
        self.message = message
        self.judge = judge

    @functools.cached_property
    def folded(self) -> FoldedText:
        return FoldedText(self.text)

    @functools.cached_property
    def words(self) -> list[tuple[int, int]]:
        """``(start, end)`` of each word: a run of non-space characters (``str.isspace``) with a letter or digit
        (``str.isalnum``) in it. Both expressions are linear: ``\\S+`` takes whole runs, ``[^\\W_]`` is ``isalnum``."""
        return [m.span() for m in _RUN.finditer(self.text) if _ALNUM.search(m.group())]


def as_written(pattern: str) -> str:
    """A pattern quoted as the rulebook writes it: its backslashes single (``'\\b\\d+'`` is ``'\\\\b\\\\d+'`` as a
    Python repr), in single quotes, or double quotes when it holds a single quote, or backticks when it holds both."""
    for quote in ("'", '"', "`"):
        if quote not in pattern:
            return f"{quote}{pattern}{quote}"
    return repr(pattern)


def _where(span: Span) -> str:
    return f"line {span.line}, column {span.column}"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count:,} times"


def _contains(check: ContainsCheck, rule: Rule, output: _Output) -> _Outcome:
    found = {term: list(output.folded.find(term)) for term in check.terms}
    present = [t for t in check.terms if found[t]]
    missing = [t for t in check.terms if not found[t]]
    listed = ", ".join(f"{t!r} ({_times(len(found[t]))})" for t in present)
    if check.kind == "contains":
        if check.mode == "any":
            if present:
                return CheckStatus.PASS, f"mentions {listed}", []
            return CheckStatus.FAIL, f"mentions none of {', '.join(map(repr, check.terms))}", []
        if missing:
            return CheckStatus.FAIL, f"does not mention {', '.join(map(repr, missing))}", []
        return CheckStatus.PASS, f"mentions all {len(check.terms)} terms", []
    violated = bool(present) if check.mode == "any" else not missing
    if not violated:
        if check.mode == "any":
            return CheckStatus.PASS, f"mentions none of the {len(check.terms)} forbidden terms", []
        return CheckStatus.PASS, f"does not mention {', '.join(map(repr, missing))}, so not all terms together", []
    spans = sorted(span for t in present for span in found[t])
    together = "all the terms together: " if check.mode == "all" else ""
    return CheckStatus.FAIL, f"mentions {together}{listed}", spans


@functools.lru_cache(maxsize=512)
def _compiled(pattern: str) -> Pattern:
    return compile_pattern(pattern)


def _regex(check: RegexCheck, rule: Rule, output: _Output) -> _Outcome:
    if check.kind == "regex":
        match = _compiled(check.pattern).search(output.text)
        if match is None:
            return CheckStatus.FAIL, f"nothing matches {as_written(check.pattern)}", []
        where = _where(output.locate.span(match.start(), 0))
        return CheckStatus.PASS, f"matches {as_written(check.pattern)} at {where}", []
    spans = [(m.start(), m.end()) for m in _compiled(check.pattern).finditer(output.text)]
    if not spans:
        return CheckStatus.PASS, f"nothing matches {as_written(check.pattern)}", []
    return CheckStatus.FAIL, f"matches {as_written(check.pattern)} {_times(len(spans))}", spans


def _length(check: LengthCheck, rule: Rule, output: _Output) -> _Outcome:
    limit = check.limit
    if check.kind == "max_chars":
        size = len(output.text)
        if size <= limit:
            return CheckStatus.PASS, f"{size:,} characters, within the limit of {limit:,}", []
        return CheckStatus.FAIL, f"{size:,} characters, over the limit of {limit:,}", [(limit, size)]
    words = output.words
    if check.kind == "min_words":
        if len(words) >= limit:
            return CheckStatus.PASS, f"{len(words):,} words, at least {limit:,}", []
        return CheckStatus.FAIL, f"{len(words):,} words, fewer than the minimum of {limit:,}", []
    if len(words) <= limit:
        return CheckStatus.PASS, f"{len(words):,} words, within the limit of {limit:,}", []
    beyond = (words[limit][0], words[-1][1])
    return CheckStatus.FAIL, f"{len(words):,} words, over the limit of {limit:,}", [beyond]


class _NotJson(ValueError):
    """A JSON text norma refuses although Python's parser reads it (NaN, Infinity)."""


def _refuse_constant(name: str) -> Any:
    raise _NotJson(f"{name} is not a JSON value")


def _parse(text: str) -> tuple[Any, str | None, int | None]:
    """``(value, None, None)``, or ``(None, why, offset of the error in text or None)``."""
    try:
        return json.loads(text, parse_constant=_refuse_constant), None, None
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg}", exc.pos
    except _NotJson as exc:
        return None, str(exc), None
    except RecursionError:
        return None, "nests too deeply to parse", None
    except ValueError:  # an integer of more than 4,300 digits
        return None, "holds a number too long to read", None


def _first_fence(text: str) -> tuple[int, int, int] | None:
    """``(fence, start, end)`` of the first fenced code block marked ``json`` (any case) or not marked: the offset
    of its opening fence, and its content without the line break before the closing fence."""
    offset = 0
    inside: str | None = None
    fence = content_start = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if inside is None:
            if stripped.startswith("```"):
                inside = stripped[3:].strip().lower()
                fence, content_start = offset, offset + len(line)
        elif stripped == "```":
            if inside in ("json", ""):
                content = text[content_start:offset]
                return fence, content_start, content_start + len(content.rstrip("\r\n"))
            inside = None
        offset += len(line)
    return None


def _json(check: JsonCheck, rule: Rule, output: _Output) -> _Outcome:
    text = output.text
    start, end = 0, len(text)
    value, why, at = _parse(text)
    what = "the output"
    if why is not None:
        fence = _first_fence(text)
        if fence is not None:
            opening, start, end = fence
            what = f"the fenced block at line {output.locate.span(opening, opening).line}"
            value, why, at = _parse(text[start:end])
    if why is not None:
        if at is None:
            return CheckStatus.FAIL, f"{what} is not JSON: {why}", []
        spot = (start + at, min(start + at + 1, end))
        return CheckStatus.FAIL, f"{what} is not JSON: {why} at {_where(output.locate.span(*spot))}", [spot]
    if check.json_schema is None:
        return CheckStatus.PASS, f"{what} is JSON", []
    from jsonschema.exceptions import best_match
    from jsonschema.validators import validator_for
    from referencing.exceptions import Unresolvable

    validator = validator_for(check.json_schema)(check.json_schema)
    try:
        error = best_match(validator.iter_errors(value))
    except Unresolvable as exc:
        return CheckStatus.SKIP, f"the schema cannot be used: unresolvable reference {exc}", []
    if error is None:
        return CheckStatus.PASS, f"{what} is JSON that the schema accepts", []
    where = error.json_path
    message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
    return CheckStatus.FAIL, f"{what} does not match the schema: at {where}: {message}", [(start, end)]


def _no_pii(check: NoPiiCheck, rule: Rule, output: _Output) -> _Outcome:
    found = find_pii(output.text, check.kinds)
    if not found:
        return CheckStatus.PASS, f"no {', '.join(PII_LABELS[k] for k in check.kinds)} found", []
    counts: dict[str, int] = {}
    for kind, _, _ in found:
        counts[kind] = counts.get(kind, 0) + 1
    listed = ", ".join(f"{PII_LABELS[k]} ({_times(n)})" for k, n in counts.items())
    return CheckStatus.FAIL, f"personal data found: {listed}", [(a, b) for _, a, b in found]


def _judge(check: JudgeCheck, rule: Rule, output: _Output) -> _Outcome:
    if output.judge is None:
        return CheckStatus.SKIP, NO_LLM, []
    criterion = check.criterion or rule.action_text
    try:
        verdict = output.judge.judge(output.text, criterion, message=output.message, votes=check.votes)
    except BackendError as exc:  # a reply that is not a verdict (JudgeError), or an LLM that did not answer
        return CheckStatus.SKIP, f"{JUDGE_FAILED}: {exc}", []
    said = "pass" if verdict.passed else "fail"
    message = f"judge {verdict.model} says {said}, score {verdict.score:.2f} ({verdict.spread()}): {verdict.reason}"
    return (CheckStatus.PASS if verdict.passed else CheckStatus.FAIL), message, []


_EVALUATORS: dict[str, Callable[[Any, Rule, _Output], _Outcome]] = {
    "contains": _contains,
    "not_contains": _contains,
    "regex": _regex,
    "not_regex": _regex,
    "max_chars": _length,
    "max_words": _length,
    "min_words": _length,
    "json": _json,
    "no_pii": _no_pii,
    "judge": _judge,
}
"""The evaluator of each check kind."""


def _result(rule: Rule, check: Check, outcome: _Outcome, output: _Output) -> CheckResult:
    status, message, found = outcome
    if len(found) > MAX_EVIDENCE:
        message = f"{message} (the first {MAX_EVIDENCE} shown)"
    spans = [
        output.locate.span(a, b, text=mask(output.text[a:b]) if check.kind == "no_pii" else None)
        for a, b in found[:MAX_EVIDENCE]
    ]
    return _check_result(rule, check, status, message, evidence=tuple(spans))


def _check_result(rule: Rule, check: Check, status: CheckStatus, message: str, **more: Any) -> CheckResult:
    """A result of ``check`` of ``rule``: its ids, kind, severity and weight, with ``status`` and ``message``."""
    return CheckResult(
        rule_id=rule.id,
        check_id=check.id,
        kind=check.kind,
        severity=check.severity,
        weight=check.weight,
        status=status,
        message=message,
        **more,
    )


class CheckedOutput:
    """One output checked against any number of rules: what their checks share (the output's folded text, its words,
    its line index, whether it is valid Unicode) is computed once, on first use, for all of them.

    :func:`evaluate_checks` is ``CheckedOutput(output, message=message, judge=judge).evaluate(rule, ...)``; a turn
    check (:meth:`norma.turns.Norma.check`) makes one per output and evaluates each rule with it. Holds nothing but
    this output: safe to share between threads.
    """

    __slots__ = ("_message_ok", "_output", "_unicode", "judge", "message", "output")

    def __init__(self, output: str, *, message: str | None = None, judge: Judge | None = None) -> None:
        self.output = output
        self.message = message
        self.judge = judge
        self._output: _Output | None = None  # made once the output is known to be valid
        self._unicode: bool | None = None
        self._message_ok: bool | None = None

    def evaluate(self, rule: Rule, *, matched: bool, neighbour: str | None = None) -> list[CheckResult]:
        """The results of ``rule``'s checks that apply to this output: see :func:`evaluate_checks`."""
        text = self._valid(rule)
        with trace_span("norma.checks", {"norma.rule.id": rule.id}) as traced:
            results = []
            for check in rule.checks:
                applies = check.applies
                if not matched and applies is not When.ALWAYS:
                    continue
                if matched and neighbour is not None and applies is When.ENFORCED:
                    results.append(_not_enforced(rule, check, neighbour))
                else:
                    results.append(_result(rule, check, _EVALUATORS[check.kind](check, rule, text), text))
            if traced.recording:
                traced.set(span_attributes(results))
                traced.content("norma.output", text.text)
        return results

    def _valid(self, rule: Rule) -> _Output:
        """The output with what its checks share, once it is known to be text and valid Unicode, and the message
        too (errors name ``rule``, the first rule evaluated)."""
        output = self.output
        if not isinstance(output, str):
            raise InvalidInputError(
                f"the output to check must be text, not {type(output).__name__}", hint="pass the AI output as a str"
            )
        if self._unicode is None:
            self._unicode = is_unicode(output)
        if not self._unicode:
            raise InvalidInputError(
                "the output to check is not valid Unicode (it holds a lone surrogate such as \\ud800)",
                source=f"rule {rule.id!r}",
                hint="decode the output as UTF-8 before checking it",
            )
        message = self.message
        if message is not None:
            if self._message_ok is None:
                self._message_ok = isinstance(message, str) and is_unicode(message)
            if not self._message_ok:
                raise InvalidInputError(
                    "the user's message must be valid Unicode text", source=f"rule {rule.id!r}", location="message"
                )
        shared = self._output
        if shared is None:
            shared = self._output = _Output(output, message, self.judge)
        return shared


def evaluate_checks(
    rule: Rule,
    output: str,
    *,
    matched: bool,
    message: str | None = None,
    judge: Judge | None = None,
    neighbour: str | None = None,
) -> list[CheckResult]:
    """The results of ``rule``'s checks that apply to ``output``, in the rule's order.

    Which checks apply (:attr:`~norma.rules.Check.applies`): when the rule is not ``matched``, the ``always`` ones;
    when it matched and governs the turn, all of them; when it matched only as a neighbour (``neighbour``: why, in
    words, as :class:`~norma.matching.Enforcement` gives it), the ``matched`` and ``always`` ones, and each
    ``enforced`` one is reported ``skip`` ("the rule matched only as a neighbour: ...", ``enforced`` False), never
    dropped. Checks that do not apply otherwise are left out (``skip`` means a check applied but could not be
    decided). Pure and linear in the length of the output, but for ``judge`` checks: with a ``judge``, each asks it
    whether the output follows the check's ``criterion`` (else the rule's ``action_text``), given the user's
    ``message``, with the check's ``votes`` (each vote not cached is one model call); without one, or when the model
    fails or its reply is not a verdict, the check is ``skip`` with the reason, never ``pass``.

    Raises:
        InvalidInputError: ``output`` or ``message`` is not text, or not valid Unicode (a lone surrogate).
    """
    return CheckedOutput(output, message=message, judge=judge).evaluate(rule, matched=matched, neighbour=neighbour)


def _not_enforced(rule: Rule, check: Check, why: str) -> CheckResult:
    message = f"the rule matched only as a neighbour ({why}): a requirement applies when the rule governs the turn"
    return _check_result(rule, check, CheckStatus.SKIP, message, enforced=False)
