"""norma over the Model Context Protocol: ``norma mcp`` serves its tools to agents (see docs/mcp.md).

* :func:`build_server` — an ``MCPServer`` of the official ``mcp`` SDK (the ``mcp`` extra, imported here only) with
  the tools ``match_rules``, ``check_turn``, ``audit_output``, ``score_rubric``, ``score_name_variations`` and
  ``list_rules`` over a rulebook file, a rule store and audit documents; ``server.run("stdio")`` serves it.
* :class:`Served` — those sources, opened and checked once, with one library call per tool (no MCP in it).
* The output models each tool's output schema is made from (:class:`MatchRulesOutput`, :class:`CheckTurnOutput`,
  :class:`RubricScoreOutput`, :class:`NameScoreOutput`, :class:`RuleListOutput`; ``audit_output`` answers an
  :class:`~norma.audit.AuditReport`) and :class:`ToolFailure`, the structured content of a failed call (what, where,
  hint).
"""

from __future__ import annotations

from norma.mcp_server._build import MCP_INSTALL, build_server
from norma.mcp_server._outputs import (
    CheckTurnOutput,
    DroppedRuleOutput,
    EnforcementOutput,
    MatchedRuleOutput,
    MatchRulesOutput,
    NameScoreOutput,
    RubricCriterionOutput,
    RubricScoreOutput,
    RuleListOutput,
    RuleSummary,
    ToolFailure,
)
from norma.mcp_server._served import Served

__all__ = [
    "CheckTurnOutput",
    "DroppedRuleOutput",
    "EnforcementOutput",
    "MCP_INSTALL",
    "MatchRulesOutput",
    "MatchedRuleOutput",
    "NameScoreOutput",
    "RubricCriterionOutput",
    "RubricScoreOutput",
    "RuleListOutput",
    "RuleSummary",
    "Served",
    "ToolFailure",
    "build_server",
]
