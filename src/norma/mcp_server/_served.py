"""What the server serves (a rulebook file, a rule store, audit documents) and one library call per tool.

Nothing here knows MCP: each method takes plain arguments, makes the library call the CLI makes, and returns its
result as a model (the library's own, or one of :mod:`._outputs` composed of them) whose JSON is what the CLI's
``--format json`` prints; a problem is a :class:`~norma.errors.NormaError`.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from norma.errors import ConfigError, InvalidInputError, NormaError, NotFoundError
from norma.mcp_server._outputs import (
    CheckTurnOutput,
    MatchRulesOutput,
    RuleListOutput,
    RuleSummary,
    ToolFailure,
)

if TYPE_CHECKING:
    from norma.audit import AuditReport, DocumentSet
    from norma.llm import Judge
    from norma.matching import MatchConfig, RuleMatcher
    from norma.names import NameScore
    from norma.rubrics import RubricScore
    from norma.store import Store
    from norma.turns import Norma, Tenants

__all__ = ["Served", "failure"]

_log = logging.getLogger("norma.mcp")


class Served:
    """The sources one server answers from, opened (and checked) once at start.

    Args:
        rules_file: a rulebook (YAML or JSON) the match and list tools use when no tenant is named.
        store_url: a rule store whose tenants the match and list tools take (``tenant`` argument); never created.
        audit_docs: the folder of normative documents ``audit_output`` (and ``check_turn`` with ``audit``) audits
            against (None: the rules that need documents are reported as not evaluated).

    ``judge`` checks of ``check_turn`` ask the LLM of ``$NORMA_LLM_URL`` (one judge per server, its verdicts cached in
    memory); without one they are skipped.

    Raises:
        RulebookError, NotFoundError, InvalidInputError, StoreError: a rulebook, store or folder that cannot be read
        (the server does not start).
    """

    def __init__(
        self, rules_file: Path | None = None, store_url: str | None = None, audit_docs: Path | None = None
    ) -> None:
        from norma.rules import load_rulebook

        self.rules_file = rules_file
        self.store_url = store_url
        if rules_file is not None:
            load_rulebook(rules_file)  # a bad file stops the server now, not at the first call
        self._documents: DocumentSet | None = None
        if audit_docs is not None:
            from norma.audit import load_documents

            self._documents = load_documents(audit_docs)
        self._store: Store | None = None
        if store_url is not None:
            from norma.store import open_store

            self._store = open_store(store_url, create=False)
        self._opened: Norma | None = None
        self._tenants: Tenants | None = None
        self._matcher_lock = threading.Lock()
        self._judge: Judge | None = None
        self._judge_made = False  # None after it: no LLM configured

    def close(self) -> None:
        """Close the store (if one is served)."""
        if self._store is not None:
            self._store.close()

    # --- match_rules and list_rules ---------------------------------------------------------------------------

    def match_rules(
        self,
        message: str,
        *,
        tenant: str | None = None,
        top_k: int | None = None,
        scenario: str | None = None,
        step: str | None = None,
        tags: Sequence[str] | None = None,
        explain: bool = False,
    ) -> MatchRulesOutput:
        """``norma match MESSAGE --format json`` against the rulebook, or ``--tenant TENANT``."""
        from norma.embeddings import get_embedder
        from norma.matching import MatchConfig, SessionState

        if not message.strip():
            raise InvalidInputError("the message is empty", location="message", hint="give the text to match")
        config: MatchConfig = MatchConfig() if top_k is None else MatchConfig().with_(max_matched=top_k)
        matcher = self._tenant_matcher(tenant) if tenant is not None else self._file_matcher()
        session = SessionState(active_scenario_id=scenario, active_step_id=step)
        result = matcher.match(
            message, session, explain=explain, tags=list(tags) if tags else None, config=config, embedder=get_embedder()
        )
        found = result.to_dict()
        if not explain:
            found.pop("dropped")
        return MatchRulesOutput.model_validate({"message": message, "rules": len(matcher), "tenant": tenant, **found})

    def list_rules(self, tenant: str | None = None) -> RuleListOutput:
        """The rules of the rulebook (read again, so an edited file shows) or of a stored tenant, sorted by id."""
        if tenant is not None:
            rules = self._tenant_store(tenant).list_rules(tenant)
        else:
            from norma.rules import load_rulebook

            rules = sorted(load_rulebook(self._rulebook()).rules, key=lambda rule: rule.id)
        summaries = [
            RuleSummary(
                id=rule.id,
                condition_text=rule.condition_text,
                action_text=rule.action_text,
                priority=rule.priority,
                scope=rule.scope.value,
                scenario_id=rule.scenario_id,
                step_id=rule.step_id,
                enabled=rule.enabled,
                tags=list(rule.tags),
            )
            for rule in rules
        ]
        return RuleListOutput(tenant=tenant, count=len(summaries), rules=summaries)

    def _rulebook(self) -> Path:
        if self.rules_file is None:
            hint = (
                "give the tenant argument: a tenant of the served store"
                if self._store is not None
                else "start the server with --rules FILE or --store URL"
            )
            raise ConfigError("this server serves no rulebook", location="tenant", hint=hint)
        return self.rules_file

    def _file_matcher(self) -> RuleMatcher:
        return self._file_rules().matcher

    def _file_rules(self) -> Norma:
        """The rulebook, opened once (:func:`norma.open`: compiled by the library, kept in the user's cache folder)
        and opened again once the file is edited (:meth:`Norma.fresh <norma.turns.Norma.fresh>`)."""
        from norma.turns import open as open_rules

        path = self._rulebook()
        judge = self.judge()
        with self._matcher_lock:
            opened = self._opened
            self._opened = (
                opened.fresh() if opened is not None else open_rules(path, judge=judge, documents=self._documents)
            )
            return self._opened

    def _tenant_store(self, tenant: str) -> Store:
        if self._store is None:
            raise ConfigError(
                f"this server serves no rule store, so no tenant {tenant!r}",
                location="tenant",
                hint="leave out the tenant to use the served rulebook, or start the server with --store URL",
            )
        if tenant not in self._store.tenants():
            from norma.store import redact_url

            known = ", ".join(self._store.tenants()) or "none"
            raise NotFoundError(
                f"tenant {tenant!r} has no rules in {redact_url(self._store.url)}",
                location="tenant",
                hint=f"the store's tenants: {known}",
            )
        return self._store

    def _tenant_matcher(self, tenant: str) -> RuleMatcher:
        return self._tenant_rules(tenant).matcher

    def _tenant_rules(self, tenant: str) -> Norma:
        """The tenant's rules at their current version (:class:`~norma.turns.Tenants`: the matcher kept per store,
        refreshed when the version changes) with this server's judge and documents."""
        store = self._tenant_store(tenant)
        with self._matcher_lock:
            if self._tenants is None:
                from norma.turns import Tenants

                self._tenants = Tenants(store, judge=self._made_judge(), documents=self._documents)
            tenants = self._tenants
        return tenants.get(tenant)

    # --- check_turn ---------------------------------------------------------------------------------------------

    def check_turn(
        self,
        message: str,
        output: str,
        *,
        tenant: str | None = None,
        session: Mapping[str, Any] | None = None,
        audit: bool = False,
    ) -> CheckTurnOutput:
        """``norma check -m MESSAGE -o OUTPUT --format json`` against the rulebook, or ``--tenant TENANT``: the
        turn's :class:`~norma.turns.TurnReport` with its counts (and ``tenant`` when one was named)."""
        if not message.strip():
            raise InvalidInputError("the message is empty", location="message", hint="give the user's message")
        rules = self._tenant_rules(tenant) if tenant is not None else self._file_rules()
        report = rules.check(message, output, session, audit=audit)
        return CheckTurnOutput(**report.json_fields(), tenant=tenant)

    def judge(self) -> Judge | None:
        """The judge of ``judge`` checks: the LLM of ``$NORMA_LLM_URL`` with an in-memory verdict cache, made once;
        None without an LLM (those checks are then skipped)."""
        with self._matcher_lock:
            return self._made_judge()

    def _made_judge(self) -> Judge | None:  # under self._matcher_lock
        if not self._judge_made:
            from norma.turns import judge_of

            self._judge = judge_of("memory", None)
            self._judge_made = True
        return self._judge

    # --- audit_output -------------------------------------------------------------------------------------------

    def audit_output(self, request: Mapping[str, Any], *, lang: str = "auto", embeddings: bool = True) -> AuditReport:
        """``norma audit REQUEST.json --format json`` for one request (the report, as the service answers it)."""
        from norma.audit import analyze
        from norma.llm import get_llm

        config = {"embeddings": embeddings, "lang": None if lang == "auto" else lang}
        return analyze(request, self._documents, config, llm=get_llm())

    # --- score_rubric -------------------------------------------------------------------------------------------

    def score_rubric(
        self,
        rubric: Mapping[str, Any] | str,
        *,
        events: Sequence[Any] | None = None,
        outcome: Mapping[str, Any] | None = None,
        enforce_required: bool = False,
        pass_threshold: float | None = None,
        aggregator: str | None = None,
    ) -> RubricScore:
        """``norma rubric eval``: a rubric (a JSON object, or the path of a JSON / YAML file) and events or an outcome
        turned into a reward."""
        import pydantic

        from norma.rubrics import RubricError, RubricScore, evaluate_rubric, load_rubric_file, validation_issues

        try:
            loaded = load_rubric_file(rubric) if isinstance(rubric, str) else rubric
            scored = evaluate_rubric(
                loaded,
                events=events,
                outcome=outcome,
                enforce_required=enforce_required,
                pass_threshold=pass_threshold,
                aggregator=aggregator,
            )
        except pydantic.ValidationError as exc:  # a rubric object that does not fit the format
            first = validation_issues(exc)[0]
            raise RubricError(
                first.message,
                source="rubric",
                location=first.path or None,
                hint="see `norma rubric schema` for the format",
            ) from None
        return RubricScore.model_validate(scored)

    # --- score_name_variations ----------------------------------------------------------------------------------

    def score_name_variations(
        self,
        name: str,
        variations: Sequence[str],
        labels: Mapping[str, Any],
        *,
        compat: str = "miid",
        hash_seed: int = 0,
        metrics: bool = False,
    ) -> NameScore:
        """One row of ``norma names score --format json``: the validator's score of ``variations`` for ``name``."""
        from norma.names import NameScore, score_record

        record = {"name": name, "variations": list(variations), "labels": dict(labels)}
        scored = score_record(record, compat=compat, metrics=metrics, hash_seed=hash_seed)
        return NameScore.model_validate({"compat": compat, "hash_seed": hash_seed, **scored})


def failure(tool: str, exc: BaseException) -> ToolFailure:
    """The what / where / hint of a failed call; an exception norma did not raise on purpose is an InternalError
    (logged with its traceback)."""
    if isinstance(exc, NormaError):
        return ToolFailure(
            error=type(exc).__name__, message=exc.message, source=exc.source, location=exc.location, hint=exc.hint
        )
    _log.error("tool %s failed unexpectedly", tool, exc_info=exc)
    return ToolFailure(
        error="InternalError",
        message=f"{type(exc).__name__}: {exc}",
        source=tool,
        hint="a bug in norma: the server's log (stderr) has the traceback; please report it",
    )
