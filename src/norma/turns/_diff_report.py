"""What a rulebook change does to recorded turns, as :func:`~norma.turns.diff_turns` reports it: each turn that
changed (its verdict, reward, governing and matched rules, failing checks, with the evidence), grouped by rule and
by rule edit, and the totals.

A turn *changed* when its verdict, its reward, the rules that govern it, the rules it matched or its failing checks
(rule and check ids) differ between OLD and NEW; a confidence that moved without changing what governs is no change.
Its :class:`ChangeKind` reads the verdicts: ``newly_failing`` (NEW says fail, OLD did not), ``newly_passing`` (NEW
says pass, OLD did not), ``newly_skipped`` (NEW says skip, OLD did not), ``same_verdict`` (something else moved).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from norma.checks import CheckResult
from norma.errors import InvalidInputError
from norma.rules import Verdict
from norma.turns._report import TurnReport

__all__ = [
    "ChangeKind",
    "DiffFailOn",
    "EditKind",
    "RuleEdit",
    "RuleImpact",
    "RuleMove",
    "RuleStatus",
    "RulebookDiff",
    "RulebookSide",
    "TurnChange",
]

REWARD_TOLERANCE = 1e-9
"""Rewards closer than this are the same reward (the same scores summed in another rule order)."""


class RuleStatus(enum.StrEnum):
    """What a rule is to a turn: it ``governs`` it (its requirements apply), it matched as a ``neighbour`` (relevant,
    its requirements not enforced), or it was ``not_matched``."""

    GOVERNS = "governs"
    NEIGHBOUR = "neighbour"
    NOT_MATCHED = "not_matched"


class ChangeKind(enum.StrEnum):
    """How a turn's verdict moved (see the module docstring)."""

    NEWLY_FAILING = "newly_failing"
    NEWLY_PASSING = "newly_passing"
    NEWLY_SKIPPED = "newly_skipped"
    SAME_VERDICT = "same_verdict"

    @classmethod
    def of(cls, old: Verdict, new: Verdict) -> ChangeKind:
        """The kind of a turn whose verdict went from ``old`` to ``new``."""
        if old is new:
            return cls.SAME_VERDICT
        return {Verdict.FAIL: cls.NEWLY_FAILING, Verdict.PASS: cls.NEWLY_PASSING}.get(new, cls.NEWLY_SKIPPED)


class EditKind(enum.StrEnum):
    """A rule's edit between OLD and NEW (rules compared by id)."""

    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


class DiffFailOn(enum.StrEnum):
    """What change of the turns fails a diff (``norma rules diff --fail-on``, exit 1)."""

    NEWLY_FAILING = "newly-failing"
    """A turn that did not fail fails now."""
    VERDICT_CHANGE = "verdict-change"
    """A turn's verdict changed, whichever way."""
    NEVER = "never"
    """Nothing: the diff informs."""


@dataclass(frozen=True)
class RuleMove:
    """A rule whose status in a turn differs between OLD and NEW, with its confidence that it governs the message
    under each (None where it did not match)."""

    rule_id: str
    old: RuleStatus
    new: RuleStatus
    old_confidence: float | None
    new_confidence: float | None

    def to_dict(self) -> dict[str, Any]:
        """``{"rule_id", "old", "new", "old_confidence", "new_confidence"}``."""
        return {
            "rule_id": self.rule_id,
            "old": self.old.value,
            "new": self.new.value,
            "old_confidence": self.old_confidence,
            "new_confidence": self.new_confidence,
        }


