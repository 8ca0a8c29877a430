"""``norma match --batch``, ``norma rubric eval --batch`` and ``norma audit --batch`` are CI-grade as ``norma check
--batch`` is (issue #59): SIGINT (exit 130) or SIGTERM (exit 143) mid-batch keeps every record finished (JSON Lines
written as they finish; the other formats written at the end, atomically, marked incomplete) with one stderr line
saying how many; an input with no records is bad input unless ``--allow-empty``; the totals count the bad records.

The interrupted commands are real processes sent real signals, once the first records are out (a row in the JSON
Lines file, or a progress line on stderr): events, never a pause.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_interrupt import _AS_A_SHELL_WOULD, _wait_until
from tests.conftest import EXAMPLES, REPO, CliResult

Run = Callable[..., CliResult]
BANKING = str(EXAMPLES / "rulebooks" / "banking-support.yaml")
RUBRIC = str(EXAMPLES / "rubrics" / "code_review.json")
OUTCOME_FILE = str(EXAMPLES / "rubrics" / "inputs" / "code_review_outcome.json")
OUTCOME = json.loads(Path(OUTCOME_FILE).read_text("utf-8"))
DOCS = str(EXAMPLES / "audit" / "docs")
REQUESTS = (EXAMPLES / "audit" / "requests.jsonl").read_text("utf-8").splitlines()
MESSAGES = [
    json.loads(line)["message"] for line in (EXAMPLES / "turns" / "banking.jsonl").read_text("utf-8").splitlines()
]

SIGNALS = pytest.mark.parametrize(
    ("signum", "code", "said"),
    [(signal.SIGINT, 130, ""), (signal.SIGTERM, 143, " (SIGTERM)")],
    ids=["SIGINT", "SIGTERM"],
)
PROGRESS = {**os.environ, "NORMA_PROGRESS_SECONDS": "0"}
"""A progress line on stderr for every record finished: the event a test waits on when nothing else is written
before the end."""


def _start(*args: str, stdout: Path, stderr: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """``norma ARGS`` started as a shell starts a command (SIGINT at its default, a process group of its own), its
    stdout and stderr going to files the test reads while it runs."""
    with stdout.open("wb") as out, stderr.open("wb") as err:
        return subprocess.Popen(
            [sys.executable, "-c", _AS_A_SHELL_WOULD, *args],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
            env=env,
        )


def _stop(proc: subprocess.Popen[bytes], signum: int) -> None:
    if signum == signal.SIGINT:
        os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C in a terminal
    else:
        os.kill(proc.pid, signal.SIGTERM)  # as `kill PID`, `timeout`, a CI runner or a container stopping it
    proc.wait(timeout=120)


def _rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a JSON Lines output; each line must be a whole JSON object ending with its line end."""
    text = path.read_text("utf-8")
    assert text == "" or text.endswith("\n"), f"a line cut short: {text[-80:]!r}"
    return [json.loads(line) for line in text.split("\n")[:-1]]


