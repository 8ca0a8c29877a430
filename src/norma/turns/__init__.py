"""The one way in and the turn check.

* :func:`open` a rulebook or a stored tenant once: the :class:`Norma` it returns matches, checks and audits with
  everything derived from that rules version built once (matcher, checker, judge).

A turn checked end to end (issue #38): for one user message and the AI's output, the tenant's rules that apply
(matching), the output checked against each of them (their ``checks``), and a reward (rubrics).

* :class:`TurnChecker` — built once per rulebook or tenant matcher; :meth:`TurnChecker.check` one turn,
  :meth:`TurnChecker.check_many` many with one embedding call. :func:`check_turn` — one turn, once.
* :class:`TurnReport` — ``verdict`` (:class:`TurnVerdict`: ``fail`` when an ``error`` check fails), ``reward``
  (the weighted mean of the checked rules' scores, computed by :mod:`norma.rubrics` on ``report.rubric``), the
  matched rules (:class:`MatchedRuleSummary`), each checked rule (:class:`CheckedRule`) with its check results and
  their evidence, and the IR.x.y audit when asked.
* :func:`rule_verdict`, :func:`turn_reward` — the arithmetic, for callers that evaluate checks themselves.

This package sits above the capabilities it combines (matching, checks, rubrics, audit). See docs/check.md.
"""

from __future__ import annotations

from norma.turns._checker import TurnChecker, check_turn, rule_verdict, turn_reward
from norma.turns._open import Norma, open
from norma.turns._report import CheckedRule, MatchedRuleSummary, TurnReport, TurnVerdict, turn_rubric

__all__ = [
    "CheckedRule",
    "MatchedRuleSummary",
    "Norma",
    "TurnChecker",
    "TurnReport",
    "TurnVerdict",
    "check_turn",
    "open",
    "rule_verdict",
    "turn_reward",
    "turn_rubric",
]
