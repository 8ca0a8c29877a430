"""The server of what :class:`~norma.mcp_server.Served` serves, or the install hint when the SDK is missing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from norma.errors import MissingDependencyError
from norma.mcp_server._served import Served

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["MCP_INSTALL", "build_server"]

MCP_INSTALL = "pip install 'norma-rules[mcp]'"
"""The command that installs the MCP SDK."""


def build_server(served: Served, *, log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "WARNING") -> MCPServer:
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
