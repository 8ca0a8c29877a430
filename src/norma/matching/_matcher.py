"""The rule matcher: a tenant's rules compiled into in-memory indexes, matched to messages per ADR-002.

Pipeline for one message (docs/matching.md; implemented in ``_pipeline``): candidates by scope (GLOBAL always,
SCENARIO / STEP when active), enabled and tag filter -> cosine similarity (max over the rule's text and examples;
an exact single-threaded product, or an HNSW index above ``hnsw_min_rows`` vectors) -> the top ``max_candidates``
rescored exactly in float64 -> BM25 of every candidate -> hybrid and final scores -> threshold -> session filters
(max fires, cooldown) -> sort by (-final, -priority, id) -> the first ``max_matched``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from norma.embeddings import Embedder, get_embedder
from norma.errors import InvalidInputError, NotFoundError
from norma.matching._config import Bm25Text, MatchConfig
from norma.matching._lexical import LexicalIndex
from norma.matching._models import SessionState
from norma.matching._pipeline import match_one
from norma.matching._query import check_message_sizes, check_messages, embed_messages
from norma.matching._results import MatchResult
from norma.matching._vectors import VectorIndex
from norma.rules import Rule, Scope, rule_fingerprint, rule_texts

__all__ = ["RuleMatcher"]

_SCOPE_CODE = {Scope.GLOBAL: 0, Scope.SCENARIO: 1, Scope.STEP: 2}


def _bm25_document(rule: Rule, field: Bm25Text) -> str:
    if field == "condition":
        return rule.condition_text
    if field == "rule":
        return rule.embedding_text
    return " ".join(rule_texts(rule))


def _wanted_tags(tags: object) -> list[str] | None:
    """The tag filter as a list of strings (one string is one tag); InvalidInputError for anything else."""
    if tags is None:
        return None
    if isinstance(tags, str):
        return [tags]
    if not isinstance(tags, Iterable) or isinstance(tags, bytes | Mapping):
        raise InvalidInputError(f"tags must be a list of strings, not a {type(tags).__name__}", location="tags")
    wanted = list(tags)
    for index, tag in enumerate(wanted):
        if not isinstance(tag, str):
            raise InvalidInputError(f"tags[{index}] is a {type(tag).__name__}, not a str", location=f"tags[{index}]")
    return wanted


def _checked_query(vector: object, index: int) -> np.ndarray:
    """A caller's message vector as ``(windows, dim)`` float32; InvalidInputError unless finite and non-zero."""
    try:
        array = np.atleast_2d(np.asarray(vector, dtype=np.float32))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"query_vectors[{index}] is not a numeric array: {exc}") from None
    if array.ndim != 2 or array.size == 0:
        raise InvalidInputError(f"query_vectors[{index}] has shape {array.shape}, expected (dim,) or (windows, dim)")
    if not np.isfinite(array).all() or not np.linalg.norm(array, axis=1).all():
        raise InvalidInputError(
            f"query_vectors[{index}] must be finite and non-zero in every window",
            hint="pass the message's embedding, or omit query_vector to embed the message",
        )
    return array


