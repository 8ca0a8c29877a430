"""Asserting that an AI output passes the IR.x.y audit (:func:`norma.audit.analyze`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from norma.testing._failures import AuditAssertionError

if TYPE_CHECKING:
    from norma.audit import AuditConfig, AuditReport, DocumentSet, Violation
    from norma.embeddings import Embedder
    from norma.rules import FailOn

    FailOnName = FailOn | Literal["error", "warning"]
    """What fails an assertion (:class:`norma.rules.FailOn`): an ERROR violation (``"error"``, the audit's own FAIL), or
    also a WARNING."""

__all__ = ["Auditor", "assert_audit_passes"]


class Auditor:
    """Audits outputs against one set of documents and one configuration, loaded once (the ``norma_audit`` fixture).

    Args:
        documents: the normative documents (a :class:`~norma.audit.DocumentSet` or a folder, loaded on the first
            audit); ``None``: the rules that need documents are reported as not evaluated.
        config: an :class:`~norma.audit.AuditConfig`, a mapping of its fields, or a thresholds JSON file.
        embedder: the embedding model (default: the shared all-MiniLM-L6-v2, loaded on first need).
    """

    def __init__(
        self,
        documents: DocumentSet | str | Path | None = None,
        config: AuditConfig | Mapping[str, Any] | str | Path | None = None,
        *,
        embedder: Embedder | None = None,
    ) -> None:
        self._documents = documents
        self._config = config
        self.embedder = embedder
        self._shown = f"Auditor(documents={_describe(documents)}, config={_describe(config)})"

    def __repr__(self) -> str:
        return self._shown

    @property
    def config(self) -> AuditConfig:
        """The configuration, parsed (a file is read on first use)."""
        from norma.audit import AuditConfig, load_config

        if not isinstance(self._config, AuditConfig):
            if isinstance(self._config, str | Path):
                self._config = load_config(self._config)
            else:
                self._config = AuditConfig.parse(self._config)
        return self._config

    @property
    def documents(self) -> DocumentSet | None:
        """The documents, loaded on first use (``None`` when none were given)."""
        from norma.audit import load_documents

        if isinstance(self._documents, str | Path):
            config = self.config
            self._documents = load_documents(self._documents, limits=config.limits, norms=config.norms)
        return self._documents

    def __call__(
        self, output: str, *, input: str | None = None, request: Mapping[str, Any] | None = None
    ) -> AuditReport:
        """The audit of ``output`` as the answer to ``input`` (or to ``request``, whose other fields it keeps)."""
        from norma.audit import analyze

        return analyze(_request(output, input, request), self.documents, self.config, embedder=self.embedder)

    def assert_passes(
        self,
        output: str,
        *,
        input: str | None = None,
        request: Mapping[str, Any] | None = None,
        rules: Iterable[str] | None = None,
        fail_on: FailOnName = "error",
    ) -> AuditReport:
        """Assert that ``output`` passes the audit: no ERROR violation (``fail_on="warning"``: no WARNING either)
        among ``rules`` (rule ids; default: every rule). Returns the report; raises :class:`AuditAssertionError`."""
        __tracebackhide__ = True
        report = self(output, input=input, request=request)
        _check(report, rules=rules, fail_on=fail_on)
        return report


def assert_audit_passes(
    output: str,
    *,
    input: str | None = None,
    request: Mapping[str, Any] | None = None,
    documents: DocumentSet | str | Path | None = None,
    config: AuditConfig | Mapping[str, Any] | str | Path | None = None,
    rules: Iterable[str] | None = None,
    fail_on: FailOnName = "error",
    embedder: Embedder | None = None,
) -> AuditReport:
    """Assert that an AI output passes the IR.x.y audit, and return the report.

    Args:
        output: the AI's answer; the violation lines are its 1-based lines.
        input: the user's prompt (the request's ``input``); required unless ``request`` has one.
        request: the other fields of the audit request (``context_type``, ``active_documents``,
            ``document_versions``, ``reruns``; see ``norma audit schema``).
        documents: the normative documents, a :class:`~norma.audit.DocumentSet` or a folder.
        config: an :class:`~norma.audit.AuditConfig`, a mapping of its fields, or a thresholds JSON file.
        rules: only the violations of these rule ids count (default: every rule's).
        fail_on: ``"error"`` (default): an ERROR violation fails, as the audit's FAIL; ``"warning"``: a WARNING too.
        embedder: the embedding model (default: the shared all-MiniLM-L6-v2).

    Raises:
        AuditAssertionError: a violation that counts; the message lists each with rule id, severity and line.
        InvalidInputError: no ``input``, or a request the audit refuses.
    """
    __tracebackhide__ = True
    auditor = Auditor(documents, config, embedder=embedder)
    return auditor.assert_passes(output, input=input, request=request, rules=rules, fail_on=fail_on)


def _check(report: AuditReport, *, rules: Iterable[str] | None = None, fail_on: FailOnName = "error") -> None:
    """Raise :class:`AuditAssertionError` when ``report`` has a violation that counts (:func:`assert_audit_passes`)."""
    __tracebackhide__ = True
    from norma.audit import RuleStatus, severity_label, verdict_label
    from norma.rules import FailOn

    failing = FailOn.parse(fail_on).severities
    wanted = None if rules is None else ({rules} if isinstance(rules, str) else set(rules))
    shown = [v for v in report.violations if wanted is None or v.rule in wanted]
    counted = [v for v in shown if v.severity in failing]
    if not counted:
        return
    counts = {s: sum(v.severity is s for v in counted) for s in failing}
    severities = ", ".join(f"{n} {severity_label(s)}" for s, n in counts.items() if n)
    ids = ", ".join(dict.fromkeys(v.rule for v in counted))
    summary = f"audit {verdict_label(report.result)}: {len(counted)} violation(s) ({severities}): {ids}"
    details = [_violation_line(v) for v in shown]
    skipped = [o for o in report.rules if o.status is RuleStatus.NOT_EVALUATED and (wanted is None or o.rule in wanted)]
    details += [f"{o.rule} not evaluated: {o.reason}" for o in skipped]
    raise AuditAssertionError(summary, details, report)


def _describe(value: object) -> str:
    """A path as its text, nothing as None, anything else by its type (a loaded document set is long)."""
    if value is None or isinstance(value, str | Path):
        return repr(None if value is None else str(value))
    return f"<{type(value).__name__}>"


def _violation_line(violation: Violation) -> str:
    """``IR.7.01 ERROR output line 3: description (evidence: 'text')``."""
    from norma.audit import severity_label

    evidence = f" (evidence: {violation.evidence!r})" if violation.evidence else ""
    severity = severity_label(violation.severity)
    return f"{violation.rule} {severity} {violation.location}: {violation.description}{evidence}"


def _request(output: str, input: str | None, request: Mapping[str, Any] | None) -> dict[str, Any]:
    from norma.errors import InvalidInputError

    if not isinstance(output, str):
        raise InvalidInputError(f"the output to audit must be a string, not {type(output).__name__}", location="output")
    data = dict(request or {})
    data["output"] = output
    if input is not None:
        data["input"] = input
    if "input" not in data:
        raise InvalidInputError(
            "no input to audit the output against",
            location="input",
            hint="give the user's prompt: input='...' (or request={'input': '...'})",
        )
    return data
