"""The one way in: :func:`open` a rulebook or a stored tenant once, then match, check and audit through the
:class:`Norma` it returns.

A :class:`Norma` holds what is derived from one version of the rules: the compiled matcher (its indexes, vectors
and gate), the judge of ``judge`` checks and the audit's documents, and checks turns with them (the internal
:class:`~norma.turns._checker.TurnChecker` does the work; only :class:`Norma` hands it turns). The CLI, the HTTP
service, the MCP server and :mod:`norma.testing` all reach the rules through it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from norma.errors import InvalidInputError
from norma.matching import MatchResult, RuleMatcher, SessionState
from norma.rules import Rule
from norma.turns._checker import Turn, TurnChecker, _turn, _turns, checked_message
from norma.turns._report import TurnReport

if TYPE_CHECKING:
    from norma.audit import AuditConfig, AuditReport, DocumentSet
    from norma.embeddings import Embedder
    from norma.llm import Judge, JudgeCachePolicy, LLMClient
    from norma.matching import MatchConfig
    from norma.store import RuleStore
    from norma.turns._coverage_report import Coverage
    from norma.turns._diff_report import RulebookDiff

__all__ = ["Norma", "open"]

_JUDGE_POLICIES = ("user", "memory", "none")


def _stamp(path: Path) -> tuple[int, int] | None:
    """What tells an edited file from the one compiled: its modification time and size (None: unreadable)."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


@overload
def judge_of(judge: Judge | JudgeCachePolicy, llm: LLMClient) -> Judge: ...
@overload
def judge_of(judge: Judge | JudgeCachePolicy | None, llm: LLMClient | None) -> Judge | None: ...
def judge_of(judge: Judge | JudgeCachePolicy | None, llm: LLMClient | None) -> Judge | None:
    """The judge :func:`open` and :class:`~norma.turns.Tenants` make of their ``judge`` and ``llm`` arguments: the one
    place norma makes a judge (``norma rubric judge`` too). A cache policy with ``llm`` None asks
    :func:`~norma.llm.get_llm` (None without an LLM configured: no judge)."""
    from norma.llm import Judge, get_llm, make_judge

    if judge is None or isinstance(judge, Judge):
        return judge
    if judge not in _JUDGE_POLICIES:
        raise InvalidInputError(
            f"judge must be a Judge, None or one of {', '.join(_JUDGE_POLICIES)}, not {judge!r}",
            location="judge",
            hint="'user' keeps votes in the user cache file, 'memory' in memory, 'none' nowhere; None: no judge",
        )
    return make_judge(llm if llm is not None else get_llm(), cache=judge)


