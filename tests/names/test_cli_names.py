"""``norma names``: score, query and generate, their outputs and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from norma.names import score_over_seeds, score_record, upper_bound_from_labels
from tests.conftest import EXAMPLES, REPO, CliResult

Run = Callable[..., CliResult]
RECORDS = EXAMPLES / "names" / "records.jsonl"


def _examples() -> list[dict]:
    return [json.loads(line) for line in RECORDS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_example_file_is_realistic() -> None:
    records = _examples()
    assert len(records) >= 4
    assert any(len(r["name"].split()) == 3 for r in records)
    assert any(not r["name"].isascii() for r in records)
    assert all(set(r) == {"name", "variations", "labels"} for r in records)


def test_score_json_matches_the_library(run_cli: Run) -> None:
    result = run_cli("names", "score", str(RECORDS), "--format", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    expected = [score_record(record, hash_seed=0)["final"] for record in _examples()]
    assert [row["final"] for row in payload["results"]] == expected
    assert [row["line"] for row in payload["results"]] == list(range(1, len(expected) + 1))
    assert payload["mean_final"] == pytest.approx(sum(expected) / len(expected))
    assert payload["compat"] == "miid"
    assert payload["hash_seed"] == 0  # the explicit default, printed


def test_score_table_and_workers_and_stable(run_cli: Run) -> None:
    result = run_cli("names", "score", str(RECORDS), "--engine", "pool", "--workers", "2", "--compat", "stable")
    assert result.code == 0, result.err
    assert "John Smith" in result.out
    assert "mean final score" in result.out
    stable = [score_record(record, compat="stable")["final"] for record in _examples()]
    assert f"{stable[0]:.4f}" in result.out


def test_transliterate_changes_the_non_latin_score(run_cli: Run) -> None:
    plain = json.loads(run_cli("names", "score", str(RECORDS), "--format", "json").out)
    latin = json.loads(run_cli("names", "score", str(RECORDS), "--format", "json", "--transliterate").out)
    index = next(i for i, r in enumerate(_examples()) if not r["name"].isascii())
    assert latin["results"][index]["final"] != plain["results"][index]["final"]


def test_output_file(run_cli: Run, tmp_path: Path) -> None:
    target = tmp_path / "scores.json"
    result = run_cli("names", "score", str(RECORDS), "--format", "json", "--output", str(target))
    assert result.code == 0
    assert result.out == ""
    assert json.loads(target.read_text(encoding="utf-8"))["records"] == len(_examples())


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_bad_record_exits_2_after_writing_what_was_scored(run_cli: Run, tmp_path: Path, workers: str) -> None:
    lines = RECORDS.read_text(encoding="utf-8").splitlines()
    bad = json.loads(lines[0])
    bad["labels"]["rule_based"]["rule_percentage"] = float("nan")
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join([lines[0], lines[1], json.dumps(bad), lines[2]]) + "\n", encoding="utf-8")
    engine = "pool" if workers == "2" else "local"  # --workers alone is an upper bound: --engine pool forces it
    result = run_cli("names", "score", str(path), "--format", "json", "--engine", engine, "--workers", workers)
    assert result.code == 2
    assert [row["line"] for row in json.loads(result.out)["results"]] == [1, 2]
    error_lines = [line for line in result.err.splitlines() if line.strip()]
    assert len(error_lines) == 1
    assert error_lines[0].startswith(f"norma: error: {path}:3: bad record: ")
    assert "rule_percentage" in error_lines[0]


def test_a_bad_record_with_output_keeps_the_file(run_cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(RECORDS.read_text(encoding="utf-8").splitlines()[0] + '\n{"name": 3}\n', encoding="utf-8")
    target = tmp_path / "out.json"
    result = run_cli("names", "score", str(path), "--format", "json", "--output", str(target))
    assert result.code == 2
    assert result.err.startswith(f"norma: error: {path}:2: bad record: ")
    assert len(json.loads(target.read_text(encoding="utf-8"))["results"]) == 1


def test_query_is_seeded_and_names_the_seed(run_cli: Run) -> None:
    first = run_cli("names", "query", "--seed", "4", "--name", "Jane Doe", "--format", "json")
    second = run_cli("names", "query", "--seed", "4", "--name", "Jane Doe", "--format", "json")
    assert first.code == 0
    assert first.out == second.out
    payload = json.loads(first.out)
    assert payload["text"].count("Jane Doe") == 2
    assert "{name}" in payload["template"]
    assert 6 <= payload["labels"]["variation_count"] <= 15
    table = run_cli("names", "query", "--seed", "4")
    assert "variation_count" in table.out
    assert "{name}" in table.out


def test_generate_prints_variations_and_their_score(run_cli: Run) -> None:
    result = run_cli(
        "names", "generate", "John Smith", "--count", "8", "--seed", "1", "--rules", "swap_random_letter",
        "--rules", "name_parts_permutations,delete_random_letter", "--rule-percentage", "25",
        "--phonetic", "L=.5,M=.5", "--orthographic", "light=0.3,medium=0.4,far=0.3", "--format", "json",
    )  # fmt: skip
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["labels"]["rule_based"]["selected_rules"] == [
        "swap_random_letter",
        "name_parts_permutations",
        "delete_random_letter",
    ]
    assert payload["labels"]["phonetic_similarity"] == {"Light": 0.5, "Medium": 0.5}
    record = {"name": "John Smith", "variations": payload["variations"], "labels": payload["labels"]}
    rescored = score_record(record, hash_seed=0)
    assert payload["hash_seed"] == 0
    assert payload["score"]["final"] == rescored["final"]
    assert payload["score"]["final"] > 0.7
    bound = upper_bound_from_labels("John Smith", payload["labels"], hash_seed=0)
    assert payload["upper_bound"] == bound
    assert payload["score"]["final"] <= bound
    table = run_cli("names", "generate", "John Smith", "--seed", "1")
    assert table.code == 0
    assert "final" in table.out
    assert "hash seed 0" in table.out
    assert "no variations can score above" in table.out


@pytest.mark.parametrize("spec", ["X=1", "L=abc", "Light"])
def test_generate_rejects_bad_distributions(run_cli: Run, spec: str) -> None:
    result = run_cli("names", "generate", "John Smith", "--phonetic", spec)
    assert result.code == 2
    assert "--phonetic" in result.err
    assert result.err.count("\n") == 1


def test_generate_rejects_nan_percentage(run_cli: Run) -> None:
    result = run_cli("names", "generate", "John Smith", "--rules", "delete_random_letter", "--rule-percentage", "nan")
    assert result.code == 2
    assert "rule_percentage" in result.err


def test_demo_has_a_names_section(run_cli: Run) -> None:
    result = run_cli("demo", "--format", "json")
    assert result.code == 0, result.err
    section = json.loads(result.out)["sections"]["names"]
    assert section["record"]["name"] == _examples()[0]["name"]
    assert section["generated"]["variations"]
    assert 0.0 <= section["generated"]["final"] <= 1.0
    assert "{name}" not in section["query"]["text"]


def _norma(*args: str, hashseed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    done = subprocess.run(
        [sys.executable, "-m", "norma", *args], env=env, cwd=REPO, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_generate_with_a_seed_prints_the_same_in_every_process() -> None:
    # The validator's score depends on its PYTHONHASHSEED; the CLI scores under --hash-seed (default 0), computed
    # the same whatever the interpreter's own seed: "same seed, same variations".
    command = ("names", "generate", "John Smith", "--count", "10", "--seed", "1")
    first, second = _norma(*command, hashseed="1"), _norma(*command, hashseed="4242")
    assert first == second
    assert "hash seed 0" in first
    scored = ("names", "score", str(RECORDS), "--format", "json")
    assert _norma(*scored, hashseed="1") == _norma(*scored, hashseed="2")


def test_hash_seed_option_scores_under_that_seed(run_cli: Run) -> None:
    payload = json.loads(run_cli("names", "score", str(RECORDS), "--hash-seed", "77", "--format", "json").out)
    assert payload["hash_seed"] == 77
    assert [row["final"] for row in payload["results"]] == [
        score_record(record, hash_seed=77)["final"] for record in _examples()
    ]
    table = run_cli("names", "score", str(RECORDS), "--hash-seed", "77")
    assert "hash seed 77" in table.out
    generated = json.loads(run_cli("names", "generate", "Anna Lee", "--hash-seed", "9", "--format", "json").out)
    assert generated["hash_seed"] == 9
    assert generated["compat"] == "miid"


def test_hash_seeds_report_mean_min_and_spread(run_cli: Run) -> None:
    result = run_cli("names", "score", str(RECORDS), "--hash-seeds", "0-4,9", "--format", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["hash_seeds"] == "0-4,9"
    assert payload["seed_count"] == 6
    records = _examples()
    for row, record in zip(payload["results"], records, strict=True):
        expected = score_over_seeds(record, [0, 1, 2, 3, 4, 9])
        assert row["finals"] == expected["finals"]
        assert (row["mean"], row["min"], row["spread"]) == (expected["mean"], expected["min"], expected["spread"])
        assert row["finals"][0] == score_record(record, hash_seed=0)["final"]
    means = [sum(row["finals"][j] for row in payload["results"]) / len(records) for j in range(6)]
    assert payload["overall"]["min"] == min(means)
    assert payload["overall"]["spread"] == max(means) - min(means)
    assert payload["overall"]["mean"] == pytest.approx(sum(means) / 6)
    assert payload["overall"]["spread"] > 0  # restarts of the validator change the score
    table = run_cli("names", "score", str(RECORDS), "--hash-seeds", "0-9", "--engine", "pool", "--workers", "2")
    assert table.code == 0, table.err
    assert "over 10 hash seeds 0-9" in table.out
    assert "spread" in table.out
    stable = json.loads(run_cli("names", "score", str(RECORDS), "--hash-seeds", "0-3", "--compat", "stable",
                                "--format", "json").out)  # fmt: skip
    assert all(row["spread"] == 0.0 for row in stable["results"])


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--hash-seeds", "0-3", "--hash-seed", "1"), "not both"),
        (("--hash-seeds", "5-3"), "--hash-seeds"),
        (("--hash-seeds", "a"), "--hash-seeds"),
        (("--hash-seeds", "0-4294967296"), "--hash-seeds"),
        (("--hash-seeds", "0-20000"), "more than"),
        (("--hash-seed", "-1"), "--hash-seed"),
    ],
)
def test_bad_hash_seeds_exit_2_with_one_line(run_cli: Run, args: tuple[str, ...], needle: str) -> None:
    result = run_cli("names", "score", str(RECORDS), *args)
    assert result.code == 2
    assert needle in result.err
    assert result.err.count("\n") == 1


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--count", "0"), "--count"),
        (("--rules", "swap_random_letter,make_it_shorter"), "unknown rule 'make_it_shorter'"),
        (("--rules", "nope"), "--rules"),
    ],
)
def test_generate_refuses_unknown_rules_and_count_0(run_cli: Run, args: tuple[str, ...], needle: str) -> None:
    result = run_cli("names", "generate", "John Smith", *args)
    assert result.code == 2
    assert needle in result.err
    assert result.err.count("\n") == 1
    assert result.out == ""