@dataclass(frozen=True)
class TurnChange:
    """One turn that changed: what moved, and the evidence (the checks that newly fail or no longer fail, the rules
    whose status moved with their confidences); both full reports are kept (not in :meth:`to_dict`)."""

    index: int
    """The turn's position in the turns given (0-based)."""
    id: Any
    """The turn record's ``id``, when it has one."""
    message: str
    kind: ChangeKind
    old_verdict: Verdict
    new_verdict: Verdict
    old_reward: float | None
    new_reward: float | None
    governs_added: tuple[str, ...]
    """Rules that govern the turn under NEW, not under OLD (in NEW's match order)."""
    governs_removed: tuple[str, ...]
    matched_added: tuple[str, ...]
    """Rules the message matched under NEW (governing or as neighbours), not under OLD."""
    matched_removed: tuple[str, ...]
    moves: tuple[RuleMove, ...]
    """Each rule whose status moved (governs / neighbour / not matched), by id."""
    failures_added: tuple[CheckResult, ...]
    """Checks that fail under NEW and did not under OLD (by rule and check id)."""
    failures_removed: tuple[CheckResult, ...]
    """Checks that failed under OLD and do not under NEW."""
    old_report: TurnReport = field(repr=False, compare=False)
    new_report: TurnReport = field(repr=False, compare=False)

    @property
    def reward_drop(self) -> float:
        """How much the reward fell (negative: it rose); 0 when either is None."""
        if self.old_reward is None or self.new_reward is None:
            return 0.0
        return self.old_reward - self.new_reward

    @property
    def rule_ids(self) -> frozenset[str]:
        """The rules this change involves: those whose status moved or whose checks newly fail or no longer fail."""
        failing = {r.rule_id for r in (*self.failures_added, *self.failures_removed)}
        return frozenset({m.rule_id for m in self.moves} | failing)

    def to_dict(self) -> dict[str, Any]:
        """See :meth:`RulebookDiff.to_dict`."""
        return {
            "index": self.index,
            "id": self.id,
            "message": self.message,
            "change": self.kind.value,
            "verdict": {"old": self.old_verdict.value, "new": self.new_verdict.value},
            "reward": {"old": self.old_reward, "new": self.new_reward},
            "governs": {"added": list(self.governs_added), "removed": list(self.governs_removed)},
            "matched": {"added": list(self.matched_added), "removed": list(self.matched_removed)},
            "moves": [move.to_dict() for move in self.moves],
            "failures": {
                "added": [r.model_dump(mode="json") for r in self.failures_added],
                "removed": [r.model_dump(mode="json") for r in self.failures_removed],
            },
        }


@dataclass(frozen=True)
class RuleEdit:
    """A rule added, removed or changed between OLD and NEW, and how many changed turns involve it."""

    rule_id: str
    edit: EditKind
    fields: tuple[str, ...]
    """The fields that changed (``condition_text``, ``examples``, ``checks``, ``priority``...; empty unless
    ``changed``)."""
    turns: int
    """Changed turns in which this rule's status moved or its checks newly fail or no longer fail."""

    def to_dict(self) -> dict[str, Any]:
        """``{"rule_id", "edit", "fields", "turns"}``."""
        return {"rule_id": self.rule_id, "edit": self.edit.value, "fields": list(self.fields), "turns": self.turns}


