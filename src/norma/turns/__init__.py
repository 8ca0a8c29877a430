"""The one way in and the turn check.

* :func:`open` a rulebook or a stored tenant once: the :class:`Norma` it returns matches, checks and audits with
  everything derived from that rules version built once (matcher, judge).

A turn checked end to end (issue #38): for one user message and the AI's output, the tenant's rules that apply
(matching), the output checked against each of them (their ``checks``), and a reward (rubrics).

* :meth:`Norma.check` one turn, :meth:`Norma.check_many` many with one embedding call, :meth:`Norma.review` a turn
  whose message was matched already; :class:`Tenants` — a store's tenants, each a :class:`Norma` at its current
  rules version, for servers. ``open(rules, judge=None)`` checks without a judge (``judge`` checks are skipped).
* :class:`TurnReport` — ``verdict`` (:class:`TurnVerdict`: ``fail`` when an ``error`` check fails), ``reward``
  (the weighted mean of the checked rules' scores, computed by :mod:`norma.rubrics` on ``report.rubric``), the
  matched rules (:class:`MatchedRuleSummary`), each checked rule (:class:`CheckedRule`) with its check results and
  their evidence, and the IR.x.y audit when asked.
* :func:`rule_verdict`, :func:`turn_reward` — the arithmetic, for callers that evaluate checks themselves.
* :meth:`Norma.diff` — what a rulebook change does: recorded turns checked against two versions of the rules (each
  message embedded once, unchanged rules' checks run once), the turns that changed with the evidence, by rule and by
  rule edit (:class:`RulebookDiff`; issue #60, ``norma rules diff``, docs/diff.md).
* :meth:`Norma.coverage` — what a rulebook covers on recorded messages: each rule's share, the rules that govern
  none, the ungoverned messages clustered, the rules that compete (:class:`Coverage`; ``norma rules coverage``).

This package sits above the capabilities it combines (matching, checks, rubrics, audit). See docs/check.md.
"""

from __future__ import annotations

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.turns._checker import rule_verdict as rule_verdict
    from norma.turns._checker import turn_reward as turn_reward
    from norma.turns._coverage import coverage as coverage
    from norma.turns._coverage_report import Coverage as Coverage
    from norma.turns._diff import diff_turns as diff_turns
    from norma.turns._diff_report import ChangeKind as ChangeKind
    from norma.turns._diff_report import DiffFailOn as DiffFailOn
    from norma.turns._diff_report import EditKind as EditKind
    from norma.turns._diff_report import RulebookDiff as RulebookDiff
    from norma.turns._diff_report import RulebookSide as RulebookSide
    from norma.turns._diff_report import RuleEdit as RuleEdit
    from norma.turns._diff_report import RuleImpact as RuleImpact
    from norma.turns._diff_report import RuleMove as RuleMove
    from norma.turns._diff_report import RuleStatus as RuleStatus
    from norma.turns._diff_report import TurnChange as TurnChange
    from norma.turns._open import Norma as Norma
    from norma.turns._open import judge_of as judge_of
    from norma.turns._open import open as open
    from norma.turns._report import CheckedRule as CheckedRule
    from norma.turns._report import MatchedRuleSummary as MatchedRuleSummary
    from norma.turns._report import TurnReport as TurnReport
    from norma.turns._report import TurnVerdict as TurnVerdict
    from norma.turns._report import turn_rubric as turn_rubric
    from norma.turns._tenants import Tenants as Tenants

_PUBLIC: dict[str, str] = {
    "CheckedRule": "_report",
    "MatchedRuleSummary": "_report",
    "Norma": "_open",
    "open": "_open",
    "Tenants": "_tenants",
    "TurnReport": "_report",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "judge_of": "_open",
    "coverage": "_coverage",
    "Coverage": "_coverage_report",
    "diff_turns": "_diff",
    "ChangeKind": "_diff_report",
    "DiffFailOn": "_diff_report",
    "EditKind": "_diff_report",
    "RulebookDiff": "_diff_report",
    "RulebookSide": "_diff_report",
    "RuleEdit": "_diff_report",
    "RuleImpact": "_diff_report",
    "RuleMove": "_diff_report",
    "RuleStatus": "_diff_report",
    "TurnChange": "_diff_report",
    "rule_verdict": "_checker",
    "turn_reward": "_checker",
    "TurnVerdict": "_report",
    "turn_rubric": "_report",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
