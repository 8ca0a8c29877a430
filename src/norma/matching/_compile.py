"""Updating a :class:`~norma.matching._index.MatchIndex`: rules put and removed, compiled into the next index.

:class:`IndexBuilder` starts from the current index, records what changes and builds the next index copy-on-write:
the chunks and shards the changed rules fall in are copied and the rest shared; a per-slot array is copied only when
a value below the old size changes (slots appended past it are written in place: the old index never reads them);
derived values nothing changed are carried over. The vector and BM25 indexes are shared and changed in place, so a
builder must be used under the matcher's lock and every check done before the first :meth:`~IndexBuilder.put`
(:func:`check_batch`, :func:`checked_vectors`, :func:`check_dims`): a builder that failed half way would leave them
ahead of the published index.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from norma.errors import InvalidInputError
from norma.matching._cow import ShardedMap
from norma.matching._index import SCOPE_CODE, MatchIndex, bm25_document
from norma.matching._vectors import VectorIndex
from norma.rules import Rule, Scope, rule_texts

__all__ = ["IndexBuilder", "check_batch", "check_dims", "checked_vectors"]

_NO_SLOTS = np.zeros(0, dtype=np.intp)
_NO_SLOTS.flags.writeable = False
_COLUMNS = ("priority", "scope", "usable", "alive")  # the per-slot arrays of a MatchIndex
_GroupChanges = dict[str, tuple[set[int], set[int]]]  # by key: the slots removed, the slots added


def check_batch(index: MatchIndex, rules: Sequence[Rule]) -> None:
    """An :class:`InvalidInputError` unless ``rules`` are Rules with distinct ids, all of the index's tenant."""
    seen: set[str] = set()
    tenant = index.tenant_id
    for rule in rules:
        if not isinstance(rule, Rule):
            raise InvalidInputError(f"expected a Rule, got {type(rule).__name__}", hint="use Rule.from_mapping")
        if rule.id in seen:
            raise InvalidInputError(f"duplicate rule id {rule.id!r}", location=rule.id, hint="rule ids are unique")
        seen.add(rule.id)
        if tenant is None and not len(index):
            tenant = rule.tenant_id
        if rule.tenant_id != tenant:
            raise InvalidInputError(
                f"rule {rule.id!r} belongs to tenant {rule.tenant_id!r}, this matcher to {tenant!r}",
                location=rule.id,
                hint="build one matcher per tenant",
            )


def checked_vectors(rule: Rule, given: np.ndarray, dim: int | None) -> np.ndarray:
    """A rule's vectors as unit-length float32 rows, one per :func:`rule_texts` entry, of dimension ``dim`` (any
    when None); :class:`InvalidInputError` naming the rule otherwise."""
    array = np.asarray(given, dtype=np.float32)
    expected = len(rule_texts(rule))
    if array.ndim != 2 or array.shape[0] != expected:
        raise InvalidInputError(
            f"rule {rule.id!r}: vectors of shape {array.shape}, expected ({expected}, dim)",
            location=rule.id,
            hint="one row per rule_texts(rule) entry; re-embed when rule_fingerprint changed",
        )
    if dim is not None and array.shape[1] != dim:
        raise InvalidInputError(
            f"rule {rule.id!r}: vectors of dim {array.shape[1]}, the matcher's are {dim}", location=rule.id
        )
    norms = np.sqrt(np.add.reduce(array * array, axis=1, keepdims=True))  # np.linalg.norm's, without its overhead
    if not np.isfinite(array).all() or (norms == 0).any():
        raise InvalidInputError(f"rule {rule.id!r}: vectors must be finite and non-zero", location=rule.id)
    return np.asarray(array / norms, dtype=np.float32)


def check_dims(index: MatchIndex, rules: Sequence[Rule], vectors: dict[str, np.ndarray]) -> None:
    """An :class:`InvalidInputError` naming the first rule whose vectors' dimension differs from the index's (or,
    for a matcher without vectors yet, from the first rule's)."""
    dim = index.vectors.dim if index.vectors is not None else None
    for rule in rules:
        width = vectors[rule.id].shape[1]
        if dim is None:
            dim = width
        elif width != dim:
            raise InvalidInputError(f"rule {rule.id!r}: vectors of dim {width}", location=rule.id)


