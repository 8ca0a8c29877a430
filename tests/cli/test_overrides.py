"""Quiet overrides and traps (#50 item 7): what the CLI used to decide or ignore without a word now says so."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import EXAMPLES, REPO, CliResult

Run = Callable[..., CliResult]
BANKING = str(EXAMPLES / "rulebooks" / "banking-support.yaml")
SAFETY_GATE = str(EXAMPLES / "rubrics" / "safety_gate.yaml")  # aggregation: custom
SAFETY_OUTCOME = str(EXAMPLES / "rubrics" / "inputs" / "safety_gate_outcome.yaml")


def test_fewer_workers_than_asked_is_said_without_verbose(run_cli: Run) -> None:
    result = run_cli("names", "score", str(EXAMPLES / "names" / "records.jsonl"), "--workers", "2", "--format", "json")
    assert result.code == 0
    assert result.err.splitlines() == [
        "norma: --workers 2: engine local, 1 process: 5 records (about 0.0 s of work) do not pay for starting 2 "
        "workers; --engine pool forces the pool"
    ]


def test_as_many_workers_as_asked_says_nothing(run_cli: Run) -> None:
    result = run_cli("names", "score", str(EXAMPLES / "names" / "records.jsonl"), "--workers", "1", "--format", "json")
    assert (result.code, result.err) == (0, "")


def test_documents_without_audit_is_a_usage_error(run_cli: Run) -> None:
    docs = str(EXAMPLES / "audit" / "docs")
    result = run_cli("check", "--rules", BANKING, "-m", "hi", "-o", "hello", "--documents", docs)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "norma: error: --documents goes with --audit (the audit reads them; without --audit nothing does)\n"
    )


def test_a_session_that_is_not_json_is_named_once(run_cli: Run) -> None:
    result = run_cli("check", "--rules", BANKING, "-m", "hi", "-o", "hello", "--session", "{not json")
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "norma: error: --session is not valid JSON: Expecting property name enclosed in double quotes (at column 2)\n"
    )


def test_a_custom_rubric_without_an_aggregator_says_what_to_give(run_cli: Run) -> None:
    result = run_cli("rubric", "eval", SAFETY_GATE, "--outcome", SAFETY_OUTCOME)
    assert result.code == 0
    assert result.out.splitlines()[-1] == (
        "reward: None (custom, without an aggregator: give --aggregator NAME, one of geometric_mean, harmonic_mean, "
        "max, min)"
    )


def test_a_verdict_on_a_custom_rubric_needs_an_aggregator(run_cli: Run) -> None:
    result = run_cli("rubric", "eval", SAFETY_GATE, "--outcome", SAFETY_OUTCOME, "--pass-threshold", "0.5")
    assert (result.code, result.out) == (2, "")  # before: exit 1, "verdict: FAIL" and no reason
    assert result.err == (
        f"norma: error: {SAFETY_GATE}: a custom rubric has no reward without an aggregator, so --pass-threshold "
        "cannot decide (give --aggregator NAME, one of geometric_mean, harmonic_mean, max, min)\n"
    )
    given = run_cli(
        "rubric", "eval", SAFETY_GATE, "--outcome", SAFETY_OUTCOME, "--pass-threshold", "0.5", "--aggregator", "min"
    )
    assert given.code == 0
    assert given.out.splitlines()[-2:] == ["reward: 0.5 (custom via min)", "verdict: PASS"]


def test_rubric_validate_reports_every_bad_file(run_cli: Run, tmp_path: Path) -> None:
    zero = tmp_path / "zero.json"
    zero.write_text('{"version": "1", "criteria": [{"id": "a", "description": "x", "weight": 0}]}', encoding="utf-8")
    broken = tmp_path / "broken.json"
    broken.write_text('{"version": ', encoding="utf-8")
    negative = str(EXAMPLES / "rubrics" / "invalid" / "negative_weight.json")
    good = str(EXAMPLES / "rubrics" / "code_review.json")
    result = run_cli("rubric", "validate", negative, str(broken), str(zero), good, "--format", "json")
    assert result.code == 2  # a file that cannot be parsed outranks invalid ones
    assert result.err == f"norma: error: {broken}:1:13: not valid JSON: Expecting value\n"
    payload = json.loads(result.out)
    assert [(f["file"], f["valid"]) for f in payload["files"]] == [
        (negative, False),
        (str(zero), False),
        (good, True),
    ]
    invalid = run_cli("rubric", "validate", negative, str(zero), good)
    assert invalid.code == 2
    assert [line.split()[:2] for line in invalid.out.splitlines() if line.startswith(("FAIL ", "ok "))] == [
        ["FAIL", negative],
        ["FAIL", str(zero)],
        ["ok", good],
    ]


def test_serve_demo_says_where_its_store_is(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if k not in ("NORMA_DB_URL", "NORMA_ADMIN_KEY")}
    with subprocess.Popen(
        [sys.executable, "-m", "norma", "serve", "--demo", "--port", str(port)],
        cwd=tmp_path,  # an empty folder: the default store is created in it
        env={**env, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            banner = proc.stdout.readline()  # printed once the demo tenant is stored, before serving
        finally:
            # SIGTERM at once, maybe before uvicorn takes the signals over: the server must stop all the same
            proc.terminate()
            _, err = proc.communicate(timeout=30)
    assert proc.returncode in (0, -signal.SIGTERM), err  # stopped: by norma (0), or before it took the signal
    assert banner.startswith("norma serving on"), err
    line = err.splitlines(keepends=True)[0]
    assert line == (
        "norma: --demo: tenant 'demo' and its key are in the store sqlite:///./.norma/norma.db (--db URL or "
        "$NORMA_DB_URL chooses another)\n"
    )
    assert (tmp_path / ".norma" / "norma.db").is_file()
