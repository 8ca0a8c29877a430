"""`norma rules calibrate --synthesize N`: the configured LLM (a fake server on loopback) writes the messages, the
real embedding model matches them, the gate is stored with its counts."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests._llm_server import FakeLLMServer
from tests.conftest import CliResult

Run = Callable[..., CliResult]
RULEBOOK = """
tenant: shop
rules:
  - id: refund
    condition_text: customer asks for a refund
    examples: [I want my money back, can I return this for cash]
  - id: lost-card
    condition_text: customer lost their card
    examples: [my card was stolen]
"""


def test_calibrate_from_written_messages(
    run_cli: Run, llm_server: FakeLLMServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    book = tmp_path / "shop.yaml"
    book.write_text(RULEBOOK, encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'norma.db'}"
    assert run_cli("rules", "import", str(book), "--db", db).code == 0
    llm_server.reply(json.dumps(["please refund my order", "I'd like my money returned"]))
    llm_server.reply(json.dumps(["how long does a refund take to show up", "can I get a receipt"]))
    llm_server.reply(json.dumps(["I can't find my debit card", "I think I dropped my card on the bus"]))
    llm_server.reply(json.dumps(["how do I order a second card for my partner"]))
    monkeypatch.setenv("NORMA_LLM_URL", llm_server.openai_url)
    monkeypatch.setenv("NORMA_LLM_MODEL", "gpt-test")
    result = run_cli("rules", "calibrate", "--tenant", "shop", "--synthesize", "2", "--db", db, "--format", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    terms = payload["gate"]["terms"]
    assert (terms["messages"], terms["near_misses"], payload["stored"]) == (4, 3, True)
    assert len(llm_server.requests) == 4  # one call for the positives and one for the near misses, per rule
    assert "and 3 near misses" in payload["gate"]["description"]


def test_synthesize_without_an_llm_is_a_usage_error(run_cli: Run, tmp_path: Path) -> None:
    book = tmp_path / "shop.yaml"
    book.write_text(RULEBOOK, encoding="utf-8")
    db = f"sqlite:///{tmp_path / 'norma.db'}"
    assert run_cli("rules", "import", str(book), "--db", db).code == 0
    result = run_cli("rules", "calibrate", "--tenant", "shop", "--synthesize", "2", "--db", db)
    assert result.code == 2
    assert result.err.startswith("norma: error: --synthesize needs an LLM and none is configured")
