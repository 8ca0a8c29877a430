"""Asserting that a message matches given rules of a rulebook (:class:`norma.matching.RuleMatcher`)."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from norma.testing._failures import MatchAssertionError

if TYPE_CHECKING:
    from norma.matching import MatchResult, RuleMatcher, SessionState
    from norma.turns import Norma

__all__ = ["assert_matches", "rulebook_matcher"]


def rulebook_matcher(path: str | os.PathLike[str]) -> RuleMatcher:
    """A rulebook file's matcher (opened with :func:`norma.open`), kept in memory while the file is unchanged
    (:meth:`Norma.fresh <norma.turns.Norma.fresh>`): the tests of one session that name the same file share one
    matcher."""
    return _opened(Path(path).resolve()).matcher


_KEPT = 8
"""How many rulebook files :func:`rulebook_matcher` keeps open."""


class _Opened:
    """The rulebooks the session opened, by resolved path, the most recently used last."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_path: dict[Path, Norma] = {}


@functools.cache
def _session() -> _Opened:
    return _Opened()


def _opened(path: Path) -> Norma:
    from norma.turns import open as open_rules

    kept = _session()
    with kept.lock:
        found = kept.by_path.pop(path, None)
        opened = found.fresh() if found is not None else open_rules(path, judge=None)  # the reader reports a bad file
        kept.by_path[path] = opened
        while len(kept.by_path) > _KEPT:
            kept.by_path.pop(next(iter(kept.by_path)))
        return opened


def assert_matches(
    message: str,
    rule_ids: str | Iterable[str],
    *,
    rules: RuleMatcher | str | os.PathLike[str],
    exactly: bool = False,
    session: SessionState | Mapping[str, Any] | None = None,
    tags: Iterable[str] | None = None,
) -> MatchResult:
    """Assert that ``message`` matches every rule of ``rule_ids`` (with ``exactly``: those and no other).

    ``exactly=True`` with no ids asserts that the message matches nothing.

    Args:
        message: the user's message.
        rule_ids: one rule id or several.
        rules: a :class:`~norma.matching.RuleMatcher` (the ``norma_rules`` fixture), or a rulebook file (YAML or
            JSON), compiled once per file and session (:func:`rulebook_matcher`).
        exactly: fail on matched rules that are not in ``rule_ids`` too.
        session: the conversation (:class:`~norma.matching.SessionState` or a mapping of its fields: the active
            scenario and step, the turn, what already fired).
        tags: only rules with at least one of these tags are candidates.

    Returns:
        The :class:`~norma.matching.MatchResult`, explained (``dropped`` says why each other rule is left out).

    Raises:
        MatchAssertionError: an expected rule that did not match (the message says why: scope, threshold, ...), or
            with ``exactly``, one that matched unexpectedly; every matched rule is listed with its scores.
        InvalidInputError: a rule id the rulebook does not have, or a bad session.
        RulebookError: a rulebook file that cannot be read.
    """
    __tracebackhide__ = True
    from norma.errors import InvalidInputError
    from norma.matching import RuleMatcher, SessionState

    matcher = rules if isinstance(rules, RuleMatcher) else rulebook_matcher(rules)
    expected = [rule_ids] if isinstance(rule_ids, str) else list(dict.fromkeys(rule_ids))
    unknown = [rule_id for rule_id in expected if rule_id not in matcher]
    if unknown:
        known = ", ".join(rule.id for rule in matcher.rules)
        raise InvalidInputError(
            f"no rule {', '.join(map(repr, unknown))} in the rulebook", location="rule_ids", hint=f"its rules: {known}"
        )
    state = SessionState.from_mapping(session) if isinstance(session, Mapping) else session
    result = matcher.match(message, state, explain=True, tags=tags)
    matched = [m.rule.id for m in result]
    missing = [rule_id for rule_id in expected if rule_id not in matched]
    unexpected = [rule_id for rule_id in matched if rule_id not in expected] if exactly else []
    if not missing and not unexpected:
        return result
    wanted = ("exactly " if exactly else "") + (", ".join(expected) or "no rule")
    summary = f"{message!r} matched {', '.join(matched) or 'no rule'}; expected {wanted}"
    dropped = {d.rule_id: d for d in result.dropped}
    priority = {rule.id: rule.priority for rule in matcher.rules}
    details = []
    for rule_id in missing:
        why = dropped.get(rule_id)
        reason = f"{why.reason}: {why.detail}" if why else "not among the message's nearest rules"
        details.append(f"missing {rule_id} (priority {priority[rule_id]}): {reason}")
    for m in result:
        label = "unexpected" if m.rule.id in unexpected else "matched"
        details.append(
            f"{label} {m.rule.id} (priority {m.rule.priority}): final {m.final_score:.3f}, "
            f"similarity {m.similarity_score:.3f}, bm25 {m.bm25_score:.3f}"
        )
    if result.gate is not None:
        details.append(f"gate: {result.gate.description}")
    raise MatchAssertionError(summary, details, result)
