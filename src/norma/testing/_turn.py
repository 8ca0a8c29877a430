"""Asserting that a turn passes the turn check (:meth:`norma.Norma.check`): the rules that apply to the message, the
output checked against each."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from norma.testing._audit import _violation_line
from norma.testing._failures import TurnAssertionError
from norma.testing._match import rulebook_matcher

if TYPE_CHECKING:
    from norma.checks import CheckResult
    from norma.matching import RuleMatcher, SessionState
    from norma.rules import FailOn
    from norma.turns import Norma, TurnReport

    FailOnName = FailOn | Literal["error", "warning"]
    """What fails an assertion (:class:`norma.rules.FailOn`): a failed ``error`` check (``"error"``, the turn's own
    FAIL), or also a ``warning`` one."""

__all__ = ["assert_turn_passes", "turn_checker"]


def turn_checker(rules: RuleMatcher | str | os.PathLike[str]) -> Norma:
    """The :class:`~norma.Norma` of a matcher or a rulebook file (compiled once per file and session,
    :func:`rulebook_matcher`), opened with :func:`norma.open`: ``.check(message, output)`` is the turn check; its
    ``judge`` checks ask the LLM of ``$NORMA_LLM_URL`` (skipped without one), votes kept in the user cache, as
    ``norma check`` does (the ``norma_check`` fixture)."""
    from norma.matching import RuleMatcher
    from norma.turns import open as open_rules

    matcher = rules if isinstance(rules, RuleMatcher) else rulebook_matcher(rules)
    return open_rules(matcher)


def assert_turn_passes(
    message: str,
    output: str,
    *,
    rules: RuleMatcher | str | os.PathLike[str] | Norma,
    session: SessionState | Mapping[str, Any] | None = None,
    fail_on: FailOnName = "error",
    audit: bool = False,
) -> TurnReport:
    """Assert that ``output``, the AI's answer to ``message``, passes the turn check, and return the report.

    A turn passes when no ``error`` check of the rules that apply failed (nor the audit, with ``audit``), as
    ``norma check`` exits 0: a turn whose checks could not be decided (``skip``: a ``judge`` check without an LLM)
    passes too; assert ``report.verdict`` to want a decided one.

    Args:
        message: the user's message.
        output: the AI's answer; evidence lines and columns are its 1-based lines and columns.
        rules: a :class:`~norma.Norma` (the ``norma_check`` fixture: its judge, audit documents and
            configuration), a :class:`~norma.matching.RuleMatcher` (the ``norma_rules`` fixture), or a rulebook
            file, compiled once per file and session; ``judge`` checks then ask the LLM of ``$NORMA_LLM_URL``.
        session: the conversation (:class:`~norma.matching.SessionState` or a mapping of its fields).
        fail_on: ``"error"`` (default): a failed ``error`` check fails, as the turn's FAIL; ``"warning"``: a failed
            ``warning`` check too.
        audit: also run the IR.x.y audit on the output; its FAIL (a WARNING too, with ``fail_on="warning"``) fails.

    Raises:
        TurnAssertionError: the turn fails; the message lists each failed check with its rule id / check id,
            severity, output line:column and message.
        InvalidInputError: a message or output that is not text, a bad session.
        RulebookError: a rulebook file that cannot be read.
    """
    __tracebackhide__ = True
    from norma.rules import FailOn
    from norma.turns import Norma

    policy = FailOn.parse(fail_on)
    checker = rules if isinstance(rules, Norma) else turn_checker(rules)
    report = checker.check(message, output, session, audit=audit)
    _check(report, policy)
    return report


def _check(report: TurnReport, fail_on: FailOn) -> None:
    """Raise :class:`TurnAssertionError` when ``report`` fails under ``fail_on`` (:func:`assert_turn_passes`)."""
    __tracebackhide__ = True
    from norma.audit import verdict_label
    from norma.rules import Severity, Verdict

    if not report.failing(fail_on):
        return
    levels = fail_on.severities
    counted = [r for r in report.failures if r.severity in levels]
    counts = {s: sum(r.severity is s for r in counted) for s in levels}
    severities = ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
    ids = ", ".join(dict.fromkeys(f"{r.rule_id}/{r.check_id}" for r in counted))
    reward = "none" if report.reward is None else f"{report.reward:.3g}"
    parts = [f"{len(counted)} failed check(s) ({severities}): {ids}"] if counted else []
    audit_levels = levels
    violations = [] if report.audit is None else report.audit.violations
    if report.audit is not None and any(v.severity in audit_levels for v in violations):
        rules = ", ".join(dict.fromkeys(v.rule for v in violations if v.severity in audit_levels))
        parts.append(f"audit {verdict_label(report.audit.result)}: {rules}")
    summary = f"turn {report.verdict.value.upper()}, reward {reward}: {'; '.join(parts)}"
    # the failures that count first: a report that keeps the first lines (a JUnit message) keeps them
    details = [_check_line(r) for r in counted] + [_check_line(r) for r in report.failures if r not in counted]
    details += [
        f"{r.rule_id}/{r.check_id} {r.severity.value} skipped: {r.message}"
        for r in report.checks
        if r.status is Verdict.SKIP and r.severity is Severity.ERROR and r.enforced  # not a neighbour's
    ]
    details += [f"audit {_violation_line(v)}" for v in violations]
    raise TurnAssertionError(summary, details, report)


def _check_line(result: CheckResult) -> str:
    """``rule/check error output 1:43: message (evidence: 'text')``; ``output`` alone when no span is at fault."""
    first = result.evidence[0] if result.evidence else None
    where = "output" if first is None else f"output {first.line}:{first.column}"
    evidence = f" (evidence: {first.text!r})" if first is not None and first.text else ""
    return f"{result.rule_id}/{result.check_id} {result.severity.value} {where}: {result.message}{evidence}"
