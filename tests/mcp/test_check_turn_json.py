"""The JSON of the ``check_turn`` tool, pinned: for a fixed report, the text and the structured content are what they
were before issue #57's typed report (captured from that code, then written in ``tests/turns/_fixed.py``), with
``tenant`` last and only when one was named; its output model is generated from ``TurnReport``, not declared again.

The server runs in this process (the SDK's ``MCPServer`` over :class:`~norma.mcp_server._served.Served`), its
rules replaced by ones whose check is the fixed report: the tool layer's framing is what is tested."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.types import CallToolResult, TextContent

from norma.mcp_server._outputs import CheckTurnOutput
from norma.mcp_server._served import Served
from norma.mcp_server._tools import make_server
from norma.turns import TurnReport
from tests.turns._fixed import MESSAGE, OUTPUT, REPORT_JSON, fixed_report, report_text

RULEBOOK = """\
format: norma.rulebook/v1
tenant: acme
rules:
  - id: refund
    condition_text: customer asks for a refund of an order
    action_text: explain the refund policy and give the form reference
"""


class _Rules:
    def __init__(self, report: TurnReport) -> None:
        self.report = report

    def check(self, message: str, output: str, session: object = None, *, audit: bool = False) -> TurnReport:
        assert (message, output, audit) == (MESSAGE, OUTPUT, False)
        return self.report


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Served:
    path = tmp_path / "rules.yaml"
    path.write_text(RULEBOOK, encoding="utf-8")
    served = Served(rules_file=path)
    monkeypatch.setattr(served, "_file_rules", lambda: _Rules(fixed_report("acme", None)))
    monkeypatch.setattr(served, "_tenant_rules", lambda tenant: _Rules(fixed_report(tenant, 7)))
    return served


def _call(served: Served, **arguments: Any) -> CallToolResult:
    server = make_server(served)

    async def call() -> Any:
        return await server.call_tool("check_turn", {"message": MESSAGE, "output": OUTPUT, **arguments})

    result = anyio.run(call)
    assert isinstance(result, CallToolResult)
    assert not result.is_error, result.content
    return result


def _text(result: CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, TextContent)
    return block.text


def test_check_turn_of_the_served_rulebook_answers_the_same_bytes(served: Served) -> None:
    result = _call(served)
    expected = {**REPORT_JSON, "rules_version": None}
    assert _text(result) == report_text(expected)
    assert result.structured_content == expected
    assert list(result.structured_content or {}) == list(expected)  # no tenant key: absent, not null


def test_check_turn_of_a_tenant_answers_the_same_bytes_with_the_tenant_last(served: Served) -> None:
    result = _call(served, tenant="globex")
    expected = {**REPORT_JSON, "tenant_id": "globex", "rules_version": 7, "tenant": "globex"}
    assert _text(result) == report_text(expected)
    assert json.loads(_text(result)) == result.structured_content == expected


def test_the_output_is_generated_from_the_report() -> None:
    fields = CheckTurnOutput.model_fields
    json_keys = ["verdict", "reward", "tenant_id", "rules_version", "matches", "rules", "counts", "audit"]
    assert list(fields) == [*json_keys, "tenant"]
    for name, info in TurnReport.model_fields.items():
        assert (fields[name].annotation, fields[name].description) == (info.annotation, info.description)
    schema = CheckTurnOutput.model_json_schema()
    assert schema["required"] == json_keys  # tenant: absent unless named
    assert schema["additionalProperties"] is False
    summary = schema["$defs"]["MatchedRuleSummary"]["properties"]
    assert summary["enforcement"]["$ref"] == "#/$defs/EnforcementData"
    assert summary["explanation"]["$ref"] == "#/$defs/ExplanationData"
    assert schema["$defs"]["EnforcementReason"]["enum"] == ["governs", "neighbour"]
