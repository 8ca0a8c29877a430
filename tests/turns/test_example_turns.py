"""The example turns (examples/turns/banking.jsonl) give the verdicts examples/turns/README.md states."""

from __future__ import annotations

import json
import re

import pytest

from norma.turns import open as open_rules
from tests.conftest import REPO

pytestmark = pytest.mark.model

TURNS = REPO / "examples" / "turns"


def test_each_example_turn_has_the_verdict_its_readme_states() -> None:
    stated = dict(re.findall(r"^\| `([a-z-]+)` \| (pass|fail|skip) \|", (TURNS / "README.md").read_text(), re.M))
    records = [json.loads(line) for line in (TURNS / "banking.jsonl").read_text(encoding="utf-8").splitlines()]
    assert set(stated) == {r["id"] for r in records}
    checker = open_rules(REPO / "examples" / "rulebooks" / "banking-support.yaml", judge=None)
    got = {r["id"]: checker.check(r["message"], r["output"]).verdict.value for r in records}
    assert got == stated
