"""What a rulebook change does (issue #60): every recorded turn checked against two versions of the rules.

:func:`diff_turns` checks each turn against OLD and NEW as :meth:`Norma.check` would, and reports what changed
(``_diff_report.py``). Two things make it cost little more than one check of the turns:

* each message is embedded once, for both (the same encoder is required), chunk by chunk, and matched by each
  version's matcher from that vector;
* a rule identical in both (the same :class:`~norma.rules.Rule` content, tenant aside) that has the same status
  in the turn (governs, neighbour, not matched) is evaluated once: NEW's report reuses OLD's results of its checks
  (``judge`` checks are the expensive ones). The results are those of checking twice: a check's result depends on
  the rule, the output, the message, the judge and that status only; a neighbour's skipped requirements, whose
  reason quotes its confidence, are written again for NEW's confidence.

``norma.open(tenant=..., version=N)`` opens a stored tenant at one of its past versions (``_versions.py``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from norma.checks import CheckedOutput, CheckResult
from norma.errors import InvalidInputError, LimitExceededError
from norma.matching import MatchResult, SessionState, embed_messages
from norma.rules import Rule, When
from norma.turns._checker import Turn, TurnChecker, _turns
from norma.turns._diff_report import (
    REWARD_TOLERANCE,
    ChangeKind,
    EditKind,
    RulebookDiff,
    RulebookSide,
    RuleEdit,
    RuleImpact,
    RuleMove,
    RuleStatus,
    TurnChange,
    worst_first,
)
from norma.turns._opened import Opened
from norma.turns._report import TurnReport

if TYPE_CHECKING:
    from norma.embeddings import Embedder
    from norma.llm import Judge
    from norma.matching import MatchConfig

__all__ = ["diff_turns"]

CHUNK = 512
"""Turns embedded and matched together (one embedding call for both versions), taken in order of message length:
the encoder pads each batch to its longest text, so similar lengths pad least (about a fifth less time than chunks in
input order on 2,000 BANKING77 messages)."""

CheckedTurn = tuple[str, str, SessionState | None]
"""A turn checked: message, output, session."""

Progress = Callable[[int, int], None]
"""Called with (turns done, turns in all) after each chunk."""


class _Shared(CheckedOutput):
    """One output as OLD and NEW check it: a rule in ``same`` (identical in both) evaluated once with a status is
    not evaluated again with that status; ``reused`` counts the evaluations saved."""

    __slots__ = ("_done", "reused", "same")

    def __init__(self, output: str, *, message: str | None, judge: Judge | None, same: frozenset[str]) -> None:
        super().__init__(output, message=message, judge=judge)
        self.same = same
        self.reused = 0
        self._done: dict[tuple[str, bool, bool], tuple[str | None, list[CheckResult]]] = {}

    def evaluate(self, rule: Rule, *, matched: bool, neighbour: str | None = None) -> list[CheckResult]:
        if rule.id not in self.same:
            return super().evaluate(rule, matched=matched, neighbour=neighbour)
        key = (rule.id, matched, neighbour is not None)
        done = self._done.get(key)
        if done is None:
            results = super().evaluate(rule, matched=matched, neighbour=neighbour)
            self._done[key] = (neighbour, results)
            return results
        self.reused += 1
        said, results = done
        if said == neighbour:
            return list(results)
        # a neighbour both times, at another confidence: its requirements' skip reason quotes the new one
        enforced = tuple(check for check in rule.checks if check.applies is When.ENFORCED)
        fresh = iter(super().evaluate(rule.model_copy(update={"checks": enforced}), matched=True, neighbour=neighbour))
        return [
            next(fresh) if check.applies is When.ENFORCED else result
            for check, result in zip(rule.checks, results, strict=True)
        ]


class _Sharing(TurnChecker):
    """A copy of a version's checker whose report of a turn evaluates its rules on the output it is handed
    (:meth:`report_on`), so that OLD's and NEW's reports of one turn share one :class:`_Shared`. One turn at a
    time: :func:`diff_turns` checks them in turn."""

    def __init__(self, base: TurnChecker) -> None:
        super().__init__(
            base.matcher,
            judge=base.judge,
            audit=base.audit,
            documents=base.documents,
            audit_config=base.audit_config,
            rules_version=base.rules_version,
        )
        self._given: CheckedOutput | None = None

    def _output(self, message: str, output: str) -> CheckedOutput:
        return self._given if self._given is not None else super()._output(message, output)

    def report_on(self, evaluated: CheckedOutput, message: str, output: str, result: MatchResult) -> TurnReport:
        """:meth:`report` of the turn, its checks evaluated on ``evaluated``."""
        self._given = evaluated
        try:
            return self.report(message, output, result)
        finally:
            self._given = None


def _changed_fields(old: Rule, new: Rule) -> tuple[str, ...]:
    """The fields in which two rules of one id differ (the tenant aside: a file's rules and a tenant's compare)."""
    if old == new:
        return ()
    return tuple(
        name for name in type(new).model_fields if name != "tenant_id" and getattr(old, name) != getattr(new, name)
    )


def _embedder(side: Opened) -> Embedder:
    return side.embedder if side.embedder is not None else side.matcher.embedder


def _vectors(embedder: Embedder, messages: list[str], config: MatchConfig) -> list[np.ndarray]:
    """The messages' query vectors, as the matcher would embed them (long messages in windows), in one call."""
    vectors = embed_messages(embedder, messages, config)
    # an empty message has no vector: the matcher ignores the one given for it (and turns have no empty message)
    return [v if v is not None else np.zeros((1, embedder.dim), dtype=np.float32) for v in vectors]


