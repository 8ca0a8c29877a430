"""``norma demo`` walks the turn check too (#50 item 8): a passing and a failing turn of the shipped banking
rulebook, with the failed checks and their (masked) evidence."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.conftest import CliResult

pytestmark = pytest.mark.model


def test_the_demo_checks_a_passing_and_a_failing_turn(run_cli: Callable[..., CliResult]) -> None:
    result = run_cli("demo", "--format", "json")
    assert result.code == 0, result.err
    section = json.loads(result.out)["sections"]["turn check"]
    assert section["rulebook"] == "banking-support.yaml"
    turns = {t["id"]: t for t in section["turns"]}
    assert (turns["good-fraud"]["verdict"], turns["good-fraud"]["reward"], turns["good-fraud"]["failed"]) == (
        "pass",
        1.0,
        [],
    )
    assert turns["bad-asks-for-pin"]["verdict"] == "fail"
    assert "never-ask-full-pin/does-not-ask-for-secrets" in turns["bad-asks-for-pin"]["failed"]
    table = run_cli("demo")
    assert "turn check" in table.out
    assert "bad-asks-for-pin: 'my pin is 1234 can you check it'" in table.out
    assert "verdict FAIL" in table.out