class IndexBuilder:
    """The next :class:`MatchIndex`: :meth:`put` and :meth:`drop` rules, then :meth:`build` (once).

    ``free_slots`` is the matcher's list of free slots, taken from and added to in place.
    """

    def __init__(self, index: MatchIndex, free_slots: list[int]) -> None:
        self._base = index
        self._free = free_slots
        self._size = index.size
        self._tenant = index.tenant_id
        # what changes, by slot or id (plain dicts of scalars: a 10k-rule build allocates few objects the
        # garbage collector tracks, so it triggers few collections)
        self._rules: dict[int, Rule | None] = {}
        self._texts: dict[int, tuple[str, ...]] = {}
        self._ids: dict[int, str] = {}
        self._slots: dict[str, int | None] = {}
        self._columns: dict[str, dict[int, object]] = {column: {} for column in _COLUMNS}
        self._groups: dict[str, _GroupChanges] = {"scenario": {}, "step": {}, "tag": {}}
        self._vectors = index.vectors
        self._pending: tuple[list[int], list[np.ndarray]] = ([], [])  # vectors put, written in one pass

    def _rule(self, slot: int) -> Rule | None:
        return self._rules[slot] if slot in self._rules else self._base.rule_at[slot]

    def slot_of(self, rule_id: str) -> int | None:
        """The rule's slot in the index being built."""
        return self._slots[rule_id] if rule_id in self._slots else self._base.slot_of.get(rule_id)

    def _group(self, kind: str, key: str) -> tuple[set[int], set[int]]:
        changes = self._groups[kind]
        if key not in changes:
            changes[key] = (set(), set())
        return changes[key]

    def _groups_of(self, rule: Rule) -> list[tuple[str, str]]:
        groups = [("tag", tag) for tag in dict.fromkeys(rule.tags)] if rule.tags else []
        if rule.scope is Scope.GLOBAL:
            return groups
        if rule.scope is Scope.SCENARIO and rule.scenario_id:
            groups.append(("scenario", rule.scenario_id))
        if rule.scope is Scope.STEP and rule.step_id:
            groups.append(("step", rule.step_id))
        return groups

    def put(self, rule: Rule, vectors: np.ndarray) -> None:
        """Add ``rule`` with its checked vectors, or replace the rule of the same id."""
        if self._vectors is None:
            self._vectors = VectorIndex(vectors.shape[1])
        slot = self.slot_of(rule.id)
        if slot is not None:
            self._clear(slot)
        else:
            slot = self._free.pop() if self._free else self._new_slot()
            self._slots[rule.id] = slot
            self._ids[slot] = rule.id
        texts = tuple(rule_texts(rule))
        self._rules[slot], self._texts[slot] = rule, texts
        columns = self._columns
        columns["priority"][slot] = rule.priority
        columns["scope"][slot] = SCOPE_CODE[rule.scope]
        columns["usable"][slot] = rule.enabled
        columns["alive"][slot] = True
        for kind, key in self._groups_of(rule):
            self._group(kind, key)[1].add(slot)
        if self._tenant is None:
            self._tenant = rule.tenant_id
        self._pending[0].append(slot)
        self._pending[1].append(vectors)
        for field, lexical in self._base.lexical_indexes.built():
            lexical.set(slot, bm25_document(rule, texts, field))

    def drop(self, rule_id: str) -> None:
        """Remove the rule ``rule_id`` (which must be in the index); its slot becomes free."""
        slot = self.slot_of(rule_id)
        assert slot is not None
        self._clear(slot)
        self._slots[rule_id] = None
        self._rules[slot], self._texts[slot], self._ids[slot] = None, (), ""
        self._free.append(slot)

    def _clear(self, slot: int) -> None:
        """Take the rule in ``slot`` out of every group and index (its entry is replaced or freed by the caller)."""
        rule = self._rule(slot)
        assert rule is not None
        for kind, key in self._groups_of(rule):
            removed, added = self._group(kind, key)
            removed.add(slot)
            added.discard(slot)
        if self._vectors is not None:
            self._write_vectors()
            self._vectors.remove(slot)
        for _, lexical in self._base.lexical_indexes.built():
            lexical.remove(slot)
        self._columns["usable"][slot] = self._columns["alive"][slot] = False

    def _write_vectors(self) -> None:
        """Write the vectors put since the last call into the vector index, in one pass (each slot is pending once:
        :meth:`_clear` writes them before it removes a slot's)."""
        slots, blocks = self._pending
        if slots:
            assert self._vectors is not None
            self._vectors.set_many(slots, blocks)
            self._pending = ([], [])

    def _new_slot(self) -> int:
        slot = self._size
        self._size += 1
        return slot

    def _arrays(self) -> list[np.ndarray]:
        """The per-slot arrays of the next index: the base's where no value changes; the base's written in place
        where only slots past its size change (the base index never reads them); else a copy (grown as needed)."""
        base = self._base
        out = []
        for column in _COLUMNS:
            array, changes = getattr(base, column), self._columns[column]
            if not changes and self._size <= len(array):
                out.append(array)
                continue
            slots = np.fromiter(changes, dtype=np.intp, count=len(changes))
            values = np.fromiter(changes.values(), dtype=array.dtype, count=len(changes))
            inside = slots < base.size
            where, what = slots, values
            if self._size > len(array) or (array[slots[inside]] != values[inside]).any():
                capacity = len(array)
                while capacity < self._size:
                    capacity = max(16, 2 * capacity)
                grown = np.zeros(capacity, dtype=array.dtype)
                grown[: len(array)] = array
                array = grown
            else:
                where, what = slots[~inside], values[~inside]
            if len(where):
                array.flags.writeable = True
                array[where] = what
            array.flags.writeable = False
            out.append(array)
        return out

    def build(self, *, bump: bool) -> MatchIndex:
        """The next index (its version one more than the base's when ``bump``)."""
        base = self._base
        self._write_vectors()
        priority, scope, usable, alive = self._arrays()
        index = MatchIndex(
            tenant_id=self._tenant,
            version=base.version + 1 if bump else base.version,
            size=self._size,
            rule_at=base.rule_at.updated(self._rules, self._size, None),
            texts_at=base.texts_at.updated(self._texts, self._size, ()),
            ids=base.ids.updated(self._ids, self._size, ""),
            slot_of=base.slot_of.updated(self._slots),
            priority=priority,
            scope=scope,
            usable=usable,
            alive=alive,
            by_scenario=_regrouped(base.by_scenario, self._groups["scenario"]),
            by_step=_regrouped(base.by_step, self._groups["step"]),
            by_tag=_regrouped(base.by_tag, self._groups["tag"]),
            vectors=self._vectors,
            lexical_indexes=base.lexical_indexes,
        )
        if self._size == base.size:  # what the base derived and nothing it depends on changed: the same values
            same = {
                "id_rank": not self._slots,  # a replaced rule keeps its id and slot
                "global_usable": usable is base.usable and scope is base.scope,
                "priority_bounds": priority is base.priority and alive is base.alive,
                "priority_norm": priority is base.priority and alive is base.alive,
            }
            index.inherit(base, [name for name, kept in same.items() if kept])
        return index


def _regrouped(groups: ShardedMap[str, np.ndarray], changes: _GroupChanges) -> ShardedMap[str, np.ndarray]:
    """``groups`` (sorted slot arrays by key) with each key's slots removed and added (a key left empty goes)."""
    if not changes:
        return groups
    updates: dict[str, np.ndarray | None] = {}
    for key, (removed, added) in changes.items():
        slots = groups.get(key)
        if slots is None:
            slots = _NO_SLOTS
        if removed:
            slots = slots[~np.isin(slots, np.fromiter(removed, dtype=np.intp, count=len(removed)))]
        if added:
            new = np.sort(np.fromiter(added, dtype=np.intp, count=len(added)))
            slots = np.insert(slots, np.searchsorted(slots, new), new)
        if len(slots):
            slots.flags.writeable = False
            updates[key] = slots
        else:
            updates[key] = None
    return groups.updated(updates)