def _output(message: str, output: str, judge: Judge | None, same: frozenset[str]) -> _Shared:
    """The output as a version's checker would make it (the message goes to the judge only), shared."""
    return _Shared(output, message=None if judge is None else message, judge=judge, same=same)


def _checked(turns: Iterable[Turn], old: Opened, new: Opened) -> tuple[list[CheckedTurn], list[Any]]:
    """Every turn checked as :meth:`Norma.check_many` checks them, and within both matchers' size limit, before any
    is matched; and each turn record's ``id``."""
    items: Any = turns if isinstance(turns, str | bytes | Mapping) else list(turns)
    checked = _turns(items)  # refuses what is not a list of turns
    limit = min(old.matcher.config.max_message_chars, new.matcher.config.max_message_chars)
    for index, (message, _, _) in enumerate(checked):
        if len(message) > limit:
            raise LimitExceededError(
                f"the message is {len(message):,} characters, over the limit of {limit:,}",
                location=f"turns[{index}].message",
                hint="shorten the message, or raise MatchConfig.max_message_chars",
            )
    ids = [item.get("id") if isinstance(item, Mapping) else None for item in items]
    return checked, ids


def diff_turns(old: Opened, new: Opened, turns: Iterable[Turn], *, progress: Progress | None = None) -> RulebookDiff:
    """Check every turn against ``old`` and ``new`` (each as :meth:`Norma.check` would) and report what changed.

    Args:
        old: the rules before (:func:`norma.open` a rulebook file, or a stored tenant; :func:`open_version` for a
            past version of one).
        new: the rules after.
        turns: as :meth:`Norma.check_many` takes them: ``(message, output)`` pairs, ``(message, output, session)``
            triples or turn records (``{"message", "output", "session"?, "id"?}``, as ``norma check --batch`` reads
            them; the ``id`` is reported).
        progress: called with (turns done, turns in all) as the turns are checked.

    Each message is embedded once for both (a chunk of turns at a time) and a rule identical in both, with the same
    status in the turn, is evaluated once: see the module docstring. Judge checks use each version's judge; the
    two share the evaluations only when they share the judge (open the second with ``judge=old.judge``).

    Returns:
        A :class:`~norma.turns.RulebookDiff`: the summary, the turns that changed (worst first) with the evidence,
        the rule edits and each rule's impact; ``to_dict()`` documents its JSON.

    Raises:
        InvalidInputError: ``old`` or ``new`` is not a :class:`Norma`; the two embed with different models; turn
            ``i`` is not a turn (``location``: ``turns[i]``, ``turns[i].message``...). Nothing is checked then.
        LimitExceededError: a message longer than a matcher accepts (``location``: ``turns[i].message``).
    """
    changes: list[TurnChange] = []
    reused = count = 0
    for pair in check_both(old, new, turns, progress=progress):
        count += 1
        reused += pair.reused
        change = turn_change(pair.index, pair.id, pair.message, pair.old, pair.new)
        if change is not None:
            changes.append(change)
    return _diff(old, new, count, changes, reused)


