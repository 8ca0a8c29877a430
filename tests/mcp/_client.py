"""A real MCP client session (the SDK's ``ClientSession``) with ``norma mcp`` running as a subprocess, usable from
synchronous tests: the session lives in an anyio blocking portal (its own event loop thread)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.types import CallToolResult, TextContent, Tool

from mcp import ClientSession, StdioServerParameters, stdio_client
from tests.conftest import REPO


def server_env() -> dict[str, str]:
    """The worktree's code, and the tests' cache folder (the SDK passes the server only a few variables)."""
    env = {"PYTHONPATH": str(REPO / "src")}
    for name in ("NORMA_CACHE_DIR", "NORMA_MODEL_DIR"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


@dataclass
class Session:
    portal: BlockingPortal
    session: ClientSession
    stderr: Path
    """The server's stderr (its start line, its log)."""

    def tools(self) -> dict[str, Tool]:
        return {tool.name: tool for tool in self.portal.call(self.session.list_tools).tools}

    def call(self, tool: str, **arguments: Any) -> CallToolResult:
        return self.portal.call(self.session.call_tool, tool, arguments)

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """A call that must succeed: its structured content (the same as its JSON text)."""
        result = self.call(tool, **arguments)
        assert not result.is_error, text(result)
        assert isinstance(result.structured_content, dict)
        assert json.loads(text(result)) == result.structured_content
        return result.structured_content


def text(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


@contextmanager
def stdio_session(*args: str) -> Iterator[Session]:
    """``python -m norma mcp ARGS`` over stdio, initialised."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "norma", "mcp", *args], env=server_env(), cwd=str(REPO)
    )
    with tempfile.TemporaryDirectory() as folder:
        stderr = Path(folder) / "stderr.txt"
        with (
            stderr.open("w", encoding="utf-8") as errlog,
            start_blocking_portal() as portal,
            portal.wrap_async_context_manager(stdio_client(params, errlog=errlog)) as (read, write),
            portal.wrap_async_context_manager(ClientSession(read, write)) as session,
        ):
            portal.call(session.initialize)
            yield Session(portal, session, stderr)
