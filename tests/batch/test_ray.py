"""The Ray engine on a real local cluster (``ray.init(num_cpus=2)``, started once for the module): every batch
command gives what the local engine gives, byte for byte."""

from __future__ import annotations

import json
import sqlite3
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from norma.batch import BatchRecord, NamesJob, map_dataset, run_job
from tests.batch.conftest import AUDIT, AUDIT_DOCS, NAMES, RUBRIC, RULES
from tests.conftest import EXAMPLES, REPO, CliResult

ray = pytest.importorskip("ray")

Run = Callable[..., CliResult]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def ray_cluster() -> Iterator[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def _same_on_both(run_cli: Run, *args: str, workers: str = "1") -> CliResult:
    local = run_cli(*args, "--engine", "local")
    on_ray = run_cli(*args, "--engine", "ray", "--workers", workers, "-v")
    if workers == "auto":
        assert "norma: engine ray, 2 actors: one actor per CPU of the Ray cluster (2)" in on_ray.err
    else:
        assert f"norma: engine ray, {workers} actor" in on_ray.err
    assert on_ray.out == local.out
    assert on_ray.code == local.code
    return on_ray


def test_names_score(run_cli: Run, names_file: Path) -> None:
    result = _same_on_both(run_cli, "names", "score", str(names_file), "--format", "json", workers="auto")
    assert json.loads(result.out)["records"] == 15


def test_audit_batch(run_cli: Run) -> None:
    args = ["audit", "--batch", str(AUDIT), "--docs", str(AUDIT_DOCS), "--no-embeddings", "--format", "sarif"]
    assert _same_on_both(run_cli, *args).code == 1


@pytest.mark.model
def test_match_batch(run_cli: Run, messages_file: Path) -> None:
    args = ["match", "--rules", str(RULES), "--batch", str(messages_file), "--format", "jsonl"]
    result = _same_on_both(run_cli, *args, workers="2")
    assert result.out.count("\n") == 7


@pytest.mark.model
def test_check_batch(run_cli: Run) -> None:
    turns = REPO / "examples" / "turns" / "banking.jsonl"
    book = REPO / "examples" / "rulebooks" / "banking-support.yaml"
    args = ["check", "--rules", str(book), "--batch", str(turns), "--format", "jsonl"]
    result = _same_on_both(run_cli, *args, workers="2")
    assert result.code == 1
    assert result.out.count("\n") == 8


@pytest.mark.model
def test_check_batch_on_a_process_pool(run_cli: Run) -> None:
    turns = REPO / "examples" / "turns" / "banking.jsonl"
    book = REPO / "examples" / "rulebooks" / "banking-support.yaml"
    args = ["check", "--rules", str(book), "--batch", str(turns), "--format", "json"]
    local = run_cli(*args, "--engine", "local")
    pool = run_cli(*args, "--engine", "pool", "--workers", "2")
    assert (pool.out, pool.code) == (local.out, local.code)


def test_rubric_eval_batch(run_cli: Run, outcomes_file: Path) -> None:
    args = ["rubric", "eval", str(RUBRIC), "--batch", str(outcomes_file), "--pass-threshold", "0.6", "--format", "json"]
    assert _same_on_both(run_cli, *args).code == 1


@pytest.mark.model
def test_rules_import_embeds_on_ray(run_cli: Run, tmp_path: Path) -> None:
    book = EXAMPLES / "rulebooks" / "banking-support.yaml"
    stored = []
    for engine in ("local", "ray"):
        db = tmp_path / f"{engine}.db"
        result = run_cli("rules", "import", str(book), "--db", f"sqlite:///{db}", "--engine", engine, "--workers", "1")
        assert result.code == 0, result.err
        with sqlite3.connect(db) as connection:
            stored.append(connection.execute("SELECT rule_id, data FROM rule_vectors ORDER BY rule_id").fetchall())
    assert len(stored[0]) == 28
    assert stored[0] == stored[1]


def test_map_dataset_over_a_cluster_dataset() -> None:
    lines = [line for line in NAMES.read_text(encoding="utf-8").splitlines() if line.strip()]
    rows = [json.loads(line) for line in lines]
    job = NamesJob.make(hash_seed=5)
    local = [item.result for item in run_job(job, [BatchRecord(i, "", line) for i, line in enumerate(lines)])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        as_text = map_dataset(job, ray.data.from_items([{"text": line} for line in lines]), json_column="text")
        as_rows = map_dataset(job, ray.data.from_items(rows), workers=1)  # Arrow pads the labels with nulls
        results = [as_text.take_all(), as_rows.take_all()]
    assert [json.loads(row["result"]) for row in results[0]] == local
    assert [json.loads(row["result"]) for row in results[1]] == local
