"""Rulebooks: the format, whole-file validation with every problem reported, and the round trip."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from norma._safety import load_json, load_yaml
from norma.errors import InvalidInputError, LimitExceededError
from norma.rules import MAX_RULEBOOK_VALUES, Rule, RulebookError, Scope, dump_rulebook, load_rulebook
from tests.conftest import EXAMPLES
from tests.rules._values import METADATA_VALUES, RULE_TEXTS

BANKING = EXAMPLES / "rulebooks" / "banking-support.yaml"


def test_the_example_rulebook_is_valid_and_realistic() -> None:
    book = load_rulebook(BANKING)
    assert book.tenant_id == "northwind-bank"
    assert 20 <= len(book.rules) <= 40
    scopes = {r.scope for r in book.rules}
    assert scopes == {Scope.GLOBAL, Scope.SCENARIO, Scope.STEP}
    assert sum(1 for r in book.rules if r.examples) >= 20
    assert any(not r.enabled for r in book.rules)
    assert all(r.tenant_id == "northwind-bank" for r in book.rules)


def test_every_problem_is_reported_with_index_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(
        """
rules:
  - id: ok
    condition_text: customer says hello
  - id: no-condition
  - id: bad-priority
    condition_text: x
    priority: high
  - id: step-without-step
    condition_text: x
    scope: step
    scenario_id: s
  - id: ok
    condition_text: duplicate id
  - just a string
  - id: typo
    condition_text: x
    prority: 3