def _lines_in(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _progressed(stderr: Path, label: str) -> Callable[[], bool]:
    return lambda: f"norma: {label}: ".encode() in stderr.read_bytes()


def _said(stderr: Path, label: str) -> list[str]:
    """The stderr lines but the progress lines."""
    return [line for line in stderr.read_text("utf-8").splitlines() if not line.startswith(f"norma: {label}: ")]


def _no_temporary_file(folder: Path) -> None:
    assert [p.name for p in folder.iterdir() if p.name.startswith(".")] == []


def _stopped_rows(
    proc: subprocess.Popen[bytes], out: Path, stdout: Path, stderr: Path, signum: int, code: int, said: str, count: int
) -> list[dict[str, Any]]:
    """Stop a JSON Lines batch once its first row is in ``out``: the rows it wrote, after checking the exit code, the
    one stderr line and that nothing went to stdout."""
    _wait_until(lambda: _lines_in(out) >= 1, proc, "a row was written")
    _stop(proc, signum)
    assert proc.returncode == code, stderr.read_text("utf-8")
    rows = _rows(out)
    assert 1 <= len(rows) < count
    assert stderr.read_text("utf-8").splitlines() == [
        f"norma: interrupted{said}: {len(rows)} of {count} records written to {out}"
    ]
    assert stdout.read_bytes() == b""
    return rows


@pytest.mark.model
@SIGNALS
def test_a_stopped_match_batch_keeps_every_message_it_matched(
    tmp_path: Path, signum: int, code: int, said: str
) -> None:
    count = 300  # matched in chunks of 64, a few seconds of work
    batch = tmp_path / "messages.jsonl"
    given = [{"message": f"{MESSAGES[i % len(MESSAGES)]} ({i})", "id": f"m{i}"} for i in range(count)]
    batch.write_text("".join(json.dumps(m) + "\n" for m in given), encoding="utf-8")
    out, stdout, stderr = tmp_path / "out.jsonl", tmp_path / "stdout", tmp_path / "stderr"
    proc = _start(
        "match", "--rules", BANKING, "--batch", str(batch), "--engine", "local", "--format", "jsonl",
        "--output", str(out), stdout=stdout, stderr=stderr,
    )  # fmt: skip
    rows = _stopped_rows(proc, out, stdout, stderr, signum, code, said, count)
    assert [(row["line"], row["id"], row["message"]) for row in rows] == [
        (i + 1, m["id"], m["message"]) for i, m in enumerate(given[: len(rows)])
    ]  # the first messages, in input order


def _outcomes(count: int) -> str:
    """``count`` outcomes of the example rubric, each with a correctness of its own (found again in its row)."""
    lines = []
    for i in range(count):
        outcome = {"criteria": {**OUTCOME["criteria"], "correctness": (i % 100) / 100}}
        lines.append(json.dumps(outcome) + "\n")
    return "".join(lines)


@SIGNALS
def test_a_stopped_rubric_batch_keeps_every_record_it_evaluated(
    tmp_path: Path, signum: int, code: int, said: str
) -> None:
    count = 30_000  # a fraction of a millisecond each: seconds of work
    batch = tmp_path / "outcomes.jsonl"
    batch.write_text(_outcomes(count), encoding="utf-8")
    out, stdout, stderr = tmp_path / "out.jsonl", tmp_path / "stdout", tmp_path / "stderr"
    proc = _start(
        "rubric", "eval", RUBRIC, "--batch", str(batch), "--engine", "local", "--format", "jsonl",
        "--output", str(out), stdout=stdout, stderr=stderr,
    )  # fmt: skip
    rows = _stopped_rows(proc, out, stdout, stderr, signum, code, said, count)
    assert [(row["line"], row["per_criterion"]["correctness"]["reward"]) for row in rows] == [
        (i + 1, (i % 100) / 100) for i in range(len(rows))
    ]


def test_a_stopped_rubric_batch_replaces_its_json_output_whole_marked_incomplete(tmp_path: Path) -> None:
    count = 30_000
    batch = tmp_path / "outcomes.jsonl"
    batch.write_text(_outcomes(count), encoding="utf-8")
    out, stdout, stderr = tmp_path / "out.json", tmp_path / "stdout", tmp_path / "stderr"
    out.write_text("what an earlier run wrote\n", encoding="utf-8")
    proc = _start(
        "rubric", "eval", RUBRIC, "--batch", str(batch), "--engine", "local", "--format", "json",
        "--output", str(out), stdout=stdout, stderr=stderr, env=PROGRESS,
    )  # fmt: skip
    _wait_until(_progressed(stderr, "evaluating"), proc, "a record was evaluated")
    _stop(proc, signal.SIGTERM)
    assert proc.returncode == 143, stderr.read_text("utf-8")
    document = json.loads(out.read_text("utf-8"))  # valid JSON, replaced whole
    done = document["records"]
    assert 1 <= done < count
    assert _said(stderr, "evaluating") == [
        f"norma: interrupted (SIGTERM): {done} of {count} records written to {out}, marked incomplete"
    ]
    assert (document["incomplete"], document["input_records"], document["evaluated"], document["bad"]) == (
        True,
        count,
        done,
        0,
    )
    assert [row["line"] for row in document["results"]] == list(range(1, done + 1))
    _no_temporary_file(tmp_path)


def test_a_stopped_rubric_batch_writes_what_it_evaluated_to_parquet(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    count = 30_000
    batch = tmp_path / "outcomes.jsonl"
    batch.write_text(_outcomes(count), encoding="utf-8")
    out, stdout, stderr = tmp_path / "out.parquet", tmp_path / "stdout", tmp_path / "stderr"
    proc = _start(
        "rubric", "eval", RUBRIC, "--batch", str(batch), "--engine", "local", "--output", str(out),
        stdout=stdout, stderr=stderr, env=PROGRESS,
    )  # fmt: skip
    _wait_until(_progressed(stderr, "evaluating"), proc, "a record was evaluated")
    _stop(proc, signal.SIGINT)
    assert proc.returncode == 130, stderr.read_text("utf-8")
    lines = pq.read_table(out).column("line").to_pylist()
    assert 1 <= len(lines) < count
    assert lines == list(range(1, len(lines) + 1))
    assert _said(stderr, "evaluating") == [  # a Parquet table has no place for the mark: the line and the code say
        f"norma: interrupted: {len(lines)} of {count} records written to {out}"
    ]
    _no_temporary_file(tmp_path)


@SIGNALS
def test_a_stopped_audit_batch_reports_every_request_it_audited_marked_incomplete(
    tmp_path: Path, signum: int, code: int, said: str
) -> None:
    count = 2_000
    batch = tmp_path / "requests.jsonl"
    batch.write_text("".join(REQUESTS[i % len(REQUESTS)] + "\n" for i in range(count)), encoding="utf-8")
    stdout, stderr = tmp_path / "stdout", tmp_path / "stderr"
    reports = {fmt: tmp_path / f"report.{fmt}" for fmt in ("sarif", "junit", "markdown")}
    proc = _start(
        "audit", "--batch", str(batch), "--docs", DOCS, "--no-embeddings", "--engine", "local", "--format", "json",
        *(f"--report={fmt}={path}" for fmt, path in reports.items()), stdout=stdout, stderr=stderr, env=PROGRESS,
    )  # fmt: skip
    _wait_until(_progressed(stderr, "auditing"), proc, "a request was audited")
    _stop(proc, signum)
    assert proc.returncode == code, stderr.read_text("utf-8")
    document = json.loads(stdout.read_text("utf-8"))
    done = document["summary"]["records"]
    assert 1 <= done < count
    assert _said(stderr, "auditing") == [
        f"norma: interrupted{said}: {done} of {count} records written to stdout, marked incomplete"
    ]
    assert (document["incomplete"], document["input_records"], document["summary"]["bad"]) == (True, count, 0)
    assert [r["name"] for r in document["reports"]] == [f"{batch}:{i}" for i in range(1, done + 1)]
    name = signal.Signals(signum).name
    why = f"interrupted ({name}) after {done} of {count} records: the other {count - done} were not audited"
    sarif = json.loads(reports["sarif"].read_text("utf-8"))
    assert sarif["runs"][0]["invocations"] == [
        {
            "executionSuccessful": False, "exitCode": code, "exitSignalName": name,
            "toolExecutionNotifications": [{"level": "error", "message": {"text": why}}],
        }
    ]  # fmt: skip
    assert len(sarif["runs"][0]["properties"]["reports"]) == done
    junit = ET.fromstring(reports["junit"].read_text("utf-8"))
    assert [suite.get("name") for suite in junit.findall("testsuite")][-1] == "incomplete"
    assert junit.find("testsuite[@name='incomplete']/testcase/error").get("message") == why  # type: ignore[union-attr]
    assert f"**Incomplete:** {why}." in reports["markdown"].read_text("utf-8").splitlines()
    _no_temporary_file(tmp_path)


_EMPTY = {
    "match": (("match", "--rules", BANKING), "messages", "0 records: 0 matched, 0 unmatched, 0 bad"),
    "rubric": (
        ("rubric", "eval", RUBRIC),
        "records",
        "0 records: 0 passed, 0 failed, 0 without a verdict, 0 bad; mean reward None",
    ),
    "audit": (("audit", "--docs", DOCS, "--no-embeddings"), "requests", "0 records: 0 PASS, 0 FAIL, 0 SKIP, 0 bad"),
}


@pytest.mark.parametrize("command", list(_EMPTY))
def test_a_batch_with_no_records_is_bad_input(run_cli: Run, tmp_path: Path, command: str) -> None:
    args, what, _ = _EMPTY[command]
    batch = tmp_path / "empty.jsonl"
    batch.write_text("\n  \n", encoding="utf-8")
    result = run_cli(*args, "--batch", str(batch), "--engine", "local")
    assert result.code == 2
    assert result.out == ""
    assert result.err.splitlines() == [
        f"norma: error: {batch}: no {what}: the file is empty or has only blank lines "
        "(check the path, or pass --allow-empty to accept an empty batch)"
    ]


def test_no_records_on_stdin_is_bad_input() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "norma", "rubric", "eval", RUBRIC, "--batch", "-"],
        input="",
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "norma: error: <stdin>: no records: the input is empty or has only blank lines "
        "(check what is piped in, or pass --allow-empty to accept an empty batch)"
    ]


