"""The rule matcher: a tenant's rules compiled into an immutable index, matched to messages per ADR-002.

A :class:`RuleMatcher` holds one :class:`~norma.matching._index.MatchIndex` (``_index.py``) and replaces it on every
update (``_compile.py``: copy-on-write, so an update costs about what it changes). A match runs the stages of
``_pipeline.py`` over it: candidates by scope, enabled and tag filter -> the vector candidates (the int8 scan's
bounds, a float32 scan, or an HNSW index above ``hnsw_min_rows`` vectors) -> BM25 of every candidate -> the vector
top and BM25 top rescored exactly in float64 -> hybrid and final scores -> threshold and session filters (max
fires, cooldown) -> sort by (-final, -priority, id), the first ``max_matched`` -> explanations.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

import numpy as np

from norma.embeddings import Embedder, adapted_gate_of, get_embedder, trained_lookup, trained_share
from norma.errors import InvalidInputError, NotFoundError
from norma.matching._buffers import ScoreBuffers
from norma.matching._compile import IndexBuilder, check_batch, check_dims, checked_vectors
from norma.matching._config import MatchConfig
from norma.matching._gate import (
    ADAPTED_STALE_SHARE,
    AppliedGate,
    UnseenProbes,
    adapted_gate,
    applied_gate,
    gate_band,
    probe_similarities,
    quantile_setting,
    rulebook_gate,
    rulebook_gate_key,
    unseen_probes,
)
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
    ) -> None:
        if config is not None and not isinstance(config, MatchConfig):
            raise InvalidInputError(f"config must be a MatchConfig, not {type(config).__name__}")
        self.config = config if config is not None else MatchConfig()
        self._embedder = embedder
        self._lock = threading.RLock()
        self._index = MatchIndex.empty()
        self._free_slots: list[int] = []  # slots of removed rules, reused first (updates only, under the lock)
        self._buffers = ScoreBuffers()
        self._calibration: AppliedGate | None = None
        self._gate_quantile: float | None = None
        self._tuned: tuple[MatchConfig, float, MatchConfig] | None = None  # the last config given the setting
        self._marked: tuple[AppliedGate, AppliedGate] | None = None  # the last measured gate, marked as the tenant's
        self._rulebook_gate: tuple[MatchIndex, tuple[float, int, float | None, float | None], AppliedGate] | None
        self._rulebook_gate = None
        self._adapted: tuple[Embedder | None, tuple[list[float], dict[str, object]] | None] | None = None
        self._trained_share: tuple[MatchIndex, dict[str, object], float | None, UnseenProbes | None, int] | None = None
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
    def calibration(self) -> AppliedGate | None:
        """The calibrated gate set on this matcher (:meth:`set_calibration`), None when it has none."""
        return self._calibration

    def set_calibration(self, gate: AppliedGate | None) -> None:
        """Use ``gate`` (a ``calibrated`` similarity gate, see :func:`~norma.matching.calibrate_gate`) as the
        automatic gate (``threshold="auto"``); None goes back to the rulebook's own gate. A gate calibrated with
        another model (its ``model`` term) is ignored, with a warning: its threshold is on other similarities."""
        if gate is not None and (gate.kind != "calibrated" or gate.score != "similarity"):
            raise InvalidInputError(f"set_calibration takes a calibrated similarity gate, not {gate.kind!r}")
        model = gate.terms.get("model") if gate is not None else None
        if gate is not None and model is not None and model != self.model_id:
            # a threshold on another encoder's similarities means nothing here (e.g. an adapted encoder)
            _LOG.warning(
                "ignoring a gate calibrated with model %s: this matcher embeds with %s (calibrate it again)",
                model,
                self.model_id,
            )
            gate = None
        self._calibration = gate

    @property
    def gate_quantile(self) -> float | None:
        """The quantile set on this matcher (:meth:`set_gate_quantile`, a tenant's stored setting), None when none."""
        return self._gate_quantile

    def set_gate_quantile(self, quantile: float | None) -> None:
        """Measure the automatic gate at ``quantile`` (a tenant's stored setting, see
        :func:`~norma.matching.quantile_setting`) unless a config sets ``gate_quantile`` itself; None goes back to
        the config's. A calibrated gate, when set, still comes first."""
        self._gate_quantile = None if quantile is None else quantile_setting(quantile)["gate_quantile"]

    def _gate_config(self, cfg: MatchConfig) -> MatchConfig:
        """``cfg`` with the matcher's quantile setting, unless ``cfg`` sets its own ``gate_quantile``."""
        quantile = self._gate_quantile
        if quantile is None or cfg.gate_quantile is not None:
            return cfg
        tuned = self._tuned
        if tuned is None or tuned[0] is not cfg or tuned[1] != quantile:  # validated once per config, not per match
            tuned = self._tuned = (cfg, quantile, cfg.with_(gate_quantile=quantile))
        return tuned[2]

    def remember_gate(self, gate: AppliedGate, config: MatchConfig | None = None) -> bool:
        """Use ``gate``, a ``rulebook`` gate measured earlier for these same rules (kept in a cache with the
        rulebook), instead of measuring it again; it holds until the rules change. Returns False (and keeps
        nothing) when it was measured with another quantile or probe limit than ``config``'s (default the
        matcher's)."""
        cfg = self._gate_config(config or self.config)
        if gate.kind != "rulebook":
            raise InvalidInputError(f"remember_gate takes a rulebook gate, not {gate.kind!r}")
        t = gate.terms
        key = rulebook_gate_key(cfg)
        if (t.get("quantile"), t.get("max_probes"), t.get("band_quantile"), t.get("margin")) != key:
            return False
        with self._lock:
            self._rulebook_gate = (self._index, key, gate)
        return True

    def probe_similarities(self, config: MatchConfig | None = None) -> tuple[np.ndarray, np.ndarray]:
        """What the rulebook gate measures, per probe (each sampled example text, its own text left out): the best
        similarity to the other texts of its rule, and to any other rule (-inf where there is none; for studies of
        the gate: ``benchmarks/matching_gate_methods.py``)."""
        with self._lock:
            return probe_similarities(self._index, config or self.config)

    def gate(self, config: MatchConfig | None = None) -> AppliedGate:
        """The gate a match with ``config`` (default the matcher's) applies now, with every term that set it."""
        cfg = config or self.config
        with self._lock:
            return applied_gate(cfg, self._automatic_gate(self._index, cfg) if cfg.threshold == "auto" else None)

    def _automatic_gate(self, index: MatchIndex, cfg: MatchConfig) -> AppliedGate:
        """Under the lock: the calibration, else the gate stored by an adapted encoder, else the rulebook gate of
        ``index`` (measured once per index); at the matcher's quantile setting unless ``cfg`` sets one."""
        if self._calibration is not None:
            return self._calibration
        return self._uncalibrated_gate(index, cfg)

    def measured_gate(self, config: MatchConfig | None = None) -> AppliedGate:
        """The automatic gate as measured, calibration or not: an adapted encoder's, else the rulebook's (at the
        matcher's quantile setting unless ``config`` sets one). What a calibration moves."""
        cfg = config or self.config
        with self._lock:
            return self._uncalibrated_gate(self._index, cfg)

    def _uncalibrated_gate(self, index: MatchIndex, cfg: MatchConfig) -> AppliedGate:
        tuned = self._gate_config(cfg)
        gate = self._measured_gate(index, tuned)
        if tuned is cfg:
            return gate
        marked = self._marked
        if marked is None or marked[0] is not gate:
            marked = self._marked = (gate, replace(gate, terms={**gate.terms, "quantile_source": "tenant"}))
        return marked[1]

    def _measured_gate(self, index: MatchIndex, cfg: MatchConfig) -> AppliedGate:
        if self._adapted is None or self._adapted[0] is not self._embedder:
            # read once per embedder; with none yet, the model directory the default embedder would load
            self._adapted = (self._embedder, adapted_gate_of(self._embedder))
        if self._adapted[1] is not None:
            similarities, measured = self._adapted[1]
            known = self._trained_share
            if known is None or known[0] is not index or known[1] is not measured or known[4] != cfg.gate_probes:
                # once per index version: how much of today's rulebook the encoder was adapted on, and the examples
                # it never saw (added since), measured like the rulebook gate's probes
                texts = (
                    text for slot in np.flatnonzero(index.alive[: index.size]) for text in index.texts_at[int(slot)]
                )
                share = trained_share(measured, texts)
                lookup = trained_lookup(measured)
                unseen = None if lookup is None or share is None or share >= 1.0 else unseen_probes(index, cfg, lookup)
                known = self._trained_share = (index, measured, share, unseen, cfg.gate_probes)
                if share is not None and share < ADAPTED_STALE_SHARE:
                    _LOG.warning(
                        "the encoder was adapted on %.0f%% of this rulebook's texts: its gate now also measures the "
                        "new examples, but adapting again may rank the new rules better (norma rules adapt)",
                        100 * share,
                    )
            return adapted_gate(similarities, measured, cfg, known[2], known[3])
        cached = self._rulebook_gate
        key = rulebook_gate_key(cfg)
        if cached is not None and cached[0] is index and cached[1] == key:
            return cached[2]
        gate = rulebook_gate(index, cfg)
        self._rulebook_gate = (index, key, gate)
        return gate

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
        with self._lock:
            index = self._index
            gate = applied_gate(cfg, self._automatic_gate(index, cfg) if cfg.threshold == "auto" else None)
            band = None
            if cfg.threshold == "auto":
                cfg = cfg.model_copy(update={"threshold": gate.threshold, "threshold_on": gate.score})
                band = gate_band(gate)
            results = [
                match_one(index, self._buffers, items[i], queries[i], sessions[i] if sessions else None, wanted, cfg,
                          explain, band)
                for i in range(len(items))
            ]  # fmt: skip
        for result in results:
            result.gate = gate
        return results
