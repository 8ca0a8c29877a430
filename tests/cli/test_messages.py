"""The exact words of the CLI's errors for the "bad input" and "error polish" items of issue 24."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO, CliResult

Run = Callable[..., CliResult]


def test_bad_json_reads_the_same_in_rubric_and_match(run_cli: Run, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": ', encoding="utf-8")
    expected = f"norma: error: {bad}:line 1, column 13: not valid JSON: Expecting value\n"
    for args in (("rubric", "validate", str(bad)), ("match", "--rules", str(bad), "hi")):
        result = run_cli(*args)
        assert (result.code, result.err) == (2, expected), args


def test_a_size_error_gives_a_hint_the_cli_user_can_follow(run_cli: Run, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 2_000_000)
    result = run_cli("rubric", "validate", str(big))
    assert result.code == 2
    assert result.err == (
        f"norma: error: {big}: rubric file is 2000000 bytes, over the limit of 1048576 bytes (trim the rubric or "
        "split its criteria (from Python, max_bytes= raises the limit))\n"
    )


def test_a_rule_problem_names_its_rule_once(run_cli: Run, tmp_path: Path) -> None:
    rules = tmp_path / "r.json"
    rules.write_text('[{"id": "a", "condition_text": "x", "scope": "step"}]', encoding="utf-8")
    result = run_cli("match", "--rules", str(rules), "hi")
    assert result.code == 2
    assert result.err == (
        f"norma: error: {rules}: 1 problem(s) in the rulebook, nothing imported: rules[0] (a).rule: a STEP rule "
        "needs step_id (fix every rule listed (see docs/store.md for the format))\n"
    )


def test_names_score_prints_its_error_without_a_blank_line(run_cli: Run, tmp_path: Path) -> None:
    records = tmp_path / "r.jsonl"
    records.write_text('{"name": "John", "variations": ["Jon"], "labels": "x"}\n', encoding="utf-8")
    result = run_cli("names", "score", str(records))
    assert result.code == 2
    assert result.err == (
        f"norma: error: {records}:line 1: bad record: labels: labels must be an object, not str (pass "
        '{"variation_count": 10, "phonetic_similarity": {...}, ...}, as build_query returns)\n'
    )


def test_serve_on_a_busy_port_says_so_before_anything_else(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "norma", "serve", "--port", str(port), "--db", f"sqlite:///{tmp_path}/s.db"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        f"norma: error: the server could not start on 127.0.0.1:{port}: Address already in use (stop what uses it, "
        "or pass --port)\n"
    )


def test_the_docs_say_what_make_run_runs() -> None:
    for doc in (REPO / "docs" / "cli.md", REPO / "examples" / "README.md"):
        text = " ".join(doc.read_text(encoding="utf-8").split())
        assert (
            "`make run` starts `norma serve --demo`" in text
            or "`make run` starts the service instead: `norma serve --demo`" in text
        ), doc
        assert "(`make run`)" not in text, doc
        assert "`make run` runs it" not in text, doc
