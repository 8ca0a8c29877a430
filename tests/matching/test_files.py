from __future__ import annotations

from pathlib import Path

import pytest

from norma.errors import InvalidInputError
from norma.matching import Scope, load_rules
from norma.rules import RulebookError
from tests.conftest import EXAMPLES


def test_example_rules_load() -> None:
    rules = load_rules(EXAMPLES / "matching" / "support_rules.yaml")
    assert [r.id for r in rules][:2] == ["refund-request", "lost-card"]
    assert rules[4].scope is Scope.SCENARIO


def test_json_list(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text('[{"id": "r", "condition_text": "x"}]', encoding="utf-8")
    assert load_rules(path)[0].id == "r"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rules: [{id: r, condition_text: ''}]", r"rules\[0\].*condition_text"),
        (
            "rules: [{id: r, condition_text: a}, {id: r, condition_text: b}]",
            r"rules\[1\] \(r\)\.id: duplicate of rules\[0\]",
        ),
        ("rules: [{id: r, condition_text: a, priority: x}]", "priority"),
        ("just text", "list of rules"),
        ("{other: 1}", r"rulebook\.other: unknown key; rulebook\.rules: must be a list of rules"),
        ("rules: [1]", "mapping"),
    ],
)
def test_bad_files_name_the_rule(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInputError, match=message) as caught:
        load_rules(path)
    assert str(path) in str(caught.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="cannot read"):
        load_rules(tmp_path / "none.yaml")


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    """One reader for the rules format: ``load_rules`` lists every bad rule, as ``norma rules import`` does."""
    path = tmp_path / "rules.yaml"
    path.write_text(
        "rules: [{id: a, condition_text: ''}, {id: b, condition_text: x, priority: high}]", encoding="utf-8"
    )
    with pytest.raises(RulebookError) as caught:
        load_rules(path)
    assert [(p.index, p.rule_id, p.field) for p in caught.value.problems] == [
        (0, "a", "condition_text"),
        (1, "b", "priority"),
    ]


def test_a_file_naming_a_tenant_gives_its_rules_that_tenant() -> None:
    rules = load_rules(EXAMPLES / "rulebooks" / "banking-support.yaml")
    assert {r.tenant_id for r in rules} == {"northwind-bank"}
