"""Tables never cut an id or a header: they wrap, or turn into records on a narrow terminal; --wide (issue 24)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CliResult

Run = Callable[..., CliResult]
LONG_IDS = [
    "refund-request-for-a-damaged-parcel-delivered-late",
    "card-stolen-abroad-while-travelling-in-another-country",
]
TAGS = "billing-and-refunds-department"


@pytest.fixture
def db(run_cli: Run, tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path}/t.db"
    book = tmp_path / "long.yaml"
    rules = "".join(
        f"  - id: {rule_id}\n    condition_text: customer talks about {rule_id}\n    tags: [{TAGS}, urgent]\n"
        for rule_id in LONG_IDS
    )
    book.write_text(f"tenant: acme\nrules:\n{rules}", encoding="utf-8")
    assert run_cli("rules", "import", str(book), "--db", url).code == 0
    return url


@pytest.mark.parametrize("columns", ["80", "40"])
def test_rules_list_shows_every_id_tag_and_header_whole(
    run_cli: Run, db: str, monkeypatch: pytest.MonkeyPatch, columns: str
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    result = run_cli("rules", "list", "--tenant", "acme", "--db", db)
    assert result.code == 0
    for text in [*LONG_IDS, TAGS, "priority", "enabled", "scope", "tags"]:
        assert text in result.out, f"{text!r} cut at {columns} columns:\n{result.out}"
    assert "…" not in result.out
    assert "2 rule(s), tenant acme at version 1" in result.out


def test_a_narrow_terminal_gets_records(run_cli: Run, db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    result = run_cli("rules", "list", "--tenant", "acme", "--db", db)
    assert result.out.split("\n\n")[0] == (
        f"id: {LONG_IDS[1]}\nscope: global\npriority: 0\nenabled: yes\ntags: {TAGS}, urgent"
    )


def test_wide_prints_the_whole_table(run_cli: Run, db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    result = run_cli("rules", "list", "--tenant", "acme", "--db", db, "--wide")
    lines = result.out.splitlines()
    header = next(line for line in lines if "priority" in line)
    assert header.split("┃")[1:-1] == [
        f" id{' ' * (len(LONG_IDS[1]) - 2)} ",
        " scope  ",
        " priority ",
        " enabled ",
        f" tags{' ' * (len(TAGS) + len(', urgent') - 4)} ",
    ]
    assert any(LONG_IDS[0] in line and TAGS in line for line in lines)
    assert max(len(line) for line in lines) > 40


def test_a_table_that_fits_is_a_table(run_cli: Run, db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    result = run_cli("rules", "list", "--tenant", "acme", "--db", db)
    assert any(LONG_IDS[0] in line and TAGS in line and "global" in line for line in result.out.splitlines())


@pytest.mark.parametrize("columns", ["80", "40"])
def test_audit_rules_ids_and_thresholds_are_whole(run_cli: Run, monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    result = run_cli("audit", "rules")
    assert result.code == 0
    assert "ir_3_01_similarity_threshold=0.7" in result.out
    assert "IR.3.01" in result.out
    assert "thresholds" in result.out
    assert "…" not in result.out