@dataclass(frozen=True)
class RuleImpact:
    """What one rule does differently over the turns: in how many more (``_gained``) and fewer (``_lost``) turns it
    governs, matches, and has a failing check under NEW than under OLD."""

    rule_id: str
    edit: EditKind | None
    """Its edit, when it was edited (None: the same rule in both; what moved it is another rule's edit)."""
    governs_gained: int = 0
    governs_lost: int = 0
    matched_gained: int = 0
    matched_lost: int = 0
    failing_gained: int = 0
    failing_lost: int = 0

    @property
    def size(self) -> int:
        """Every count added up: what ranks the rules."""
        return (
            self.governs_gained
            + self.governs_lost
            + self.matched_gained
            + self.matched_lost
            + self.failing_gained
            + self.failing_lost
        )

    def describe(self) -> str:
        """``rule `refund` now governs 212 more turns and 3 fewer; matched in 5 more; fails 30 more``."""
        parts = []
        for verb, gained, lost in (
            ("governs", self.governs_gained, self.governs_lost),
            ("is matched in", self.matched_gained, self.matched_lost),
            ("fails", self.failing_gained, self.failing_lost),
        ):
            said = [f"{gained:,} more" if gained else "", f"{lost:,} fewer" if lost else ""]
            if gained or lost:
                parts.append(f"{verb} {' and '.join(s for s in said if s)} turn{'' if gained + lost == 1 else 's'}")
        edit = f" ({self.edit.value})" if self.edit is not None else ""
        return f"rule `{self.rule_id}`{edit} now " + "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """``{"rule_id", "edit", "governs_gained", "governs_lost", "matched_gained", "matched_lost",
        "failing_gained", "failing_lost"}``."""
        return {
            "rule_id": self.rule_id,
            "edit": None if self.edit is None else self.edit.value,
            "governs_gained": self.governs_gained,
            "governs_lost": self.governs_lost,
            "matched_gained": self.matched_gained,
            "matched_lost": self.matched_lost,
            "failing_gained": self.failing_gained,
            "failing_lost": self.failing_lost,
        }


@dataclass(frozen=True)
class RulebookSide:
    """One of the two rulebooks: a file, or a stored tenant at a version."""

    source: str | None
    """The rulebook file (None for a stored tenant)."""
    tenant_id: str
    rules_version: int | None
    """The stored tenant's version (None for a file)."""
    rules: int
    """How many rules it has."""

    @property
    def label(self) -> str:
        """``rules.yaml``, or ``acme@3`` for a tenant's version."""
        return self.source if self.source is not None else f"{self.tenant_id}@{self.rules_version}"

    def to_dict(self) -> dict[str, Any]:
        """``{"source", "tenant", "version", "rules"}``."""
        return {"source": self.source, "tenant": self.tenant_id, "version": self.rules_version, "rules": self.rules}


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


