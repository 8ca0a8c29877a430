"""Assertions for tests of AI behaviour, in pytest or any test runner, and what norma's pytest plugin builds on.

* :func:`assert_audit_passes` — an AI output passes the IR.x.y audit (:func:`norma.audit.analyze`);
  :class:`Auditor` — audits against one set of documents and one configuration, loaded once (the ``norma_audit``
  fixture).
* :func:`assert_rubric_reward` — events or an outcome reach a reward against a rubric
  (:func:`norma.rubrics.evaluate_rubric`).
* :func:`assert_matches` — a message matches given rule ids of a rulebook (:class:`norma.matching.RuleMatcher`);
  :func:`rulebook_matcher` — a rulebook file's matcher, kept while the file is unchanged (the ``norma_rules``
  fixture).
* :func:`assert_turn_passes` — a turn (message, output) passes the turn check (:meth:`norma.Norma.check`);
  :func:`turn_checker` — the :class:`~norma.Norma` of a rulebook whose ``judge`` checks ask ``$NORMA_LLM_URL``
  (the ``norma_check`` fixture).

A failed assertion raises a :class:`NormaAssertionError` (an :class:`AssertionError`: :class:`AuditAssertionError`,
:class:`RubricAssertionError`, :class:`MatchAssertionError`, :class:`TurnAssertionError`) whose message is a one-line
summary, then one line per violation with its rule id, severity and line. Every helper returns what it checked (the
report, the evaluation, the match) for further assertions. The capabilities are imported on first use: importing this
package is cheap.

The pytest plugin (``norma.pytest_plugin``, registered with pytest when norma is installed) adds the fixtures and
the ``--norma-*`` options; see docs/pytest.md.
"""

from __future__ import annotations

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.testing._audit import Auditor as Auditor
    from norma.testing._audit import assert_audit_passes as assert_audit_passes
    from norma.testing._failures import AuditAssertionError as AuditAssertionError
    from norma.testing._failures import MatchAssertionError as MatchAssertionError
    from norma.testing._failures import NormaAssertionError as NormaAssertionError
    from norma.testing._failures import RubricAssertionError as RubricAssertionError
    from norma.testing._failures import TurnAssertionError as TurnAssertionError
    from norma.testing._match import assert_matches as assert_matches
    from norma.testing._match import rulebook_matcher as rulebook_matcher
    from norma.testing._rubric import assert_rubric_reward as assert_rubric_reward
    from norma.testing._turn import assert_turn_passes as assert_turn_passes
    from norma.testing._turn import turn_checker as turn_checker

_PUBLIC: dict[str, str] = {
    "assert_audit_passes": "_audit",
    "assert_matches": "_match",
    "assert_rubric_reward": "_rubric",
    "assert_turn_passes": "_turn",
    "AuditAssertionError": "_failures",
    "Auditor": "_audit",
    "MatchAssertionError": "_failures",
    "NormaAssertionError": "_failures",
    "RubricAssertionError": "_failures",
    "rulebook_matcher": "_match",
    "turn_checker": "_turn",
    "TurnAssertionError": "_failures",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {}
"""Nothing beyond ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