""",
        encoding="utf-8",
    )
    with pytest.raises(RulebookError) as caught:
        load_rulebook(path, tenant_id="acme")
    found = {(p.index, p.field) for p in caught.value.problems}
    assert found == {
        (1, "condition_text"),
        (2, "priority"),
        (3, "rule"),
        (4, "id"),
        (5, "rule"),
        (6, "prority"),
    }
    by_index = {p.index: p for p in caught.value.problems}
    assert by_index[1].rule_id == "no-condition"
    assert "duplicate of rules[0]" in by_index[4].message
    assert "STEP rule needs step_id" in by_index[3].message
    text = str(caught.value)
    assert "6 problem(s)" in text
    assert str(path) in text
    assert "rules[2] (bad-priority).priority" in text


def test_file_level_problems(tmp_path: Path) -> None:
    cases = {
        "notalist.yaml": "rules: {id: x}",
        "wrongformat.yaml": "format: other/v9\nrules: []",
        "extra.yaml": "rulez: []\nrules: []",
        "scalar.yaml": "just text",
    }
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        with pytest.raises(RulebookError):
            load_rulebook(path)
    broken = tmp_path / "broken.yaml"
    broken.write_text("rules: [\n", encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"^.*broken\.yaml:2:1: not valid YAML: "):
        load_rulebook(broken)
    with pytest.raises(InvalidInputError, match="cannot read"):
        load_rulebook(tmp_path / "missing.yaml")


def test_tenant_conflicts(tmp_path: Path) -> None:
    with pytest.raises(RulebookError, match="not 'globex'"):
        load_rulebook({"tenant": "acme", "rules": []}, tenant_id="globex")
    with pytest.raises(RulebookError, match="tenant_id"):
        load_rulebook([{"id": "a", "condition_text": "x", "tenant_id": "globex"}], tenant_id="acme")
    book = load_rulebook([{"id": "a", "condition_text": "x", "tenant_id": "acme"}], tenant_id="acme")
    assert book.rules[0].tenant_id == "acme"


texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=30).filter(
    lambda s: s.strip() != ""
)
ids = st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True)


@st.composite
def rules(draw: st.DrawFn) -> Rule:
    scope = draw(st.sampled_from(list(Scope)))
    return Rule(
        id=draw(ids),
        condition_text=draw(texts),
        action_text=draw(st.one_of(st.just(""), texts)),
        scope=scope,
        scenario_id=None if scope is Scope.GLOBAL else draw(ids),
        step_id=draw(ids) if scope is Scope.STEP else None,
        priority=draw(st.integers(-1000, 1000)),
        enabled=draw(st.booleans()),
        max_fires_per_session=draw(st.one_of(st.none(), st.integers(1, 9))),
        tags=draw(st.lists(ids, max_size=3)),
        examples=draw(st.lists(texts, max_size=3)),
        metadata=draw(st.dictionaries(ids, st.one_of(st.integers(), texts, st.booleans()), max_size=2)),
    )


@settings(max_examples=60, deadline=None)
@given(st.lists(rules(), max_size=6, unique_by=lambda r: r.id), st.sampled_from(["yaml", "json"]))
def test_dump_then_load_gives_equal_rules(book: list[Rule], fmt: str) -> None:
    text = dump_rulebook(book, fmt=fmt)  # type: ignore[arg-type]
    data = load_json(text) if fmt == "json" else load_yaml(text)
    assert list(load_rulebook(data).rules) == book


@pytest.mark.parametrize("source", [None, 3, 2.5, True])
def test_a_source_that_is_neither_path_nor_data_is_invalid_input(source: object) -> None:
    """Found by tests/fuzz/atheris_fuzz.py (target rulebook): None was a TypeError from pathlib."""
    with pytest.raises(InvalidInputError, match="not "):
        load_rulebook(source, tenant_id="t")  # type: ignore[arg-type]


@st.composite
def any_rules(draw: st.DrawFn) -> Rule:
    ids = st.text(st.characters(exclude_categories=("Cc", "Cs")), min_size=1, max_size=30).map(str.strip)
    try:
        return Rule(
            id=draw(ids),
            condition_text=draw(RULE_TEXTS),
            action_text=draw(st.one_of(st.just(""), st.text(max_size=60))),
            tags=draw(st.lists(st.text(max_size=20), max_size=3)),
            examples=draw(st.lists(RULE_TEXTS, max_size=3)),
            metadata=draw(st.dictionaries(st.text(max_size=12), METADATA_VALUES, max_size=4)),
        )
    except InvalidInputError:
        reject()


@settings(max_examples=300, deadline=None)
@given(st.lists(any_rules(), max_size=4, unique_by=lambda r: r.id), st.sampled_from(["yaml", "json"]))
def test_any_rule_the_model_accepts_dumps_and_loads_back(book: list[Rule], fmt: str) -> None:
    """Every code point but lone surrogates, in texts, ids, tags and metadata keys and values (issue 23: a YAML dump
    dropped U+0085), read back by the bounded loaders a file goes through."""
    text = dump_rulebook(book, tenant_id="t", fmt=fmt)  # type: ignore[arg-type]
    data = load_json(text.encode()) if fmt == "json" else load_yaml(text.encode())
    assert list(load_rulebook(data).rules) == [r.model_copy(update={"tenant_id": "t"}) for r in book]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_line_breaks_yaml_folds_are_written_as_escapes(fmt: str) -> None:
    rule = Rule(id="r", condition_text="x\x85\u2028y", examples=["a\u2029b"], metadata={"k\x85": "a\x85b"})
    text = dump_rulebook([rule], fmt=fmt)  # type: ignore[arg-type]
    if fmt == "yaml":
        assert '"x\\N\\Ly"' in text
    data = load_json(text) if fmt == "json" else load_yaml(text)
    assert load_rulebook(data).rules == (rule,)


def test_a_rulebook_file_is_bounded_at_its_own_value_count(tmp_path: Path) -> None:
    bomb = "\n".join(
        ["tenant: t", "x: &l0 [" + ", ".join(["1"] * 10) + "]"]
        + [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 8)]
        + ["rules: []"]
    )
    path = tmp_path / "bomb.yaml"
    path.write_text(bomb.replace("x: &l0", "l0: &l0"), encoding="utf-8")
    with pytest.raises(LimitExceededError, match=f"more than {MAX_RULEBOOK_VALUES:,} values"):
        load_rulebook(path)


def test_a_rule_id_that_is_not_unicode_is_reported_without_it() -> None:
    with pytest.raises(RulebookError) as info:
        load_rulebook([{"id": "\ud800", "condition_text": "x"}], tenant_id="t")
    (problem,) = info.value.problems
    assert (problem.index, problem.rule_id, problem.field) == (0, None, "id")
    str(info.value).encode("utf-8")  # prints


def test_a_duplicate_id_is_reported_with_the_other_problems(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(
        "rules:\n  - {id: a, condition_text: x, priority: high}\n  - {id: a, condition_text: y}\n", encoding="utf-8"
    )
    with pytest.raises(RulebookError) as caught:
        load_rulebook(path)
    assert [(p.index, p.field, p.message) for p in caught.value.problems] == [
        (0, "priority", "Input should be a valid integer, unable to parse string as an integer"),
        (1, "id", "duplicate of rules[0]"),
    ]
    assert "nothing imported" not in str(caught.value)  # loading imports nothing; `rules import` says so itself


def test_an_unterminated_quote_is_located_where_it_opens(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text('rules:\n  - id: a\n    condition_text: "never closed\n    priority: 1\n', encoding="utf-8")
    with pytest.raises(InvalidInputError) as caught:
        load_rulebook(path)
    assert (caught.value.line, caught.value.column) == (3, 21)  # the opening quote, not the end of the file (line 5)
    assert "while scanning a quoted scalar" in caught.value.message