@pytest.mark.parametrize(
    "command", [pytest.param("match", marks=pytest.mark.model), "rubric", "audit"]
)  # match loads the rules' vectors
def test_allow_empty_does_nothing_and_exits_0(run_cli: Run, tmp_path: Path, command: str) -> None:
    args, _, totals = _EMPTY[command]
    batch = tmp_path / "empty.jsonl"
    batch.write_text("", encoding="utf-8")
    table = run_cli(*args, "--batch", str(batch), "--engine", "local", "--allow-empty")
    assert table.code == 0, table.err
    assert table.out.splitlines()[-1] == totals
    assert table.err == ""


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (("match", "hello", "--rules", BANKING), "messages"),
        (("rubric", "eval", RUBRIC, "--outcome", OUTCOME_FILE), "records"),
        (("audit", str(EXAMPLES / "audit" / "cases" / "fail_no_references.json"), "--docs", DOCS), "requests"),
    ],
    ids=["match", "rubric", "audit"],
)
def test_allow_empty_goes_with_batch(run_cli: Run, args: tuple[str, ...], what: str) -> None:
    result = run_cli(*args, "--allow-empty")
    assert result.code == 2
    assert result.err.splitlines() == [
        f"norma: error: --allow-empty goes with --batch (it lets a batch file with no {what} exit 0)"
    ]


