"""The rule matcher: a tenant's rules compiled into an immutable index, matched to messages per ADR-002.

A :class:`RuleMatcher` holds one :class:`~norma.matching._index.MatchIndex` (``_index.py``) and replaces it on every
update (``_compile.py``: copy-on-write, so an update costs about what it changes). A match runs the stages of
``_pipeline.py`` over it: candidates by scope, enabled and tag filter -> the vector candidates (the int8 scan's
bounds, a float32 scan, or an HNSW index above ``hnsw_min_rows`` vectors) -> BM25 of every candidate -> the vector
top and BM25 top rescored exactly in float64 -> hybrid and final scores -> threshold and session filters (max
fires, cooldown) -> sort by (-final, -priority, id), the first ``max_matched`` -> explanations.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from norma._trace import span
from norma.embeddings import Embedder, get_embedder
from norma.errors import InvalidInputError, NotFoundError
from norma.matching._buffers import ScoreBuffers
from norma.matching._compile import IndexBuilder, check_batch, check_dims, checked_vectors
from norma.matching._confidence import Refit, RulebookStats, crossfit_stats, measure_stats
from norma.matching._config import MatchConfig
from norma.matching._gate import CalibratedGate, FixedGate, Gate, GateSource, HeldOut, resolve
from norma.matching._index import MatchIndex
from norma.matching._models import SessionState
from norma.matching._pipeline import match_one
from norma.matching._query import (
    check_message_sizes,
    check_messages,
    checked_query_vector,
    embed_messages,
    wanted_tags,
)
from norma.matching._results import MatchResult
from norma.rules import Rule, rule_texts

_LOG = logging.getLogger(__name__)

__all__ = ["RuleMatcher"]


def _same_texts(index: MatchIndex, slot: int, rule: Rule) -> bool:
    """Whether the rule in ``slot`` has ``rule``'s texts (and so its vectors)."""
    return index.texts_at[slot] == tuple(rule_texts(rule))


