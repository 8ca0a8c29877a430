"""Assertions for tests of AI behaviour, in pytest or any test runner, and what norma's pytest plugin builds on.

* :func:`assert_audit_passes` — an AI output passes the IR.x.y audit (:func:`norma.audit.analyze`);
  :class:`Auditor` — audits against one set of documents and one configuration, loaded once (the ``norma_audit``
  fixture).
* :func:`assert_rubric_reward` — events or an outcome reach a reward against a rubric
  (:func:`norma.rubrics.evaluate_rubric`).
* :func:`assert_matches` — a message matches given rule ids of a rulebook (:class:`norma.matching.RuleMatcher`);
  :func:`rulebook_matcher` — a rulebook file's matcher, kept while the file is unchanged (the ``norma_rules``
  fixture).
* :func:`assert_turn_passes` — a turn (message, output) passes the turn check (:class:`norma.turns.TurnChecker`);
  :func:`turn_checker` — a checker over a rulebook whose ``judge`` checks ask ``$NORMA_LLM_URL`` (the
  ``norma_check`` fixture).

A failed assertion raises a :class:`NormaAssertionError` (an :class:`AssertionError`: :class:`AuditAssertionError`,
:class:`RubricAssertionError`, :class:`MatchAssertionError`, :class:`TurnAssertionError`) whose message is a one-line
summary, then one line per violation with its rule id, severity and line. Every helper returns what it checked (the
report, the evaluation, the match) for further assertions. The capabilities are imported on first use: importing this
package is cheap.

The pytest plugin (``norma.pytest_plugin``, registered with pytest when norma is installed) adds the fixtures and
the ``--norma-*`` options; see docs/pytest.md.
"""

from __future__ import annotations

from norma.testing._audit import Auditor, assert_audit_passes
from norma.testing._failures import (
    AuditAssertionError,
    MatchAssertionError,
    NormaAssertionError,
    RubricAssertionError,
    TurnAssertionError,
)
from norma.testing._match import assert_matches, rulebook_matcher
from norma.testing._rubric import assert_rubric_reward
from norma.testing._turn import assert_turn_passes, turn_checker

__all__ = [
    "AuditAssertionError",
    "Auditor",
    "MatchAssertionError",
    "NormaAssertionError",
    "RubricAssertionError",
    "TurnAssertionError",
    "assert_audit_passes",
    "assert_matches",
    "assert_rubric_reward",
    "assert_turn_passes",
    "rulebook_matcher",
    "turn_checker",
]