@pytest.mark.model
def test_match_totals_count_the_bad_records(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "messages.jsonl"
    good = [json.dumps({"message": m}) for m in MESSAGES[:3]]
    batch.write_text("\n".join([good[0], "{not json", *good[1:]]) + "\n", encoding="utf-8")
    table = run_cli("match", "--rules", BANKING, "--batch", str(batch), "--engine", "local")
    assert table.code == 2
    document = json.loads(run_cli("match", "--rules", BANKING, "--batch", str(batch), "--format", "json").out)
    assert (document["records"], document["messages"], document["bad"]) == (4, 3, 1)
    assert document["matched"] + document["unmatched"] == 3
    assert table.out.splitlines()[-1] == (
        f"4 records: {document['matched']} matched, {document['unmatched']} unmatched, 1 bad"
    )


def test_rubric_totals_count_the_bad_records(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "outcomes.jsonl"
    batch.write_text(json.dumps(OUTCOME) + "\n{not json\n" + json.dumps(OUTCOME) + "\n", encoding="utf-8")
    given = ("rubric", "eval", RUBRIC, "--batch", str(batch), "--engine", "local")
    table = run_cli(*given)
    assert table.code == 2
    assert table.out.splitlines()[-1] == "3 records: 0 passed, 0 failed, 2 without a verdict, 1 bad; mean reward 0.75"
    judged = run_cli(*given, "--pass-threshold", "0.8")
    assert judged.code == 2  # bad input wins over the failed verdicts
    assert judged.out.splitlines()[-1] == "3 records: 0 passed, 2 failed, 0 without a verdict, 1 bad; mean reward 0.75"
    document = json.loads(run_cli(*given, "--format", "json").out)
    assert (document["records"], document["evaluated"], document["bad"]) == (3, 2, 1)


def test_audit_totals_count_the_bad_records(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "requests.jsonl"
    batch.write_text("\n".join([REQUESTS[0], "{not json", REQUESTS[1]]) + "\n", encoding="utf-8")
    given = ("audit", "--batch", str(batch), "--docs", DOCS, "--no-embeddings", "--engine", "local")
    table = run_cli(*given)
    assert table.code == 2
    document = json.loads(run_cli(*given, "--format", "json").out)
    summary = document["summary"]
    assert (summary["records"], summary["total"], summary["bad"]) == (3, 2, 1)
    assert table.out.splitlines()[-1] == (
        f"3 records: {summary['PASS']} PASS, {summary['FAIL']} FAIL, {summary['SKIP']} SKIP, 1 bad"
    )


def test_merge_adds_up_the_shards_bad_records_and_refuses_an_interrupted_audit(run_cli: Run, tmp_path: Path) -> None:
    batch = tmp_path / "outcomes.jsonl"
    batch.write_text("{not json\n" + json.dumps(OUTCOME) + "\n{not json\n" + json.dumps(OUTCOME) + "\n")
    parts = []
    for shard in ("1/2", "2/2"):
        part = tmp_path / f"part{shard[0]}.json"
        given = ("rubric", "eval", RUBRIC, "--batch", str(batch), "--engine", "local", "--format", "json")
        assert run_cli(*given, "--shard", shard, "--output", str(part)).code == 2
        parts.append(str(part))
    merged = json.loads(run_cli("merge", *parts).out)
    assert (merged["records"], merged["evaluated"], merged["bad"]) == (4, 2, 2)
    audit = tmp_path / "audit.json"
    audit.write_text(json.dumps({"incomplete": True, "input_records": 9, "reports": [], "summary": {}}))
    refused = run_cli("merge", str(audit))
    assert refused.code == 2
    assert "the output of an interrupted run (incomplete)" in refused.err


def test_a_batch_whose_stdout_is_closed_early_exits_141_without_a_word(tmp_path: Path) -> None:
    """`norma ... --format jsonl | head -1`: 141 (128 + SIGPIPE, as a shell reports `yes | head`), never 1 (checks
    failed) nor 0 (all passed), and nothing on stderr."""
    batch = tmp_path / "outcomes.jsonl"
    batch.write_text(_outcomes(30_000), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, "-m", "norma", "rubric", "eval", RUBRIC, "--batch", str(batch), "--engine", "local",
         "--format", "jsonl"],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdout is not None
    assert proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # what `head -1` does once it has its line
    with proc.stderr:
        err = proc.stderr.read()
    assert proc.wait(timeout=120) == 141, err
    assert json.loads(first)["line"] == 1
    assert err == b""