@dataclass(frozen=True)
class RulebookDiff:
    """Every turn checked against OLD and NEW: the turns that changed (worst first: newly failing, then by how
    much the reward fell), the rule edits, and each rule's impact (largest first)."""

    old: RulebookSide
    new: RulebookSide
    turns: int
    """How many turns were checked."""
    changes: tuple[TurnChange, ...]
    edits: tuple[RuleEdit, ...]
    """Rules added, removed or changed, by id."""
    rules: tuple[RuleImpact, ...]
    """Each rule involved in a change, the most involved first."""
    reused: int = 0
    """Rule evaluations of NEW taken from OLD's instead of running its checks again (the rule identical in both,
    with the same status in the turn)."""

    def of_kind(self, kind: ChangeKind) -> tuple[TurnChange, ...]:
        """The changed turns of one kind, worst first."""
        return tuple(change for change in self.changes if change.kind is kind)

    @property
    def counts(self) -> dict[str, int]:
        """``{"turns", "changed", "verdict_changed", "newly_failing", "newly_passing", "newly_skipped",
        "same_verdict", "unchanged"}``."""
        kinds = {kind: len(self.of_kind(kind)) for kind in ChangeKind}
        changed = len(self.changes)
        return {
            "turns": self.turns,
            "changed": changed,
            "verdict_changed": changed - kinds[ChangeKind.SAME_VERDICT],
            **{kind.value: count for kind, count in kinds.items()},
            "unchanged": self.turns - changed,
        }

    def failing(self, policy: DiffFailOn | str) -> bool:
        """Whether the change is refused under ``policy`` (:class:`DiffFailOn`, or its value).

        Raises:
            InvalidInputError: ``policy`` is none of them.
        """
        try:
            chosen = DiffFailOn(policy)
        except ValueError:
            choices = ", ".join(p.value for p in DiffFailOn)
            raise InvalidInputError(f"fail on {policy!r}? One of {choices}", location="policy") from None
        counts = self.counts
        if chosen is DiffFailOn.NEWLY_FAILING:
            return counts["newly_failing"] > 0
        return chosen is DiffFailOn.VERDICT_CHANGE and counts["verdict_changed"] > 0

    def summary(self) -> str:
        """``37 of 2,000 turns change verdict: 30 newly fail, 7 newly pass; 212 more turns change otherwise
        (governing or matched rules, failing checks, reward); 1,751 unchanged.``"""
        c = self.counts
        verdicts = [f"{c['newly_failing']:,} newly fail", f"{c['newly_passing']:,} newly pass"]
        if c["newly_skipped"]:
            verdicts.append(f"{c['newly_skipped']:,} newly skip")
        text = f"{c['verdict_changed']:,} of {_plural(self.turns, 'turn')} change verdict: {', '.join(verdicts)}"
        if c["same_verdict"]:
            text += (
                f"; {c['same_verdict']:,} more {'turn changes' if c['same_verdict'] == 1 else 'turns change'} "
                "otherwise (governing or matched rules, failing checks, reward)"
            )
        return text + f"; {c['unchanged']:,} unchanged."

    def edits_summary(self) -> str:
        """``rule edits: 1 added, 1 removed, 3 changed`` (``no rule edits`` when the rules are the same)."""
        if not self.edits:
            return "no rule edits"
        found = [f"{sum(e.edit is kind for e in self.edits):,} {kind.value}" for kind in EditKind]
        return "rule edits: " + ", ".join(found)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping (``norma rules diff --format json``; the command adds each turn's ``line`` in the
        turns file). Its schema::

            {
              "old": {"source": str | null, "tenant": str, "version": int | null, "rules": int},
              "new": {... as old},
              "summary": str,                    # summary(), the first line a person reads
              "counts": {"turns", "changed", "verdict_changed", "newly_failing", "newly_passing",
                         "newly_skipped", "same_verdict", "unchanged"},     # ints
              "edits": [{"rule_id": str, "edit": "added" | "removed" | "changed",
                         "fields": [str], "turns": int}],                    # by rule id
              "rules": [{"rule_id": str, "edit": str | null, "governs_gained": int, "governs_lost": int,
                         "matched_gained": int, "matched_lost": int,
                         "failing_gained": int, "failing_lost": int}],       # most involved first
              "changes": [{                                                  # worst first
                  "index": int, "id": any, "message": str,
                  "change": "newly_failing" | "newly_passing" | "newly_skipped" | "same_verdict",
                  "verdict": {"old": "pass" | "fail" | "skip", "new": ...},
                  "reward": {"old": float | null, "new": float | null},
                  "governs": {"added": [rule id], "removed": [rule id]},
                  "matched": {"added": [rule id], "removed": [rule id]},
                  "moves": [{"rule_id", "old", "new": "governs" | "neighbour" | "not_matched",
                             "old_confidence", "new_confidence": float | null}],
                  "failures": {"added": [CheckResult], "removed": [CheckResult]}
              }],
              "reused": int
            }

        A ``CheckResult`` is :class:`~norma.checks.CheckResult` as JSON (``rule_id``, ``check_id``, ``kind``,
        ``severity``, ``weight``, ``status``, ``message``, ``evidence``: ``[{start, end, line, column, text}]``,
        ``enforced``)."""
        return {
            "old": self.old.to_dict(),
            "new": self.new.to_dict(),
            "summary": self.summary(),
            "counts": self.counts,
            "edits": [edit.to_dict() for edit in self.edits],
            "rules": [rule.to_dict() for rule in self.rules],
            "changes": [change.to_dict() for change in self.changes],
            "reused": self.reused,
        }


def worst_first(changes: Sequence[TurnChange]) -> tuple[TurnChange, ...]:
    """Newly failing turns first, then by how much the reward fell (most first), then in input order."""
    return tuple(sorted(changes, key=lambda c: (c.kind is not ChangeKind.NEWLY_FAILING, -c.reward_drop, c.index)))
