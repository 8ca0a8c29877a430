"""Batch scoring: one record as a pure function, a JSON Lines file in order, in one process or a pool."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from norma.errors import InvalidInputError, LimitExceededError
from norma.names import MAX_RECORD_BYTES, count_records, score_jsonl, score_record, variation_quality

LABELS = {
    "variation_count": 6,
    "phonetic_similarity": {"Light": 0.2, "Medium": 0.6, "Far": 0.2},
    "orthographic_similarity": {"Light": 0.5, "Medium": 0.5},
    "rule_based": {"selected_rules": ["delete_random_letter"], "rule_percentage": 30},
}
RECORD = {
    "name": "John Smith",
    "variations": ["Jon Smith", "Jhon Smyth", "Johnn Smithe", "Jean Smit", "John Smitt", "Joan Smith"],
    "labels": LABELS,
}


def _write(path: Path, records: list[object], blank_after: int | None = None) -> Path:
    lines = []
    for index, record in enumerate(records):
        lines.append(record if isinstance(record, str) else json.dumps(record))
        if blank_after == index:
            lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _record(i: int) -> dict:
    names = ["John Smith", "Maria Garcia", "Wei Chen", "Anna Maria Rossi", "Ahmed"]
    name = names[i % len(names)]
    variations = [name.replace("a", "e"), name + "s", name.lower(), name[:-1], name.upper(), name[::-1]]
    return {"name": name, "variations": variations, "labels": LABELS}


def test_score_record_is_variation_quality() -> None:
    result = score_record(RECORD)
    final, base, metrics = variation_quality(
        "John Smith",
        RECORD["variations"],
        LABELS["phonetic_similarity"],
        LABELS["orthographic_similarity"],
        6,
        LABELS["rule_based"],
    )
    assert result["final"] == final
    assert result["base"] == base
    assert result["rule_compliance"] == metrics["rule_compliance"]["score"]
    assert result["rule_compliant"] == 1  # "Jon Smith" deletes one letter
    assert result["variations"] == 6
    assert "metrics" not in result
    assert score_record(RECORD, metrics=True)["metrics"]["base_score"] == base


def test_without_rules_the_rule_score_is_none() -> None:
    record = {**RECORD, "labels": {key: value for key, value in LABELS.items() if key != "rule_based"}}
    result = score_record(record)
    assert result["rule_compliance"] is None
    assert math.isclose(result["final"], 0.8 * result["base"])


@pytest.mark.parametrize(
    "record",
    [
        ["John"],
        {"name": "John Smith", "variations": []},
        {**RECORD, "name": 42},
        {**RECORD, "labels": "labels"},
        {**RECORD, "labels": {**LABELS, "phonetic_similarity": {"Heavy": 1.0}}},
        {**RECORD, "labels": {**LABELS, "rule_based": {"selected_rules": [], "rule_percentage": math.nan}}},
        {**RECORD, "labels": {key: value for key, value in LABELS.items() if key != "variation_count"}},
    ],
)
def test_bad_records_raise(record: object) -> None:
    with pytest.raises(InvalidInputError):
        score_record(record)  # type: ignore[arg-type]


def test_file_results_come_in_order_with_line_numbers(tmp_path: Path) -> None:
    path = _write(tmp_path / "records.jsonl", [_record(i) for i in range(5)], blank_after=1)
    results = list(score_jsonl(path))
    assert [item.line for item in results] == [1, 2, 4, 5, 6]
    assert [item.result["name"] for item in results] == [_record(i)["name"] for i in range(5)]
    assert count_records(path) == 5


def test_a_pool_gives_the_same_results_in_the_same_order(tmp_path: Path) -> None:
    path = _write(tmp_path / "records.jsonl", [_record(i) for i in range(150)])
    single = [(item.line, item.result) for item in score_jsonl(path, workers=1)]
    pooled = [(item.line, item.result) for item in score_jsonl(path, workers=2)]
    assert pooled == single
    assert len(single) == 150


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps({**RECORD, "name": None}), "name"),
        (
            json.dumps(
                {**RECORD, "labels": {**LABELS, "rule_based": {"selected_rules": ["x"], "rule_percentage": "NaN"}}}
            ),
            "rule_percentage",
        ),
        ('{"name": "John Smith", "variations": ["Jon Smith"], "labels": {"variation_count": NaN}}', "variation_count"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        ('{"name": "John \\ud800", "variations": ["Jon Smith"], "labels": {}}', "name: text is not valid Unicode"),
    ],
)
def test_a_bad_record_stops_after_the_good_ones(tmp_path: Path, workers: int, bad: str, message: str) -> None:
    records: list[object] = [_record(i) for i in range(40)]
    records.insert(37, bad)
    path = _write(tmp_path / "records.jsonl", records)
    seen: list[int] = []
    results = score_jsonl(path, workers=workers)
    with pytest.raises(InvalidInputError) as info:
        seen.extend(item.line for item in results)
    assert seen == list(range(1, 38))
    assert str(info.value).startswith(f"{path}:38: bad record: ")
    assert message in str(info.value)


def test_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError):
        list(score_jsonl(tmp_path / "missing.jsonl"))
    path = _write(tmp_path / "records.jsonl", [RECORD])
    with pytest.raises(InvalidInputError):
        list(score_jsonl(path, workers=0))
    with pytest.raises(InvalidInputError):
        list(score_jsonl(path, compat="exact"))


@pytest.mark.parametrize("workers", [1, 2])
def test_a_record_over_the_byte_limit_stops_the_run_before_it_is_read(tmp_path: Path, workers: int) -> None:
    records: list[object] = [_record(i) for i in range(3)]
    records.append(json.dumps({**RECORD, "padding": "x" * 5000}))
    path = _write(tmp_path / "records.jsonl", records)
    seen: list[int] = []
    with pytest.raises(LimitExceededError, match="over the limit of 4,000 bytes") as info:
        seen.extend(item.line for item in score_jsonl(path, workers=workers, max_record_bytes=4000))
    assert seen == [1, 2, 3]
    assert (info.value.line, info.value.location) == (4, None)
    assert [item.line for item in score_jsonl(path, workers=workers)] == [1, 2, 3, 4]
    assert MAX_RECORD_BYTES == 1024 * 1024
    with pytest.raises(LimitExceededError):
        count_records(path, max_record_bytes=4000)
    assert count_records(path) == 4


def test_a_record_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(json.dumps(RECORD).encode() + b"\n" + b'{"name": "Jos\xe9"}\n')
    with pytest.raises(InvalidInputError, match="not valid UTF-8") as info:
        list(score_jsonl(path))
    assert (info.value.line, info.value.location) == (2, None)
