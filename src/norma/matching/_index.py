"""The compiled index a :class:`~norma.matching.RuleMatcher` matches against: everything the pipeline reads.

Rules live in *slots* (small integers; a removed rule's slot is reused), and every per-rule array is indexed by slot.
A :class:`MatchIndex` is immutable: an update builds the next one (``_compile.py``) and the matcher publishes it by
swapping one reference, so a reader holds one consistent version. Per-slot Python data live in copy-on-write
containers (``_cow.py``), and the per-slot arrays (11 bytes a slot) are copied only when a value the previous
version reads changes, so an update costs about what it changes.

Two parts are shared from one index to the next instead of copied: the :class:`~norma.matching._vectors.VectorIndex`
(the tenant's vector matrix, 1.5 kB a vector, plus its int8 copy and HNSW index) and the BM25 indexes
(:class:`LexicalIndexes`). An update changes them in place, and a match fills their lazily built parts (the int8
copy, the prepacked matrix, the HNSW index, the BM25 postings of a ``bm25_text`` first asked for); both happen under
the matcher's lock, as before. Values derived from the rules (the GLOBAL candidates, normalised priorities, the
rule-id order that cuts ties, the rules a turn check evaluates on every output) are computed on first use and kept for
the life of the index.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from norma.matching._config import Bm25Text
from norma.matching._cow import ChunkedList, ShardedMap
from norma.matching._lexical import LexicalIndex
from norma.matching._scoring import normalize_priority
from norma.matching._vectors import VectorIndex
from norma.rules import Rule, Scope, When

__all__ = ["SCOPE_CODE", "SCOPES", "LexicalIndexes", "MatchIndex", "bm25_document"]

SCOPES = (Scope.GLOBAL, Scope.SCENARIO, Scope.STEP)
"""The scopes in the order of their codes in :attr:`MatchIndex.scope`."""
SCOPE_CODE = {scope: code for code, scope in enumerate(SCOPES)}
"""A scope's code in :attr:`MatchIndex.scope` (GLOBAL is 0)."""


def bm25_document(rule: Rule, texts: tuple[str, ...], field: Bm25Text) -> str:
    """What BM25 indexes for a rule whose :func:`~norma.matching.rule_texts` are ``texts`` (see
    :data:`~norma.matching._config.Bm25Text`)."""
    if field == "condition":
        return rule.condition_text
    if field == "rule":
        return rule.embedding_text
    return " ".join(texts)


class LexicalIndexes:
    """A matcher's BM25 indexes by what they index, each built on the first match that asks for it.

    Shared by successive :class:`MatchIndex` versions; updates change every built one in place. Not thread-safe
    (used under the matcher's lock).
    """

    def __init__(self) -> None:
        self._by_field: dict[Bm25Text, LexicalIndex] = {}

    def built(self) -> ItemsView[Bm25Text, LexicalIndex]:
        """The indexes built so far."""
        return self._by_field.items()

    def get(
        self, field: Bm25Text, rule_at: ChunkedList[Rule | None], texts_at: ChunkedList[tuple[str, ...]]
    ) -> LexicalIndex:
        """The index of ``field``, built from the rules and texts by slot if this is its first use."""
        index = self._by_field.get(field)
        if index is None:
            index = LexicalIndex()
            index.set_many(
                (slot, bm25_document(rule, texts, field))
                for slot, (rule, texts) in enumerate(zip(rule_at, texts_at, strict=True))
                if rule is not None
            )
            self._by_field[field] = index
        return index


