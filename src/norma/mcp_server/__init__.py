"""norma over the Model Context Protocol: ``norma mcp`` serves its tools to agents (see docs/mcp.md).

* :func:`build_server` — an ``MCPServer`` of the official ``mcp`` SDK (the ``mcp`` extra, imported here only) with
  the tools ``match_rules``, ``check_turn``, ``audit_output``, ``score_rubric``, ``score_name_variations`` and
  ``list_rules`` over a rulebook file, a rule store and audit documents; ``server.run("stdio")`` serves it.
* :class:`Served` — those sources, opened and checked once, with one library call per tool (no MCP in it).
* The output models each tool's output schema is made from (:class:`MatchRulesOutput`, :class:`CheckTurnOutput`,
  :class:`RuleListOutput`, and the library's own models; ``audit_output`` answers an
  :class:`~norma.audit.AuditReport`) and :class:`ToolFailure`, the structured content of a failed call (what, where,
  hint).
"""

from __future__ import annotations

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.mcp_server._build import MCP_INSTALL as MCP_INSTALL
    from norma.mcp_server._build import build_server as build_server
    from norma.mcp_server._outputs import CheckTurnOutput as CheckTurnOutput
    from norma.mcp_server._outputs import DroppedRuleOutput as DroppedRuleOutput
    from norma.mcp_server._outputs import MatchRulesOutput as MatchRulesOutput
    from norma.mcp_server._outputs import RuleListOutput as RuleListOutput
    from norma.mcp_server._outputs import RuleSummary as RuleSummary
    from norma.mcp_server._outputs import ToolFailure as ToolFailure
    from norma.mcp_server._served import Served as Served

_PUBLIC: dict[str, str] = {
    "build_server": "_build",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "CheckTurnOutput": "_outputs",
    "DroppedRuleOutput": "_outputs",
    "MatchRulesOutput": "_outputs",
    "MCP_INSTALL": "_build",
    "RuleListOutput": "_outputs",
    "RuleSummary": "_outputs",
    "Served": "_served",
    "ToolFailure": "_outputs",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