class RuleMatcher:
    """Matches messages to the rules of one tenant (see the module docstring for the pipeline).

    Args:
        rules: the tenant's rules (one ``tenant_id``; ids unique).
        config: weights and switches (default :class:`MatchConfig`).
        embedder: the sentence embedder (default :func:`norma.embeddings.get_embedder`, built on first need).
        vectors: precomputed vectors by rule id, ``(len(rule_texts(rule)), dim)`` each; rules absent from it are
            embedded in one batch. Vectors for ids not in ``rules`` are ignored.

    Safe to use from several threads: the index work of a match or an update runs under one lock (about a
    millisecond per match at 10k rules); embedding messages and new rule texts happens outside it.
    """

    def __init__(
        self,
        rules: Iterable[Rule],
        config: MatchConfig | None = None,
        *,
        embedder: Embedder | None = None,
        vectors: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        if config is not None and not isinstance(config, MatchConfig):
            raise InvalidInputError(f"config must be a MatchConfig, not {type(config).__name__}")
        self.config = config if config is not None else MatchConfig()
        self._embedder = embedder
        self._lock = threading.RLock()
        self._tenant: str | None = None
        self.version = 0
        self._rule_at: list[Rule | None] = []
        self._fingerprint_at: list[str] = []
        self._texts_at: list[list[str]] = []  # rule_texts of each slot's rule (what its vector rows are of)
        self._slot_of: dict[str, int] = {}
        self._free_slots: list[int] = []
        self._priority = np.zeros(0, dtype=np.float64)
        self._scope = np.zeros(0, dtype=np.int8)
        self._usable = np.zeros(0, dtype=bool)  # alive and enabled
        self._alive = np.zeros(0, dtype=bool)
        self._by_scenario: dict[str, set[int]] = {}
        self._by_step: dict[str, set[int]] = {}
        self._by_tag: dict[str, set[int]] = {}
        self._lexical: dict[Bm25Text, LexicalIndex] = {}
        self._vectors: VectorIndex | None = None
        self._global_usable: np.ndarray | None = None
        self._priority_bounds: tuple[float, float] | None = None
        self._ids: list[str] | None = None
        self._id_rank: np.ndarray | None = None  # each slot's position in rule-id order (ties are cut by it)
        self._priority_norm: np.ndarray | None = None
        self._exact_buffer: np.ndarray | None = None  # work buffers of the pipeline (see _pipeline.score_buffers)
        self._row_buffer: np.ndarray | None = None
        self._apply(list(rules), vectors, bump=False)

    # -- public state -------------------------------------------------------------------------------------------

    @property
    def embedder(self) -> Embedder:
        """The embedder messages and rules are embedded with."""
        if self._embedder is None:
            self._embedder = get_embedder()
        return self._embedder

    @property
    def model_id(self) -> str:
        """The embedder's model id (stored vectors are valid for this model only)."""
        return self.embedder.model_id

    @property
    def tenant_id(self) -> str:
        """The tenant of every rule (``"default"`` while the matcher is empty and was never given one)."""
        return self._tenant or "default"

    @property
    def rules(self) -> tuple[Rule, ...]:
        """Every rule, sorted by id."""
        with self._lock:
            return tuple(sorted((r for r in self._rule_at if r is not None), key=lambda r: r.id))

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._slot_of

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait until a background HNSW build (started by a match past ``hnsw_min_rows``) is done; True if done."""
        vectors = self._vectors
        return True if vectors is None else vectors.wait_for_build(timeout)

    def vectors_for(self, rule_id: str) -> np.ndarray:
        """A copy of the rule's vectors, one row per :func:`rule_texts` entry (what a store persists)."""
        with self._lock:
            slot = self._slot_of.get(rule_id)
            if slot is None or self._vectors is None:
                raise NotFoundError(f"no rule {rule_id!r} in this matcher", location=rule_id)
            return np.array(self._vectors.rows_of(slot), dtype=np.float32)

    # -- updates -------------------------------------------------------------------------------------------------

    def upsert(self, rules: Iterable[Rule], vectors: Mapping[str, np.ndarray] | None = None) -> None:
        """Add rules, or replace those with the same id; only changed texts are embedded again."""
        self._apply(list(rules), vectors, bump=True)

    def remove(self, rule_ids: Iterable[str]) -> None:
        """Remove rules by id (:class:`~norma.errors.NotFoundError` naming the first unknown id; nothing removed)."""
        ids = list(dict.fromkeys(rule_ids))
        with self._lock:
            for rule_id in ids:
                if rule_id not in self._slot_of:
                    raise NotFoundError(f"no rule {rule_id!r} to remove", location=rule_id)
            for rule_id in ids:
                self._drop(self._slot_of.pop(rule_id))
            if ids:
                self._changed()

    def _check_batch(self, rules: list[Rule]) -> None:
        seen: set[str] = set()
        tenant = self._tenant
        for rule in rules:
            if not isinstance(rule, Rule):
                raise InvalidInputError(f"expected a Rule, got {type(rule).__name__}", hint="use Rule.from_mapping")
            if rule.id in seen:
                raise InvalidInputError(f"duplicate rule id {rule.id!r}", location=rule.id, hint="rule ids are unique")
            seen.add(rule.id)
            if tenant is None and not self._slot_of:
                tenant = rule.tenant_id
            if rule.tenant_id != tenant:
                raise InvalidInputError(
                    f"rule {rule.id!r} belongs to tenant {rule.tenant_id!r}, this matcher to {tenant!r}",
                    location=rule.id,
                    hint="build one matcher per tenant",
                )

    def _checked_vectors(self, rule: Rule, given: np.ndarray) -> np.ndarray:
        array = np.asarray(given, dtype=np.float32)
        expected = len(rule_texts(rule))
        if array.ndim != 2 or array.shape[0] != expected:
            raise InvalidInputError(
                f"rule {rule.id!r}: vectors of shape {array.shape}, expected ({expected}, dim)",
                location=rule.id,
                hint="one row per rule_texts(rule) entry; re-embed when rule_fingerprint changed",
            )
        if self._vectors is not None and array.shape[1] != self._vectors.dim:
            raise InvalidInputError(
                f"rule {rule.id!r}: vectors of dim {array.shape[1]}, the matcher's are {self._vectors.dim}",
                location=rule.id,
            )
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        if not np.all(np.isfinite(array)) or np.any(norms == 0):
            raise InvalidInputError(f"rule {rule.id!r}: vectors must be finite and non-zero", location=rule.id)
        return np.asarray(array / norms, dtype=np.float32)

    def _apply(self, rules: list[Rule], vectors: Mapping[str, np.ndarray] | None, *, bump: bool) -> None:
        with self._lock:
            self._check_batch(rules)
            ready: dict[str, np.ndarray] = {}
            todo: list[Rule] = []
            for rule in rules:
                if vectors is not None and rule.id in vectors:
                    ready[rule.id] = self._checked_vectors(rule, vectors[rule.id])
                    continue
                slot = self._slot_of.get(rule.id)
                if slot is not None and self._fingerprint_at[slot] == rule_fingerprint(rule):
                    assert self._vectors is not None
                    ready[rule.id] = np.array(self._vectors.rows_of(slot))
                else:
                    todo.append(rule)
        if todo:  # embed outside the lock
            texts = [text for rule in todo for text in rule_texts(rule)]
            embedded = np.asarray(self.embedder.embed(texts), dtype=np.float32)
            start = 0
            for rule in todo:
                count = len(rule_texts(rule))
                ready[rule.id] = self._checked_vectors(rule, embedded[start : start + count])
                start += count
        with self._lock:
            self._check_batch(rules)
            for rule in rules:
                self._put(rule, ready[rule.id])
            if rules and self._tenant is None:
                self._tenant = rules[0].tenant_id
            if rules or not bump:
                self._changed(bump=bump)

    def _put(self, rule: Rule, vectors: np.ndarray) -> None:
        if self._vectors is None:
            self._vectors = VectorIndex(vectors.shape[1])
        elif vectors.shape[1] != self._vectors.dim:
            raise InvalidInputError(f"rule {rule.id!r}: vectors of dim {vectors.shape[1]}", location=rule.id)
        slot = self._slot_of.get(rule.id)
        if slot is not None:
            self._drop(slot)
        else:
            slot = self._free_slots.pop() if self._free_slots else self._new_slot()
            self._slot_of[rule.id] = slot
        self._rule_at[slot] = rule
        self._fingerprint_at[slot] = rule_fingerprint(rule)
        self._texts_at[slot] = rule_texts(rule)
        self._priority[slot] = rule.priority
        self._scope[slot] = _SCOPE_CODE[rule.scope]
        self._alive[slot] = True
        self._usable[slot] = rule.enabled
        if rule.scope is Scope.SCENARIO and rule.scenario_id:
            self._by_scenario.setdefault(rule.scenario_id, set()).add(slot)
        if rule.scope is Scope.STEP and rule.step_id:
            self._by_step.setdefault(rule.step_id, set()).add(slot)
        for tag in rule.tags:
            self._by_tag.setdefault(tag, set()).add(slot)
        self._vectors.set(slot, vectors)
        for field, index in self._lexical.items():
            index.set(slot, _bm25_document(rule, field))

    def _drop(self, slot: int) -> None:
        rule = self._rule_at[slot]
        assert rule is not None
        for groups, key in ((self._by_scenario, rule.scenario_id), (self._by_step, rule.step_id)):
            if key is not None and slot in groups.get(key, ()):
                groups[key].discard(slot)
                if not groups[key]:
                    del groups[key]
        for tag in set(rule.tags):  # a rule may repeat a tag; its slot is in that tag's set once
            self._by_tag[tag].discard(slot)
            if not self._by_tag[tag]:
                del self._by_tag[tag]
        if self._vectors is not None:
            self._vectors.remove(slot)
        for index in self._lexical.values():
            index.remove(slot)
        self._alive[slot] = False
        self._usable[slot] = False
        if self._slot_of.get(rule.id) != slot:  # removed for good (not replaced)
            self._rule_at[slot] = None
            self._free_slots.append(slot)

    def _new_slot(self) -> int:
        slot = len(self._rule_at)
        self._rule_at.append(None)
        self._fingerprint_at.append("")
        self._texts_at.append([])
        if slot >= len(self._priority):
            size = max(16, 2 * len(self._priority))
            for name in ("_priority", "_scope", "_usable", "_alive"):
                old = getattr(self, name)
                new = np.zeros(size, dtype=old.dtype)
                new[: len(old)] = old
                setattr(self, name, new)
        return slot

    def _changed(self, *, bump: bool = True) -> None:
        self._global_usable = None
        self._priority_bounds = None
        self._ids = None
        self._id_rank = None
        self._priority_norm = None
        if bump:
            self.version += 1

    def _lexical_index(self, field: Bm25Text) -> LexicalIndex:
        index = self._lexical.get(field)
        if index is None:
            index = LexicalIndex()
            for slot, rule in enumerate(self._rule_at):
                if rule is not None and self._alive[slot]:
                    index.set(slot, _bm25_document(rule, field))
            self._lexical[field] = index
        return index

    # -- matching ------------------------------------------------------------------------------------------------

    def match(
        self,
        message: str,
        session: SessionState | None = None,
        *,
        explain: bool = False,
        tags: Iterable[str] | None = None,
        config: MatchConfig | None = None,
        query_vector: np.ndarray | None = None,
    ) -> MatchResult:
        """The rules that apply to ``message``, best first (see the module docstring).

        An empty or whitespace-only message matches nothing. ``tags``: only rules with at least one of these tags.
        ``config`` overrides the matcher's for this call. ``query_vector`` (``(dim,)`` or ``(windows, dim)``)
        skips embedding the message. With ``explain=True`` the result's ``dropped`` lists the rules left out.
        """
        return self.match_many(
            [message],
            None if session is None else [session],
            explain=explain,
            tags=tags,
            config=config,
            query_vectors=None if query_vector is None else [query_vector],
        )[0]

    async def amatch(
        self,
        message: str,
        session: SessionState | None = None,
        *,
        explain: bool = False,
        tags: Iterable[str] | None = None,
        config: MatchConfig | None = None,
    ) -> MatchResult:
        """:meth:`match` in a worker thread, for async services (the event loop is not blocked)."""
        return await asyncio.to_thread(self.match, message, session, explain=explain, tags=tags, config=config)

    def match_many(
        self,
        messages: Sequence[str],
        sessions: Sequence[SessionState | None] | None = None,
        *,
        explain: bool = False,
        tags: Iterable[str] | None = None,
        config: MatchConfig | None = None,
        query_vectors: Sequence[np.ndarray] | None = None,
    ) -> list[MatchResult]:
        """:meth:`match` for many messages with one embedding call; result ``i`` equals ``match(messages[i])``."""
        items = check_messages(messages)
        if sessions is not None and len(sessions) != len(items):
            raise InvalidInputError(f"{len(items)} messages but {len(sessions)} sessions", location="sessions")
        if config is not None and not isinstance(config, MatchConfig):
            raise InvalidInputError(f"config must be a MatchConfig, not {type(config).__name__}")
        for session in sessions or ():
            if session is not None and not isinstance(session, SessionState):
                raise InvalidInputError(f"session must be a SessionState, not {type(session).__name__}")
        cfg = config or self.config
        check_message_sizes(items, cfg.max_message_chars)
        wanted = _wanted_tags(tags)
        if query_vectors is not None:
            if len(query_vectors) != len(items):
                raise InvalidInputError(f"{len(items)} messages but {len(query_vectors)} vectors")
            pairs = enumerate(zip(items, query_vectors, strict=True))
            queries: list[np.ndarray | None] = [None if not m.strip() else _checked_query(v, i) for i, (m, v) in pairs]
        elif len(self) == 0:
            queries = [None] * len(items)
        else:
            queries = embed_messages(self.embedder, items, cfg)
        with self._lock:
            return [
                match_one(self, items[i], queries[i], sessions[i] if sessions else None, wanted, cfg, explain)
                for i in range(len(items))
            ]