@dataclass(frozen=True, eq=False)
class MatchIndex:
    """One version of a matcher's rules, compiled for matching (see the module docstring).

    Arrays are by slot and at least :attr:`size` long (read only); a free slot is not ``alive``.
    """

    tenant_id: str | None
    """The tenant of every rule (None until the matcher is given its first rule)."""
    version: int
    """Bumped by every update that changes something (``RuleMatcher.version``)."""
    size: int
    """Slots in use or free: every slot is below it."""
    rule_at: ChunkedList[Rule | None]
    """The rule of each slot (None: a free slot)."""
    texts_at: ChunkedList[tuple[str, ...]]
    """The :func:`~norma.matching.rule_texts` of each slot's rule, what its vector rows are of (row 0 the rule's own
    text, row ``i`` its example ``i - 1``; empty for a free slot)."""
    ids: ChunkedList[str]
    """The rule id of each slot (``""``: a free slot)."""
    slot_of: ShardedMap[str, int]
    """Each rule id's slot."""
    priority: np.ndarray
    """float64: each rule's priority."""
    scope: np.ndarray
    """int8: each rule's scope code (:data:`SCOPE_CODE`)."""
    usable: np.ndarray
    """bool: alive and enabled."""
    alive: np.ndarray
    """bool: the slot holds a rule."""
    by_scenario: ShardedMap[str, np.ndarray]
    """The slots of the SCENARIO rules of each scenario (sorted)."""
    by_step: ShardedMap[str, np.ndarray]
    """The slots of the STEP rules of each step (sorted)."""
    by_tag: ShardedMap[str, np.ndarray]
    """The slots of the rules carrying each tag (sorted)."""
    vectors: VectorIndex | None
    """Every rule's vectors (None until the matcher holds a vector; shared with the next version)."""
    lexical_indexes: LexicalIndexes = field(default_factory=LexicalIndexes)
    """The BM25 indexes (shared with the next version)."""

    @classmethod
    def empty(cls) -> MatchIndex:
        """The index of a matcher without rules."""
        return cls(
            tenant_id=None,
            version=0,
            size=0,
            rule_at=ChunkedList(),
            texts_at=ChunkedList(),
            ids=ChunkedList(),
            slot_of=ShardedMap(),
            priority=np.zeros(0, dtype=np.float64),
            scope=np.zeros(0, dtype=np.int8),
            usable=np.zeros(0, dtype=bool),
            alive=np.zeros(0, dtype=bool),
            by_scenario=ShardedMap(),
            by_step=ShardedMap(),
            by_tag=ShardedMap(),
            vectors=None,
        )

    def __len__(self) -> int:
        return len(self.slot_of)

    def rule(self, slot: int) -> Rule:
        """The rule in ``slot`` (which must hold one)."""
        rule = self.rule_at[slot]
        assert rule is not None
        return rule

    def rules(self) -> Iterator[Rule]:
        """Every rule, in slot order."""
        return (rule for rule in self.rule_at if rule is not None)

    def lexical(self, field: Bm25Text) -> LexicalIndex:
        """The BM25 index of ``field`` (built on first use)."""
        return self.lexical_indexes.get(field, self.rule_at, self.texts_at)

    def inherit(self, base: MatchIndex, names: list[str]) -> None:
        """Take the derived values ``names`` (cached properties) that ``base`` computed already: the builder of this
        index knows they did not change, and a 100k-rule id order costs some 20 ms to compute again."""
        for name in names:
            if name in base.__dict__:
                self.__dict__[name] = base.__dict__[name]

    @cached_property
    def always_rules(self) -> tuple[Rule, ...]:
        """The enabled rules with a ``when: always`` check, by id: those a turn check evaluates on every output."""
        found = (r for r in self.rules() if r.enabled and any(c.applies is When.ALWAYS for c in r.checks))
        return tuple(sorted(found, key=lambda r: r.id))

    @cached_property
    def global_usable(self) -> np.ndarray:
        """bool by slot: the enabled GLOBAL rules, every match's first candidates."""
        usable: np.ndarray = self.usable[: self.size] & (self.scope[: self.size] == 0)
        return usable

    @cached_property
    def priority_bounds(self) -> tuple[float, float]:
        """The lowest and highest priority of the rules ((0, 0) without rules)."""
        alive = self.priority[: self.size][self.alive[: self.size]]
        return (float(alive.min()), float(alive.max())) if alive.size else (0.0, 0.0)

    @cached_property
    def priority_norm(self) -> np.ndarray:
        """float64 by slot: each priority min-max normalised over the rules (all 0 when they are equal)."""
        low, high = self.priority_bounds
        return normalize_priority(self.priority[: self.size], low, high)

    @cached_property
    def id_rank(self) -> np.ndarray:
        """intp by slot: the slot's position in rule-id order (ties are cut by it; free slots first)."""
        ids = list(self.ids)
        rank = np.empty(len(ids), dtype=np.intp)
        rank[np.argsort(np.asarray(ids, dtype=object), kind="stable")] = np.arange(len(ids), dtype=np.intp)
        return rank
