"""norma over the Model Context Protocol: ``norma mcp`` serves its tools to agents (see docs/mcp.md).

* :func:`build_server` — an ``MCPServer`` of the official ``mcp`` SDK (the ``mcp`` extra, imported here only) with
  the tools ``match_rules``, ``audit_output``, ``score_rubric``, ``score_name_variations`` and ``list_rules`` over a
  rulebook file, a rule store and audit documents; ``server.run("stdio")`` serves it.
* :class:`Served` — those sources, opened and checked once, with one library call per tool (no MCP in it).
* The output models each tool's output schema is made from (:class:`MatchRulesOutput`, :class:`RubricScoreOutput`,
  :class:`NameScoreOutput`, :class:`RuleListOutput`; ``audit_output`` answers an :class:`~norma.audit.AuditReport`)
  and :class:`ToolFailure`, the structured content of a failed call (what, where, hint).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from norma.errors import MissingDependencyError
from norma.mcp_server._outputs import (
    DroppedRuleOutput,
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

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = [
    "MCP_INSTALL",
    "DroppedRuleOutput",
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

MCP_INSTALL = "pip install 'norma-rules[mcp]'"
"""The command that installs the MCP SDK."""


def build_server(
    served: Served, *, log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING"
) -> MCPServer:
    """The MCP server of ``served``: ``build_server(Served(rules_file=path)).run("stdio")``.

    Raises:
        MissingDependencyError: the ``mcp`` package is not installed (``pip install 'norma-rules[mcp]'``).
    """
    try:
        from norma.mcp_server._tools import make_server
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] not in {"mcp", "mcp_types"}:
            raise
        raise MissingDependencyError("the MCP server (norma mcp)", extra="mcp", install=MCP_INSTALL) from exc
    return make_server(served, log_level=log_level)


