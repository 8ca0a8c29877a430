"""norma over the Model Context Protocol: ``norma mcp`` serves its tools to agents (see docs/mcp.md).

* :func:`build_server` — an ``MCPServer`` of the official ``mcp`` SDK (the ``mcp`` extra, imported here only) with
  the tools ``match_rules``, ``check_turn``, ``audit_output``, ``score_rubric``, ``score_name_variations`` and
  ``list_rules`` over a rulebook file, a rule store and audit documents; ``server.run("stdio")`` serves it.
* :class:`Served` — those sources, opened and checked once, with one library call per tool (no MCP in it).
* The output models each tool's output schema is made from (:class:`MatchRulesOutput`, :class:`CheckTurnOutput`,
  :class:`RuleListOutput`; ``audit_output``, ``score_rubric`` and ``score_name_variations`` answer the library's
  :class:`~norma.audit.AuditReport`, :class:`~norma.rubrics.RubricScore` and :class:`~norma.names.NameScore`) and
  :class:`ToolFailure`, the structured content of a failed call (what, where, hint).
"""

from __future__ import annotations

from norma.mcp_server._build import MCP_INSTALL, build_server
from norma.mcp_server._outputs import (
    CheckTurnOutput,
    DroppedRuleOutput,
    MatchRulesOutput,
    RuleListOutput,
    RuleSummary,
    ToolFailure,
)
from norma.mcp_server._served import Served

__all__ = [
    "CheckTurnOutput",
    "DroppedRuleOutput",
    "MCP_INSTALL",
    "MatchRulesOutput",
    "RuleListOutput",
    "RuleSummary",
    "Served",
    "ToolFailure",
    "build_server",
]
