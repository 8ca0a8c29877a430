"""A store's tenants, each ready to use: :class:`Tenants` gives the :class:`~norma.turns.Norma` of a tenant's current
rules, built once per version, with the one judge, the one message embedder and the audit's documents of its owner.

The HTTP service and the MCP server hold one; they never build a :class:`~norma.turns.Norma` themselves. While the
store is unreachable, :meth:`Tenants.cached` gives the last one with when the store last confirmed its version, so a
server can go on answering from memory.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING

from norma.turns._open import Norma, judge_of

if TYPE_CHECKING:
    from norma.audit import DocumentSet
    from norma.embeddings import Embedder
    from norma.llm import Judge, JudgeCachePolicy, LLMClient
    from norma.matching import MatchConfig, RuleMatcher, TenantMatchers
    from norma.store import RuleStore

__all__ = ["Tenants"]


class Tenants:
    """The tenants of one rule store, each a :class:`~norma.turns.Norma` at its current rules version.

    Args:
        store: the rule store.
        judge: the judge of ``judge`` checks, made once on first use: ``"memory"`` (default: the LLM of
            ``$NORMA_LLM_URL`` or ``llm``, its votes kept in memory), ``"user"``, ``"none"``, a
            :class:`~norma.llm.Judge`, or None (``judge`` checks skipped).
        llm: the judge's LLM (default: ``$NORMA_LLM_URL``'s).
        embedder: what embeds the messages matched and checked (a :class:`~norma.embeddings.BatchingEmbedder`
            shared by a server's concurrent requests, say); None: each matcher's own.
        documents: the audit's documents (a :class:`~norma.audit.DocumentSet`, or a folder), for checks that ask
            for the audit.
        config: the matching configuration.

    The matchers are the store's (:func:`norma.matching.tenant_matchers`: built from the stored vectors, refreshed
    when a tenant's version changes, the vectors the store lacks embedded once and saved). Thread-safe.
    """

    def __init__(
        self,
        store: RuleStore,
        *,
        judge: Judge | JudgeCachePolicy | None = "memory",
        llm: LLMClient | None = None,
        embedder: Embedder | None = None,
        documents: DocumentSet | str | os.PathLike[str] | None = None,
        config: MatchConfig | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.documents = documents
        self.config = config
        self._judge_choice = judge
        self._llm = llm
        self._judge: Judge | None = None
        self._judge_made = False
        self._lock = threading.Lock()
        self._made: dict[str, tuple[int, RuleMatcher, Norma]] = {}

    def __repr__(self) -> str:
        return f"Tenants({self.store!r})"

    @property
    def matchers(self) -> TenantMatchers:
        """The store's tenant matchers (one per store object)."""
        from norma.matching import tenant_matchers

        return tenant_matchers(self.store)

    def judge(self) -> Judge | None:
        """The judge of ``judge`` checks, made on first use (None: none, they are skipped)."""
        if not self._judge_made:
            with self._lock:
                if not self._judge_made:
                    self._judge = judge_of(self._judge_choice, self._llm)
                    self._judge_made = True
        return self._judge

    def get(self, tenant: str) -> Norma:
        """The tenant's rules at their current version (the matcher brought up to date when the version changed).

        Raises:
            InvalidInputError: a tenant id that is not one.
            StoreUnavailableError: the store does not answer (:meth:`cached` has what was last served).
        """
        matchers = self.matchers
        matcher = matchers.get(tenant, config=self.config)
        cached = matchers.cached(tenant, config=self.config)
        version = cached[1] if cached is not None else self.store.version(tenant)
        return self._norma(tenant, matcher, version)

    def cached(self, tenant: str) -> tuple[Norma, float] | None:
        """The tenant's rules as :meth:`get` last returned them, without asking the store, with when (seconds since
        the epoch) the store last confirmed that version was current; None when there is none."""
        found = self.matchers.cached(tenant, config=self.config)
        if found is None:
            return None
        matcher, version, confirmed = found
        return self._norma(tenant, matcher, version), confirmed

    def _norma(self, tenant: str, matcher: RuleMatcher, version: int) -> Norma:
        with self._lock:
            made = self._made.get(tenant)
        if made is not None and made[0] == version and made[1] is matcher:
            return made[2]
        rules = Norma(
            matcher, rules_version=version, judge=self.judge(), documents=self.documents, embedder=self.embedder
        )
        with self._lock:
            self._made[tenant] = (version, matcher, rules)
        return rules
