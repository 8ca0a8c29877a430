"""``norma mcp`` refuses what it cannot serve before serving: exit 2 with one line."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from norma.errors import NotFoundError
from norma.mcp_server import ToolFailure
from norma.mcp_server._served import failure
from tests.conftest import EXAMPLES, CliResult
from tests.mcp._client import server_env

RULES = str(EXAMPLES / "rulebooks" / "banking-support.yaml")
Run = Callable[..., CliResult]


def test_without_the_sdk_it_says_how_to_install_it(run_cli: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name.partition(".")[0] in {"mcp", "mcp_types"}] + ["mcp"]:
        monkeypatch.setitem(sys.modules, name, None)  # what an import of the SDK meets when it is not installed
    monkeypatch.delitem(sys.modules, "norma.mcp_server._tools", raising=False)
    result = run_cli("mcp", "--rules", RULES)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "norma: error: the MCP server (norma mcp) needs a package that is not installed "
        "(install it with: pip install 'norma-rules[mcp]')\n"
    )


def test_a_bad_rulebook_stops_it_before_serving(run_cli: Run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("rules:\n  - id: x\n    priority: high\n", encoding="utf-8")
    result = run_cli("mcp", "--rules", str(bad))
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith(f"norma: error: {bad}: 2 problems in the rulebook"), result.err
    assert result.err.splitlines()[1:] == [  # one problem a line (#50), each where it is (#59)
        f"{bad}:2:5: rules[0] (x).condition_text: Field required",
        f"{bad}:3:15: rules[0] (x).priority: Input should be a valid integer, unable to parse string as an integer",
    ]


def test_a_missing_store_is_not_created(run_cli: Run, tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    result = run_cli("mcp", "--store", f"sqlite:///{db}")
    assert result.code == 2
    assert result.err.startswith(f"norma: error: no store at {db}")
    assert not db.exists()


def test_host_goes_with_http(run_cli: Run) -> None:
    result = run_cli("mcp", "--rules", RULES, "--host", "0.0.0.0")
    assert (result.code, result.err) == (
        2,
        "norma: error: --host and --port go with --transport streamable-http\n",
    )


def test_an_unexpected_exception_is_an_internal_error_with_a_hint(caplog: pytest.LogCaptureFixture) -> None:
    problem = failure("score_rubric", KeyError("weight"))
    assert problem == ToolFailure(
        error="InternalError",
        message="KeyError: 'weight'",
        source="score_rubric",
        hint="a bug in norma: the server's log (stderr) has the traceback; please report it",
    )
    assert "tool score_rubric failed unexpectedly" in caplog.text
    known = failure("list_rules", NotFoundError("no such tenant", location="tenant", hint="check it"))
    assert known == ToolFailure(error="NotFoundError", message="no such tenant", location="tenant", hint="check it")


def test_stdio_ends_with_exit_0_when_the_client_closes_stdin() -> None:
    # a client that goes away: the server ends cleanly, and nothing but the protocol was written to stdout
    proc = subprocess.run(
        [sys.executable, "-m", "norma", "mcp", "--rules", RULES, "--format", "json"],
        input="",
        capture_output=True,
        text=True,
        env={**server_env(), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    banner = json.loads(proc.stderr.splitlines()[0])
    assert banner == {"transport": "stdio", "rules": RULES, "store": None, "audit_docs": None}