class Norma:
    """One rulebook or one stored tenant, ready to match, check and audit (built by :func:`open`).

    Everything derived from the rules is built once here, for the rules version this object reflects: the
    matcher and the judge; :meth:`check`, :meth:`check_many` and :meth:`review` are the turn check. Thread-safe for
    matching and checking.

    Args:
        matcher: the compiled rules.
        rules_version: the version of a stored tenant's rules (None for a file).
        judge: the judge of ``judge`` checks (None: they are skipped).
        audit: whether :meth:`check` also runs the IR.x.y audit by default.
        documents: the audit's normative documents (a folder or a :class:`~norma.audit.DocumentSet`).
        audit_config: the audit's configuration.
        source: the rulebook file the rules were read from, when they were (:meth:`fresh` re-reads it once edited).
        embedder: what embeds the messages :meth:`match` and :meth:`check` are given (a service's shared
            :class:`~norma.embeddings.BatchingEmbedder`, say); None: the matcher's own.
    """

    def __init__(
        self,
        matcher: RuleMatcher,
        *,
        rules_version: int | None = None,
        judge: Judge | None = None,
        audit: bool = False,
        documents: DocumentSet | str | os.PathLike[str] | None = None,
        audit_config: AuditConfig | Mapping[str, Any] | None = None,
        source: Path | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.matcher = matcher
        self.embedder = embedder
        self._checker = TurnChecker(
            matcher,
            judge=judge,
            audit=audit,
            documents=documents,
            audit_config=audit_config,
            rules_version=rules_version,
        )
        self.source = source
        self._stamp = None if source is None else _stamp(source)

    def __repr__(self) -> str:
        where = str(self.source) if self.source is not None else f"tenant {self.tenant_id!r}"
        return f"Norma({where}, {len(self.matcher)} rules, version {self.rules_version})"

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules, as compiled."""
        return tuple(self.matcher.rules)

    @property
    def tenant_id(self) -> str:
        """The tenant the rules belong to (a rulebook file's is its ``tenant_id``, ``default`` without one)."""
        return self.matcher.tenant_id

    @property
    def rules_version(self) -> int | None:
        """The stored tenant's rules version this object reflects (None for a file)."""
        return self._checker.rules_version

    @property
    def judge(self) -> Judge | None:
        """The judge of ``judge`` checks (None: they are skipped)."""
        return self._checker.judge

    def fresh(self) -> Norma:
        """This object while its rulebook file is unchanged; once the file is edited, a new one over the new rules
        (same judge, audit and configuration). Objects over a tenant or over rules in memory return themselves:
        open the tenant again for its new version."""
        if self.source is None or (_stamp(self.source) == self._stamp and self._stamp is not None):
            return self
        from norma.matching import file_matcher

        checker = self._checker
        return Norma(
            file_matcher(self.source, self.matcher.config),
            judge=checker.judge,
            audit=checker.audit,
            documents=checker.documents,
            audit_config=checker.audit_config,
            source=self.source,
            embedder=self.embedder,
        )

    def match(
        self,
        message: str,
        session: SessionState | Mapping[str, Any] | None = None,
        *,
        explain: bool = False,
        tags: Sequence[str] | None = None,
        config: MatchConfig | None = None,
        embedder: Embedder | None = None,
        allow_empty: bool = False,
    ) -> MatchResult:
        """The rules that apply to ``message``, best first (:meth:`norma.matching.RuleMatcher.match`).

        ``allow_empty``: a blank message matches nothing instead of being refused (a turn whose user message holds
        only tool calls or images: its ``when: always`` rules still check the answer).

        Raises:
            InvalidInputError: a message that is not text or is empty (or only whitespace: ``norma match`` refuses
                it too, unless ``allow_empty``), or a session that does not fit.
            LimitExceededError: a message over the matcher's size limit.
        """
        if not (allow_empty and isinstance(message, str) and not message.strip()):
            checked_message(message, "message", "give the text to match")
        state = SessionState.from_mapping(session) if isinstance(session, Mapping) else session
        embedder = embedder if embedder is not None else self.embedder
        return self.matcher.match(message, state, explain=explain, tags=tags, config=config, embedder=embedder)

    def check(
        self,
        message: str,
        output: str,
        session: SessionState | Mapping[str, Any] | None = None,
        *,
        audit: bool | None = None,
        embedder: Embedder | None = None,
    ) -> TurnReport:
        """The turn check of ``output``, the AI's answer to ``message``: the rules that apply to the message
        (``session``: the conversation's state, for scoped rules and cooldowns), the output checked against each, a
        reward. ``audit`` overrides the default given to :func:`open`; ``embedder`` embeds the message (a shared
        :class:`~norma.embeddings.BatchingEmbedder`, say).

        Raises:
            InvalidInputError: a message that is not text or is empty (or only whitespace), an output that is not
                text, or a session that does not fit (``location``: ``message``, ``output``, ``session``).
            LimitExceededError: a message over the matcher's size limit.
        """
        embedder = embedder if embedder is not None else self.embedder
        return self._checker.reports([_turn(message, output, session, "")], audit, embedder)[0]

    @property
    def always_rules(self) -> tuple[Rule, ...]:
        """The enabled rules with a ``when: always`` check: they check every answer, matched or not."""
        return self.matcher.always_rules

    def review(self, message: str, output: str, match: MatchResult, *, audit: bool | None = None) -> TurnReport:
        """The turn check of ``output`` against a match of ``message`` already made (:meth:`match`): the message is
        not matched again. For callers that match first and check later (the guard: the rules go into the prompt
        before the model answers; batch jobs that embed many messages at once).

        Raises:
            InvalidInputError: an output that is not text.
        """
        return self._checker.report(message, output, match, audit=audit)

    def check_many(self, turns: Iterable[Turn], *, audit: bool | None = None) -> list[TurnReport]:
        """:meth:`check` for many turns, with one embedding call for the messages: each a ``(message, output)``
        pair, a ``(message, output, session)`` triple or a turn record as ``norma check --batch`` reads them
        (``{"message": ..., "output": ..., "session": ..., "id": ...}``, ``session`` and ``id`` optional).

        Raises:
            InvalidInputError: ``turns`` is not a list, or turn ``i`` is none of these, or fails :meth:`check`'s
                checks (``location``: ``turns[i]``, ``turns[i].message``...); nothing is checked then.
            LimitExceededError: a message over the matcher's size limit.
        """
        return self._checker.reports(_turns(turns), audit, self.embedder)

    def diff(
        self, new: Norma, turns: Iterable[Turn], *, progress: Callable[[int, int], None] | None = None
    ) -> RulebookDiff:
        """What changing these rules to ``new`` does to recorded ``turns`` (as :meth:`check_many` takes them): each
        turn checked against both, the turns that changed with the evidence, by rule and by rule edit (docs/diff.md;
        ``norma rules diff``). ``progress`` is called with (turns done, turns in all).

        Raises:
            InvalidInputError: the two embed with different models; turn ``i`` is not a turn (``location``:
                ``turns[i]``...). Nothing is checked then.
            LimitExceededError: a message longer than a matcher accepts.
        """
        from norma.turns._diff import diff_turns

        return diff_turns(self, new, turns, progress=progress)

    def coverage(self, messages: Iterable[Any], *, progress: Callable[[int, int], None] | None = None) -> Coverage:
        """What these rules cover on recorded ``messages`` (texts, or turn records whose ``output`` is optional):
        each rule's share, the rules that govern none, the ungoverned messages clustered, the rules that compete
        (docs/diff.md, "Coverage"; ``norma rules coverage``). ``progress`` is called with (messages done, in all).

        Raises:
            InvalidInputError: message ``i`` is neither (``location``: ``messages[i]``...). Nothing is matched then.
            LimitExceededError: a message longer than the matcher accepts.
        """
        from norma.turns._coverage import coverage

        return coverage(self, messages, progress=progress)

    def audit(self, output: str, message: str = "") -> AuditReport:
        """The IR.x.y audit of ``output`` (the answer to ``message``) against the documents given to :func:`open`
        (:func:`norma.audit.analyze`)."""
        return self._checker.audit_of(message, output)


def open(
    rules: RuleMatcher | Sequence[Rule] | str | os.PathLike[str] | None = None,
    *,
    tenant: str | None = None,
    version: int | None = None,
    store: RuleStore | str | None = None,
    config: MatchConfig | None = None,
    judge: Judge | JudgeCachePolicy | None = "user",
    llm: LLMClient | None = None,
    audit: bool = False,
    documents: DocumentSet | str | os.PathLike[str] | None = None,
    audit_config: AuditConfig | Mapping[str, Any] | None = None,
) -> Norma:
    """Open a rulebook or a stored tenant: the :class:`Norma` from which its rules are matched, checked and audited.

    Args:
        rules: a rulebook file (YAML or JSON; compiled once and kept in the user's cache folder), rules, or a
            :class:`~norma.matching.RuleMatcher`. Give ``rules`` or ``tenant``.
        tenant: a stored tenant, read at its current version from ``store``.
        version: with ``tenant``, an earlier version of its rules instead (as they were after that change, with the
            calibrated gate in force then; ``norma rules history`` lists the versions); nothing is written. With a
            :class:`~norma.matching.RuleMatcher` of a stored tenant's rules (a batch worker's, built from the store
            pinned to one version), the version they are: each :class:`TurnReport` reports it.
        store: a rule store, or its URL (default: ``$NORMA_DB_URL``, else ``./.norma/norma.db``; never created).
        config: the matching configuration.
        judge: the judge of ``judge`` checks: ``"user"`` (default: the LLM of ``$NORMA_LLM_URL``, its votes kept in
            the user cache file, so a re-run asks the model nothing), ``"memory"`` (votes in memory, for a long
            running process), ``"none"`` (no cache), a :class:`~norma.llm.Judge`, or None (no judge: ``judge``
            checks are skipped, as they are without an LLM).
        llm: the LLM of the judge (default: ``$NORMA_LLM_URL``'s).
        audit: also run the IR.x.y audit in :meth:`Norma.check` by default.
        documents: the audit's normative documents folder (or a :class:`~norma.audit.DocumentSet`).
        audit_config: the audit's configuration.

    Raises:
        InvalidInputError: neither or both of ``rules`` and ``tenant``; a ``version`` without a tenant or a matcher;
            a bad ``judge``.
        RulebookError: a rulebook file that cannot be read.
        NotFoundError: no store at ``store``, or no rules of ``tenant`` in it, or no such ``version``.
    """
    if (rules is None) == (tenant is None):
        raise InvalidInputError(
            "give the rules or a tenant (one of them)",
            location="rules" if rules is not None else "tenant",
            hint="norma.open('rulebook.yaml') or norma.open(tenant='acme', store='sqlite:///rules.db')",
        )
    if version is not None and tenant is None and not isinstance(rules, RuleMatcher):
        raise InvalidInputError("a version goes with a tenant", location="version", hint="give tenant= too")
    if store is not None and tenant is None:
        raise InvalidInputError("a store goes with a tenant", location="store", hint="give tenant= too")
    chosen = judge_of(judge, llm)
    options: dict[str, Any] = {"judge": chosen, "audit": audit, "documents": documents, "audit_config": audit_config}
    if tenant is not None and version is not None:
        from norma.turns._versions import version_matcher

        return Norma(version_matcher(tenant, version, store, config), rules_version=version, **options)
    if tenant is not None:
        matcher, current = _tenant(tenant, store, config)
        return Norma(matcher, rules_version=current, **options)
    if isinstance(rules, RuleMatcher):
        return Norma(rules, rules_version=version, **options)
    if isinstance(rules, str | os.PathLike):
        from norma.matching import file_matcher

        path = Path(rules)
        return Norma(file_matcher(path, config), source=path, **options)
    if isinstance(rules, Sequence) and not isinstance(rules, str) and all(isinstance(r, Rule) for r in rules):
        return Norma(RuleMatcher([r for r in rules if isinstance(r, Rule)], config), **options)
    raise InvalidInputError(
        f"rules must be a rulebook path, a sequence of Rule or a RuleMatcher, not {type(rules).__name__}",
        location="rules",
    )


def _tenant(tenant: str, store: RuleStore | str | None, config: MatchConfig | None) -> tuple[RuleMatcher, int]:
    """A stored tenant's matcher as stored now (nothing written to the store) and the version it reflects."""
    from norma.matching import snapshot_matcher

    if store is None or isinstance(store, str):
        from norma.store import open_tenant_store

        with open_tenant_store(tenant, store) as opened:
            return snapshot_matcher(opened, tenant, config=config), opened.version(tenant)
    if tenant not in store.tenants():
        from norma.errors import NotFoundError

        raise NotFoundError(f"tenant {tenant!r} has no rules in {store.url}", location="tenant")
    return snapshot_matcher(store, tenant, config=config), store.version(tenant)