@dataclass(frozen=True)
class Pair:
    """One turn checked against both versions: its reports, and how many of NEW's rule evaluations were OLD's."""

    index: int
    id: Any
    message: str
    old: TurnReport
    new: TurnReport
    reused: int


def check_both(old: Opened, new: Opened, turns: Iterable[Turn], *, progress: Progress | None = None) -> Iterator[Pair]:
    """Each turn's reports under ``old`` and ``new``, computed as :func:`diff_turns` says (each message embedded
    once, identical rules with the same status evaluated once), by chunks of turns of similar message length: not in
    input order (:attr:`Pair.index` says where each turn is). Every turn is checked before the first is matched.
    What :func:`diff_turns` compares."""
    for name, side in (("old", old), ("new", new)):
        if not isinstance(side, Opened):
            raise InvalidInputError(
                f"{name} must be a Norma (norma.open(...)), not {type(side).__name__}",
                location=name,
                hint="norma.open('rules.yaml'), or norma.open(tenant='acme', store=URL)",
            )
    old_embedder, new_embedder = _embedder(old), _embedder(new)
    if old_embedder.model_id != new_embedder.model_id:
        raise InvalidInputError(
            f"the two rulebooks embed with different models ({old_embedder.model_id} and {new_embedder.model_id}): "
            "their matches cannot be compared",
            location="new",
            hint="open both with the same encoder ($NORMA_MODEL_DIR, or none for the default model)",
        )
    checked, ids = _checked(turns, old, new)
    return _pairs(old, new, checked, ids, progress)


def _pairs(
    old: Opened, new: Opened, checked: list[CheckedTurn], ids: list[Any], progress: Progress | None
) -> Iterator[Pair]:
    after = {rule.id: rule for rule in new.rules}
    same = frozenset(r.id for r in old.rules if r.id in after and not _changed_fields(r, after[r.id]))
    shared_judge = old.judge is new.judge
    old_checker, new_checker = _Sharing(old._checker), _Sharing(new._checker)
    old_config, new_config = old.matcher.config, new.matcher.config
    windows = (old_config.long_messages, old_config.max_chunks)
    same_windows = windows == (new_config.long_messages, new_config.max_chunks)
    order = sorted(range(len(checked)), key=lambda i: len(checked[i][0]))  # similar lengths: less padding
    for start in range(0, len(order), CHUNK):
        positions = order[start : start + CHUNK]
        chunk = [checked[i] for i in positions]
        messages = [message for message, _, _ in chunk]
        sessions = [session for _, _, session in chunk]
        vectors = _vectors(_embedder(old), messages, old_config)
        new_vectors = vectors if same_windows else _vectors(_embedder(new), messages, new_config)
        old_results = old.matcher.match_many(messages, sessions, query_vectors=vectors)
        new_results = new.matcher.match_many(messages, sessions, query_vectors=new_vectors)
        for index, (message, output, _), old_result, new_result in zip(
            positions, chunk, old_results, new_results, strict=True
        ):
            evaluated = _output(message, output, old.judge, same)
            old_report = old_checker.report_on(evaluated, message, output, old_result)
            if not shared_judge:  # each version's judge decides its judge checks: nothing is shared
                evaluated = _output(message, output, new.judge, frozenset())
            new_report = new_checker.report_on(evaluated, message, output, new_result)
            yield Pair(index, ids[index], message, old_report, new_report, evaluated.reused)
        if progress is not None:
            progress(start + len(chunk), len(checked))


def _status(report: TurnReport) -> dict[str, tuple[RuleStatus, float | None]]:
    """Each rule the turn matched: whether it governs, and its confidence that it does."""
    found: dict[str, tuple[RuleStatus, float | None]] = {}
    for match in report.matches:
        status = RuleStatus.GOVERNS if match.enforced else RuleStatus.NEIGHBOUR
        found[match.rule_id] = (status, match.enforcement.confidence)
    return found


def _reward_moved(old: float | None, new: float | None) -> bool:
    if old is None or new is None:
        return (old is None) != (new is None)
    return abs(old - new) > REWARD_TOLERANCE


