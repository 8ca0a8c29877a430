"""``--shard i/N`` then ``norma merge``: byte for byte what one run writes, with its exit code, for every format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.batch.conftest import AUDIT, AUDIT_DOCS, RUBRIC, RULES
from tests.conftest import CliResult

Run = Callable[..., CliResult]


def _shards_merge_to_the_whole(run_cli: Run, tmp_path: Path, args: list[str], count: int) -> CliResult:
    whole = run_cli(*args)
    assert whole.code in (0, 1), whole.err
    files = []
    for index in range(1, count + 1):
        part = run_cli(*args, "--shard", f"{index}/{count}")
        assert part.code in (0, 1), part.err
        files.append(tmp_path / f"part{index}")
        files[-1].write_text(part.out, encoding="utf-8")
    merged = run_cli("merge", *map(str, files))
    assert merged.err == ""
    assert merged.out == whole.out
    assert merged.code == whole.code
    return merged


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
@pytest.mark.parametrize("count", [2, 3, 20])
def test_names(run_cli: Run, tmp_path: Path, names_file: Path, fmt: str, count: int) -> None:
    merged = _shards_merge_to_the_whole(run_cli, tmp_path, ["names", "score", str(names_file), "--format", fmt], count)
    assert merged.out.count('"line": 15') == 1


def test_names_over_hash_seeds(run_cli: Run, tmp_path: Path, names_file: Path) -> None:
    args = ["names", "score", str(names_file), "--hash-seeds", "0-4,9", "--format", "json"]
    merged = _shards_merge_to_the_whole(run_cli, tmp_path, args, 4)
    assert '"hash_seeds": "0-4,9"' in merged.out


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
@pytest.mark.parametrize("fail_on", ["error", "warning"])
def test_audit(run_cli: Run, tmp_path: Path, fmt: str, fail_on: str) -> None:
    args = ["audit", "--batch", str(AUDIT), "--docs", str(AUDIT_DOCS), "--no-embeddings", "--format", fmt]
    args += ["--fail-on", fail_on]
    whole = run_cli(*args)
    files = []
    for index in (1, 2, 3):
        part = run_cli(*args, "--shard", f"{index}/3")
        files.append(tmp_path / f"part{index}.{fmt}")
        files[-1].write_text(part.out, encoding="utf-8")
    merged = run_cli("merge", "--fail-on", fail_on, *map(str, files))
    assert merged.out == whole.out
    assert (merged.code, whole.code) == (1, 1)


def test_audit_shard_of_one_record_still_names_it(run_cli: Run, tmp_path: Path) -> None:
    args = ["audit", "--batch", str(AUDIT), "--docs", str(AUDIT_DOCS), "--no-embeddings", "--format", "json"]
    records = sum(1 for line in AUDIT.read_text(encoding="utf-8").splitlines() if line.strip())
    merged = _shards_merge_to_the_whole(run_cli, tmp_path, args, records)
    assert merged.out.count('"name": ') == records


@pytest.mark.model
@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_match(run_cli: Run, tmp_path: Path, messages_file: Path, fmt: str) -> None:
    args = ["match", "--rules", str(RULES), "--batch", str(messages_file), "--format", fmt]
    merged = _shards_merge_to_the_whole(run_cli, tmp_path, args, 3)
    assert '"id": "m4"' in merged.out


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_rubric(run_cli: Run, tmp_path: Path, outcomes_file: Path, fmt: str) -> None:
    args = ["rubric", "eval", str(RUBRIC), "--batch", str(outcomes_file), "--pass-threshold", "0.6", "--format", fmt]
    merged = _shards_merge_to_the_whole(run_cli, tmp_path, args, 4)
    assert merged.code == 1


def test_merge_to_a_file_prints_a_summary(run_cli: Run, tmp_path: Path, names_file: Path) -> None:
    parts = []
    for index in (1, 2):
        part = run_cli("names", "score", str(names_file), "--format", "json", "--shard", f"{index}/2")
        parts.append(tmp_path / f"p{index}.json")
        parts[-1].write_text(part.out, encoding="utf-8")
    out = tmp_path / "merged.json"
    result = run_cli("merge", *map(str, parts), "-o", str(out), "--format", "json")
    assert result.code == 0
    assert '"records": 15' in result.out
    assert '"format": "names"' in result.out
    assert out.read_text(encoding="utf-8") == run_cli("names", "score", str(names_file), "--format", "json").out


def test_merge_refuses_what_does_not_fit(run_cli: Run, tmp_path: Path, names_file: Path, outcomes_file: Path) -> None:
    parts = []
    for index in (1, 2):
        part = run_cli("names", "score", str(names_file), "--format", "json", "--shard", f"{index}/2")
        parts.append(tmp_path / f"p{index}.json")
        parts[-1].write_text(part.out, encoding="utf-8")
    backwards = run_cli("merge", str(parts[1]), str(parts[0]))
    assert backwards.code == 2
    assert "line 1 comes after line 15" in backwards.err
    assert "shard order" in backwards.err
    rubric = run_cli("rubric", "eval", str(RUBRIC), "--batch", str(outcomes_file), "--format", "json")
    other = tmp_path / "rubric.json"
    other.write_text(rubric.out, encoding="utf-8")
    mixed = run_cli("merge", str(parts[0]), str(other))
    assert mixed.code == 2
    assert "a rubric output among names outputs" in mixed.err
    garbage = tmp_path / "garbage.txt"
    garbage.write_text("hello\n", encoding="utf-8")
    assert "not valid JSON" in run_cli("merge", str(garbage)).err
    single = run_cli("audit", "--batch", str(AUDIT), "--docs", str(AUDIT_DOCS), "--no-embeddings", "--format", "json")
    lone = tmp_path / "lone.json"
    lone.write_text(single.out.replace('"reports"', '"x"'), encoding="utf-8")
    assert run_cli("merge", str(lone)).code == 2


def test_jsonl_rows_holding_a_raw_line_separator_merge_whole() -> None:
    from norma.batch import merge_outputs

    first = '{"line": 1, "message": "a\u2028b", "matches": ["x"]}\n{"line": 2, "message": "c\u2029d", "matches": []}\n'
    second = '{"line": 3, "message": "e\x85f", "matches": []}\n'
    merged = merge_outputs([("part1", first), ("part2", second)])
    assert (merged.format, merged.records, merged.exit_code) == ("jsonl", 3, 0)
    assert merged.text == first + second
