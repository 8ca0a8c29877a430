"""``hash_seed=``: every names function whose result depends on ``hash()`` gives, in any process, what it gives with
``hash_seed=None`` in a process started with that ``PYTHONHASHSEED``; the batch scorer and the spread over seeds."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import norma.names as names
from norma.errors import InvalidInputError, LimitExceededError
from norma.names import (
    MAX_HASH_SEEDS,
    generate_from_labels,
    generate_variations,
    part_score,
    phonetic_similarity,
    quality_from_labels,
    score_jsonl,
    score_over_seeds,
    score_record,
    score_upper_bound,
    seed_summary,
    upper_bound_from_labels,
    variation_quality,
)

LABELS = {
    "variation_count": 8,
    "phonetic_similarity": {"Light": 0.2, "Medium": 0.6, "Far": 0.2},
    "orthographic_similarity": {"Light": 0.3, "Medium": 0.4, "Far": 0.3},
    "rule_based": {"selected_rules": ["delete_random_letter", "duplicate_random_letter_as_double_letter"]},
}
RECORD = {
    "name": "Maria Garcia Lopez",
    "variations": ["Marja Garcia", "Marie Garcia Lopez", "MMaria Garcia Lopez", "Maria Garsia Lopes", "M. Lopez"],
    "labels": LABELS,
}

# Every call prints one JSON value; run with hash_seed=None under PYTHONHASHSEED=k, or with hash_seed=k anywhere.
CALLS = """
import json, sys
from norma import names
seed = None if sys.argv[1] == "none" else int(sys.argv[1])
record = json.loads(sys.argv[2])
name, variations, labels = record["name"], record["variations"], record["labels"]
out = [
    names.phonetic_similarity("Maria", "Mariah", hash_seed=seed).hex(),
    names.part_score("Garcia", ["Garsia", "Gracia", "Garcias"], None, None, 3, hash_seed=seed)[0].hex(),
    [v.hex() for v in names.variation_quality(name, variations, labels["phonetic_similarity"],
        labels["orthographic_similarity"], 8, labels["rule_based"], hash_seed=seed)[:2]],
    [v.hex() for v in names.quality_from_labels(name, variations, labels, hash_seed=seed)[:2]],
    names.score_record(record, hash_seed=seed)["final"].hex(),
    names.ScoreOptions.make(hash_seed=seed).score_text(json.dumps(record))["final"].hex(),
    names.score_upper_bound(name, 8, labels["phonetic_similarity"], labels["orthographic_similarity"],
        labels["rule_based"], hash_seed=seed).hex(),
    names.upper_bound_from_labels(name, labels, hash_seed=seed).hex(),
    names.generate_variations(name, 8, seed=3, hash_seed=seed),
    names.generate_from_labels(name, labels, seed=3, hash_seed=seed),
]
print(json.dumps(out))
"""


def _run(hash_seed: str, env_seed: str) -> list[object]:
    env = {**os.environ, "PYTHONHASHSEED": env_seed}
    done = subprocess.run(
        [sys.executable, "-c", CALLS, hash_seed, json.dumps(RECORD)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    result: list[object] = json.loads(done.stdout)
    return result


@pytest.mark.parametrize("seed", ["0", "31337"])
def test_every_hash_dependent_function_gives_the_result_of_that_pythonhashseed(seed: str) -> None:
    reference = _run("none", seed)  # the process's own hash() under PYTHONHASHSEED=seed
    assert _run(seed, "1") == reference
    assert _run(seed, "987654") == reference


def test_the_functions_that_take_hash_seed() -> None:
    takes = sorted(
        name
        for name in names.__all__
        if callable(getattr(names, name)) and "hash_seed" in _parameters(getattr(names, name))
    )
    assert takes == [
        "ScoreOptions",
        "generate_from_labels",
        "generate_variations",
        "part_score",
        "phonetic_similarity",
        "quality_from_labels",
        "score_jsonl",
        "score_record",
        "score_upper_bound",
        "str_hash",
        "upper_bound_from_labels",
        "variation_quality",
    ]


def _parameters(function: object) -> set[str]:
    try:
        return set(inspect.signature(function).parameters)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return set()


def test_stable_ignores_the_hash_seed() -> None:
    scores = {score_record(RECORD, compat="stable", hash_seed=seed)["final"] for seed in (None, 0, 1, 99)}
    assert len(scores) == 1


def test_other_seeds_give_other_scores() -> None:
    finals = {score_record(RECORD, hash_seed=seed)["final"] for seed in range(10)}
    assert len(finals) > 1


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "0", True])
def test_bad_hash_seeds_raise_everywhere(bad: object) -> None:
    p, o, rules = LABELS["phonetic_similarity"], LABELS["orthographic_similarity"], LABELS["rule_based"]
    calls = [
        lambda: phonetic_similarity("a", "b", hash_seed=bad),
        lambda: names.ScoreOptions.make(hash_seed=bad),
        lambda: part_score("Garcia", ["Garsia"], None, None, 1, hash_seed=bad),
        lambda: variation_quality(RECORD["name"], RECORD["variations"], p, o, 8, rules, hash_seed=bad),
        lambda: quality_from_labels(RECORD["name"], RECORD["variations"], LABELS, hash_seed=bad),
        lambda: score_record(RECORD, hash_seed=bad),
        lambda: score_upper_bound(RECORD["name"], 8, p, o, rules, hash_seed=bad),
        lambda: upper_bound_from_labels(RECORD["name"], LABELS, hash_seed=bad),
        lambda: generate_variations(RECORD["name"], 8, hash_seed=bad),
        lambda: generate_from_labels(RECORD["name"], LABELS, hash_seed=bad),
        lambda: score_over_seeds(RECORD, [0, bad]),  # type: ignore[list-item]
    ]
    for call in calls:
        with pytest.raises(InvalidInputError, match="hash_seed"):
            call()


def test_score_over_seeds_and_its_summary() -> None:
    result = score_over_seeds(RECORD, [4, 0, 7])
    assert result["hash_seeds"] == [4, 0, 7]
    assert result["finals"] == [score_record(RECORD, hash_seed=seed)["final"] for seed in (4, 0, 7)]
    assert result["min"] == min(result["finals"])
    assert result["max"] == max(result["finals"])
    assert result["spread"] == result["max"] - result["min"]
    assert result["mean"] == pytest.approx(sum(result["finals"]) / 3)
    assert seed_summary([0.5]) == {"mean": 0.5, "min": 0.5, "max": 0.5, "spread": 0.0}
    with pytest.raises(InvalidInputError):
        seed_summary([])


@pytest.mark.parametrize("bad", [[], "0-9", None, [None]])
def test_score_over_seeds_needs_a_list_of_seeds(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="hash_seeds"):
        score_over_seeds(RECORD, bad)  # type: ignore[arg-type]


def test_score_over_seeds_has_a_limit() -> None:
    with pytest.raises(LimitExceededError, match="hash seeds"):
        score_over_seeds(RECORD, range(MAX_HASH_SEEDS + 1))


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "records.jsonl"
    other = {**RECORD, "name": "John Smith", "variations": ["Jon Smith", "John Smyth", "JJohn Smith"]}
    path.write_text("\n".join(json.dumps(r) for r in [RECORD, other] * 20) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("workers", [1, 2])
def test_score_jsonl_under_a_hash_seed_and_over_seeds(tmp_path: Path, workers: int) -> None:
    path = _file(tmp_path)
    results = [item.result for item in score_jsonl(path, workers=workers, hash_seed=5)]
    assert results[0] == score_record(RECORD, hash_seed=5)
    spread = [item.result for item in score_jsonl(path, workers=workers, hash_seeds=[1, 2, 3])]
    assert spread[0] == score_over_seeds(RECORD, [1, 2, 3])
    assert len(spread) == 40


def test_score_jsonl_refuses_both_seed_options(tmp_path: Path) -> None:
    path = _file(tmp_path)
    with pytest.raises(InvalidInputError, match="hash_seeds"):
        list(score_jsonl(path, hash_seed=1, hash_seeds=[1, 2]))
    with pytest.raises(InvalidInputError, match="hash_seeds"):
        list(score_jsonl(path, metrics=True, hash_seeds=[1, 2]))
    with pytest.raises(InvalidInputError, match="hash_seed"):
        list(score_jsonl(path, hash_seed=-3))