class RuleMatcher:
    """Matches messages to the rules of one tenant (see the module docstring for the pipeline).

    Args:
        rules: the tenant's rules (one ``tenant_id``; ids unique).
        config: weights and switches (default :class:`MatchConfig`).
        embedder: the sentence embedder (default :func:`norma.embeddings.get_embedder`, built on first need).
        vectors: precomputed vectors by rule id, ``(len(rule_texts(rule)), dim)`` each; rules absent from it are
            embedded in one batch. Vectors for ids not in ``rules`` are ignored.
        gate: what the automatic gate (``threshold="auto"``) starts from: see :meth:`set_gate`.

    Safe to use from several threads: the index work of a match or an update runs under one lock (about a
    millisecond per match at 10k rules); embedding messages and new rule texts happens outside it. Reading the
    rules (``len``, ``in``, :attr:`rules`, :attr:`version`) takes no lock: it reads the index last published.
    """

    def __init__(
        self,
        rules: Iterable[Rule],
        config: MatchConfig | None = None,
        *,
        embedder: Embedder | None = None,
        vectors: Mapping[str, np.ndarray] | None = None,
        gate: GateSource | None = None,
    ) -> None:
        if config is not None and not isinstance(config, MatchConfig):
            raise InvalidInputError(f"config must be a MatchConfig, not {type(config).__name__}")
        self.config = config if config is not None else MatchConfig()
        self._embedder = embedder
        self._lock = threading.RLock()
        self._index = MatchIndex.empty()
        self._free_slots: list[int] = []  # slots of removed rules, reused first (updates only, under the lock)
        self._buffers = ScoreBuffers()
        self._given: CalibratedGate | FixedGate | None = None
        self._stats: tuple[MatchIndex, RulebookStats] | None = None  # the confidence's statistics, per version
        self._held_out: HeldOut | None = None  # an adapted encoder's: its confidence's statistics come from it
        self._apply(list(rules), vectors, bump=False)
        if gate is not None:
            self.set_gate(gate)

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
    def version(self) -> int:
        """Bumped by every :meth:`upsert` or :meth:`remove` that changes something (0 after construction)."""
        return self._index.version

    @property
    def tenant_id(self) -> str:
        """The tenant of every rule (``"default"`` while the matcher is empty and was never given one)."""
        return self._index.tenant_id or "default"

    @property
    def rules(self) -> tuple[Rule, ...]:
        """Every rule, sorted by id."""
        return tuple(sorted(self._index.rules(), key=lambda r: r.id))

    @property
    def always_rules(self) -> tuple[Rule, ...]:
        """The enabled rules with a ``when: always`` check, sorted by id: those a turn check evaluates whether they
        matched or not (:meth:`~norma.turns.Norma.check`). Found once per version of the rules."""
        return self._index.always_rules

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, rule_id: object) -> bool:
        return rule_id in self._index.slot_of

    def wait_for_index(self, timeout: float | None = None) -> bool:
        """Wait until a background HNSW build (started by a match past ``hnsw_min_rows``) is done; True if done."""
        vectors = self._index.vectors
        return True if vectors is None else vectors.wait_for_build(timeout)

    def vectors_for(self, rule_id: str) -> np.ndarray:
        """A copy of the rule's vectors, one row per :func:`rule_texts` entry (what a store persists)."""
        with self._lock:
            index = self._index
            slot = index.slot_of.get(rule_id)
            if slot is None or index.vectors is None:
                raise NotFoundError(f"no rule {rule_id!r} in this matcher", location=rule_id)
            return np.array(index.vectors.rows_of(slot), dtype=np.float32)

    # -- updates -------------------------------------------------------------------------------------------------

    def upsert(self, rules: Iterable[Rule], vectors: Mapping[str, np.ndarray] | None = None) -> None:
        """Add rules, or replace those with the same id; only changed texts are embedded again."""
        self._apply(list(rules), vectors, bump=True)

    def remove(self, rule_ids: Iterable[str]) -> None:
        """Remove rules by id (:class:`~norma.errors.NotFoundError` naming the first unknown id; nothing removed)."""
        ids = list(dict.fromkeys(rule_ids))
        with self._lock:
            index = self._index
            for rule_id in ids:
                if rule_id not in index.slot_of:
                    raise NotFoundError(f"no rule {rule_id!r} to remove", location=rule_id)
            if ids:
                builder = IndexBuilder(index, self._free_slots)
                for rule_id in ids:
                    builder.drop(rule_id)
                self._index = builder.build(bump=True)

    def _apply(self, rules: list[Rule], vectors: Mapping[str, np.ndarray] | None, *, bump: bool) -> None:
        with self._lock:
            index = self._index
            check_batch(index, rules)
            dim = index.vectors.dim if index.vectors is not None else None
            ready: dict[str, np.ndarray] = {}
            todo: list[Rule] = []
            for rule in rules:
                if vectors is not None and rule.id in vectors:
                    ready[rule.id] = checked_vectors(rule, vectors[rule.id], dim)
                    continue
                slot = index.slot_of.get(rule.id)
                if slot is not None and index.vectors is not None and _same_texts(index, slot, rule):
                    ready[rule.id] = np.array(index.vectors.rows_of(slot))
                else:
                    todo.append(rule)
        if todo:  # embed outside the lock
            texts = [text for rule in todo for text in rule_texts(rule)]
            embedded = np.asarray(self.embedder.embed(texts), dtype=np.float32)
            start = 0
            for rule in todo:
                count = len(rule_texts(rule))
                ready[rule.id] = checked_vectors(rule, embedded[start : start + count], dim)
                start += count
        with self._lock:
            index = self._index  # another update may have been published meanwhile
            check_batch(index, rules)
            check_dims(index, rules, ready)
            if rules or not bump:
                builder = IndexBuilder(index, self._free_slots)
                for rule in rules:
                    builder.put(rule, ready[rule.id])
                self._index = builder.build(bump=bump)

    # -- the gate --------------------------------------------------------------------------------------------------

    @property
    def given_gate(self) -> CalibratedGate | FixedGate | None:
        """The calibrated or fixed gate given (:meth:`set_gate`), None for the default confidence gate."""
        return self._given

    @property
    def held_out(self) -> HeldOut | None:
        """The adapted encoder's held-out examples given (:meth:`set_gate`), None for the base encoder."""
        return self._held_out

    def set_gate(self, gate: GateSource | None) -> None:
        """What the automatic gate (``threshold="auto"``) is, or what the confidence reads:

        * a :class:`~norma.matching.CalibratedGate` (:func:`~norma.matching.calibrate_gate`, a tenant's stored gate)
          or a :class:`~norma.matching.FixedGate`: used as is, whatever the rules become. A gate calibrated with
          another embedding model is ignored, with a warning (its threshold and refit are of other similarities);
        * a :class:`~norma.matching.HeldOut` (:func:`~norma.matching.read_held_out` of an adapted encoder's folder,
          the one this matcher embeds with): the confidence's statistics are measured on the examples the encoder
          held out (it stays, whatever gate comes next);
        * None: the default, the confidence gate.
        """
        if gate is not None and not isinstance(gate, (CalibratedGate, FixedGate, HeldOut)):
            raise InvalidInputError(
                f"set_gate takes a calibrated or fixed gate or an adapted encoder's HeldOut, not {type(gate).__name__}"
            )
        if isinstance(gate, CalibratedGate) and gate.model is not None and gate.model != self.model_id:
            _LOG.warning(
                "ignoring a gate calibrated with model %s: this matcher embeds with %s (calibrate it again)",
                gate.model,
                self.model_id,
            )
            gate = None
        with self._lock:
            if isinstance(gate, HeldOut):
                if gate.owners != (self._held_out.owners if self._held_out is not None else ()):
                    self._stats = None
                self._held_out = gate
            else:
                self._given = gate

    def gate(self, config: MatchConfig | None = None) -> Gate:
        """The gate a match with ``config`` (default the matcher's) applies; never depends on the message."""
        return resolve(config or self.config, self._given)

    # -- the confidence --------------------------------------------------------------------------------------------

    def stats(self) -> RulebookStats:
        """The rulebook's statistics the confidence reads (``_confidence.py``), measured once per version of the
        rules (deterministic: the same on every CPU)."""
        with self._lock:
            return self._stats_of(self._index)

    @property
    def refit(self) -> Refit | None:
        """The confidence refit of the calibrated gate given (:meth:`set_gate`), None for the shipped confidence.
        Every match reads it, whatever its threshold."""
        given = self._given
        return given.refit if isinstance(given, CalibratedGate) else None

    def keep_stats(self, stats: RulebookStats, *, covering: bool = False) -> bool:
        """Statistics measured earlier on these same rules (a snapshot's): used until the rules change. Ignored
        (False) when they name other rules than today's; with ``covering``, when they do not name all of today's
        (a push-down matcher over a few of a tenant's rules reads the whole tenant's)."""
        with self._lock:
            index = self._index
            alive = {index.ids[slot] for slot in np.flatnonzero(index.alive[: index.size]).tolist()}
            named = set(stats.inside)
            if not (alive <= named if covering else alive == named):
                return False
            self._stats = (index, stats)
            return True

    def _stats_of(self, index: MatchIndex) -> RulebookStats:
        """Under the lock: the statistics of ``index``."""
        cached = self._stats
        if cached is not None and cached[0] is index:
            return cached[1]
        # an adapted encoder's from the examples it never saw (its HeldOut), else from the rules' own texts
        owners = self._held_out.owners if self._held_out is not None else ()
        stats = crossfit_stats(index, owners) if owners else measure_stats(index)
        self._stats = (index, stats)
        return stats

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
        embedder: Embedder | None = None,
    ) -> MatchResult:
        """The rules that apply to ``message``, best first (see the module docstring).

        An empty or whitespace-only message matches nothing. ``tags``: only rules with at least one of these tags.
        ``config`` overrides the matcher's for this call. ``query_vector`` (``(dim,)`` or ``(windows, dim)``)
        skips embedding the message; ``embedder`` embeds it instead of the matcher's embedder (the same model,
        e.g. a :class:`~norma.embeddings.BatchingEmbedder` around it that shares model calls between threads).
        With ``explain=True`` the result's ``dropped`` lists the rules left out.
        """
        return self.match_many(
            [message],
            None if session is None else [session],
            explain=explain,
            tags=tags,
            config=config,
            query_vectors=None if query_vector is None else [query_vector],
            embedder=embedder,
        )[0]

    async def amatch(
        self,
        message: str,
        session: SessionState | None = None,
        *,
        explain: bool = False,
        tags: Iterable[str] | None = None,
        config: MatchConfig | None = None,
        embedder: Embedder | None = None,
    ) -> MatchResult:
        """:meth:`match` in a worker thread, for async services (the event loop is not blocked)."""
        import asyncio  # here: a CLI run never pays for it

        return await asyncio.to_thread(
            self.match, message, session, explain=explain, tags=tags, config=config, embedder=embedder
        )

    def match_many(
        self,
        messages: Sequence[str],
        sessions: Sequence[SessionState | None] | None = None,
        *,
        explain: bool = False,
        tags: Iterable[str] | None = None,
        config: MatchConfig | None = None,
        query_vectors: Sequence[np.ndarray] | None = None,
        embedder: Embedder | None = None,
    ) -> list[MatchResult]:
        """:meth:`match` for many messages with one embedding call; result ``i`` equals ``match(messages[i])``."""
        with span("norma.match", {"norma.tenant": self.tenant_id, "norma.rules.count": len(self)}) as traced:
            results = self._match_many(messages, sessions, explain, tags, config, query_vectors, embedder)
            if traced.recording:
                top = results[0][0].rule.id if len(results) == 1 and results[0] else None
                gate = results[0].gate if results else None
                traced.set(
                    {
                        "norma.messages.count": len(results),
                        "norma.matches.count": sum(map(len, results)),
                        "norma.match.top_rule_id": top,
                        "norma.match.threshold": None if gate is None else gate.threshold,
                    }
                )
                if len(results) == 1:
                    traced.content("norma.message", messages[0])
        return results

    def _match_many(
        self,
        messages: Sequence[str],
        sessions: Sequence[SessionState | None] | None,
        explain: bool,
        tags: Iterable[str] | None,
        config: MatchConfig | None,
        query_vectors: Sequence[np.ndarray] | None,
        embedder: Embedder | None,
    ) -> list[MatchResult]:
        items = check_messages(messages)
        if sessions is not None and len(sessions) != len(items):
            raise InvalidInputError(f"{len(items)} messages but {len(sessions)} sessions", location="sessions")
        if config is not None and not isinstance(config, MatchConfig):
            raise InvalidInputError(f"config must be a MatchConfig, not {type(config).__name__}")
        for session in sessions or ():
            if session is not None and not isinstance(session, SessionState):
                raise InvalidInputError(f"session must be a SessionState, not {type(session).__name__}")
        if query_vectors is not None and embedder is not None:
            raise InvalidInputError("pass query_vectors or an embedder, not both")
        cfg = config or self.config
        check_message_sizes(items, cfg.max_message_chars)
        wanted = wanted_tags(tags)
        if query_vectors is not None:
            if len(query_vectors) != len(items):
                raise InvalidInputError(f"{len(items)} messages but {len(query_vectors)} vectors")
            pairs = enumerate(zip(items, query_vectors, strict=True))
            queries: list[np.ndarray | None] = [
                None if not m.strip() else checked_query_vector(v, i) for i, (m, v) in pairs
            ]
        elif len(self) == 0:
            queries = [None] * len(items)
        else:
            queries = embed_messages(embedder or self.embedder, items, cfg)
        gate = self.gate(cfg)
        refit = self.refit
        if cfg.threshold == "auto":
            cfg = cfg.model_copy(update={"threshold": gate.threshold})
        with self._lock:
            index = self._index
            stats = self._stats_of(index)
            results = [
                match_one(index, self._buffers, items[i], queries[i], sessions[i] if sessions else None, wanted, cfg,
                          explain, stats, gate.score, refit)
                for i in range(len(items))
            ]  # fmt: skip
        for result in results:
            result.gate = gate
        return results