def turn_change(index: int, turn_id: Any, message: str, old: TurnReport, new: TurnReport) -> TurnChange | None:
    """What changed in one turn between OLD's report and NEW's (None: nothing that counts, see
    ``_diff_report.py``)."""
    before, after = _status(old), _status(new)
    absent: tuple[RuleStatus, float | None] = (RuleStatus.NOT_MATCHED, None)
    moves = tuple(
        RuleMove(rule_id, b[0], a[0], b[1], a[1])
        for rule_id in sorted(before.keys() | after.keys())
        if (b := before.get(rule_id, absent))[0] is not (a := after.get(rule_id, absent))[0]
    )
    failed_before = {(r.rule_id, r.check_id): r for r in old.failures}
    failed_after = {(r.rule_id, r.check_id): r for r in new.failures}
    added = tuple(r for key, r in failed_after.items() if key not in failed_before)
    removed = tuple(r for key, r in failed_before.items() if key not in failed_after)
    quiet = not moves and not added and not removed and old.verdict is new.verdict
    if quiet and not _reward_moved(old.reward, new.reward):
        return None

    def governing(found: dict[str, tuple[RuleStatus, float | None]], other: dict[str, Any]) -> tuple[str, ...]:
        return tuple(r for r, (s, _) in found.items() if s is RuleStatus.GOVERNS and other.get(r, absent)[0] is not s)

    return TurnChange(
        index=index,
        id=turn_id,
        message=message,
        kind=ChangeKind.of(old.verdict, new.verdict),
        old_verdict=old.verdict,
        new_verdict=new.verdict,
        old_reward=old.reward,
        new_reward=new.reward,
        governs_added=governing(after, before),
        governs_removed=governing(before, after),
        matched_added=tuple(r for r in after if r not in before),
        matched_removed=tuple(r for r in before if r not in after),
        moves=moves,
        failures_added=added,
        failures_removed=removed,
        old_report=old,
        new_report=new,
    )


def rule_edits(old: Sequence[Rule], new: Sequence[Rule]) -> list[tuple[str, EditKind, tuple[str, ...]]]:
    """``(rule id, edit, fields changed)`` of each rule added, removed or changed between two rule sets, by id."""
    before, after = {r.id: r for r in old}, {r.id: r for r in new}
    edits: list[tuple[str, EditKind, tuple[str, ...]]] = []
    for rule_id in sorted(before.keys() | after.keys()):
        if rule_id not in after:
            edits.append((rule_id, EditKind.REMOVED, ()))
        elif rule_id not in before:
            edits.append((rule_id, EditKind.ADDED, ()))
        elif fields := _changed_fields(before[rule_id], after[rule_id]):
            edits.append((rule_id, EditKind.CHANGED, fields))
    return edits


def _impacts(changes: Sequence[TurnChange], edit_of: Mapping[str, EditKind]) -> tuple[RuleImpact, ...]:
    """Each rule involved in a change, with its counts; the most involved first, then by id."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0] * 6)
    for change in changes:
        for move in change.moves:
            found = counts[move.rule_id]
            found[0] += move.new is RuleStatus.GOVERNS and move.old is not RuleStatus.GOVERNS
            found[1] += move.old is RuleStatus.GOVERNS and move.new is not RuleStatus.GOVERNS
            found[2] += move.old is RuleStatus.NOT_MATCHED
            found[3] += move.new is RuleStatus.NOT_MATCHED
        for rule_id in {r.rule_id for r in change.failures_added}:
            counts[rule_id][4] += 1
        for rule_id in {r.rule_id for r in change.failures_removed}:
            counts[rule_id][5] += 1
    impacts = [RuleImpact(rule_id, edit_of.get(rule_id), *found) for rule_id, found in counts.items()]
    return tuple(sorted(impacts, key=lambda impact: (-impact.size, impact.rule_id)))


def _side(side: Opened) -> RulebookSide:
    source = None if side.source is None else str(side.source)
    version = side.rules_version if source is None else None
    return RulebookSide(source, side.tenant_id, version, len(side.matcher))


def _diff(old: Opened, new: Opened, turns: int, changes: list[TurnChange], reused: int) -> RulebookDiff:
    found = rule_edits(old.rules, new.rules)
    edits = tuple(
        RuleEdit(rule_id, edit, fields, sum(rule_id in change.rule_ids for change in changes))
        for rule_id, edit, fields in found
    )
    edit_of = {rule_id: edit for rule_id, edit, _ in found}
    return RulebookDiff(
        old=_side(old),
        new=_side(new),
        turns=turns,
        changes=worst_first(changes),
        edits=edits,
        rules=_impacts(changes, edit_of),
        reused=reused,
    )
