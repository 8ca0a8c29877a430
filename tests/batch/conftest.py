"""Inputs of the batch tests: the example files, and small generated ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES

NAMES = EXAMPLES / "names" / "records.jsonl"
AUDIT = EXAMPLES / "audit" / "requests.jsonl"
AUDIT_DOCS = EXAMPLES / "audit" / "docs"
RULES = EXAMPLES / "matching" / "support_rules.yaml"
RUBRIC = EXAMPLES / "rubrics" / "code_review.json"

MESSAGES = [
    "I want my money back for this order",
    "someone stole my card yesterday",
    "what is the weather like on mars?",
    "the package never arrived",
    "can I get a refund",
    "my card was stolen, block it",
    "hi",
]


@pytest.fixture
def names_file(tmp_path: Path) -> Path:
    """The example records three times over (15 records), so that shards and chunks hold several each."""
    lines = [line for line in NAMES.read_text(encoding="utf-8").splitlines() if line.strip()]
    path = tmp_path / "names.jsonl"
    path.write_text("\n".join(lines * 3) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def messages_file(tmp_path: Path) -> Path:
    """Messages as JSON Lines, one with a session, one with an id."""
    path = tmp_path / "messages.jsonl"
    rows: list[dict[str, object]] = [{"message": text} for text in MESSAGES]
    rows[3] = {"message": MESSAGES[3], "session": {"active_scenario_id": "delivery"}, "id": "m4"}
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def outcomes_file(tmp_path: Path) -> Path:
    """Outcomes of the code-review rubric (and one list of events), some passing 0.6 and some not."""
    rows: list[dict[str, object]] = []
    for step in range(9):
        value = round(0.1 + step * 0.1, 2)
        rows.append({"criteria": {"correctness": value, "tests": 0.9, "style": 1 - value, "docs": 0.5}})
    rows.append({"events": [{"criterion_id": "correctness", "reward": 0.9}, {"criterion_id": "style", "reward": 0.5}]})
    path = tmp_path / "outcomes.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path
