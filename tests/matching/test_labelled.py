"""Labelled messages (JSONL): the strict format, its typed errors naming file and line, and the check of rule ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from norma.errors import InvalidInputError, LimitExceededError
from norma.matching import (
    LabelledMessage,
    LabelledMessagesError,
    Rule,
    Scope,
    load_labelled,
)
from norma.matching._labelled import MAX_LABELLED_MESSAGES, check_labelled, parse_labelled

RULES = [
    Rule(id="refund", condition_text="customer asks for a refund"),
    Rule(id="old", condition_text="customer asks for a cheque book", enabled=False),
    Rule(id="late", condition_text="the parcel is late", scope=Scope.SCENARIO, scenario_id="delivery"),
    Rule(id="verify", condition_text="customer gives their date of birth", scope=Scope.STEP, scenario_id="lost",
         step_id="verify"),
]  # fmt: skip


def test_a_file_is_read_line_by_line_with_optional_scenario_and_step(tmp_path: Path) -> None:
    path = tmp_path / "labelled.jsonl"
    path.write_text(
        '{"message": "money back please", "expected": ["refund"]}\n'
        "\n"
        '{"message": "hello there", "expected": []}\n'
        '{"message": "where is it", "expected": ["late"], "scenario": "delivery"}\n'
        '{"message": "born 1 May 1990", "expected": ["verify"], "scenario": "lost", "step": "verify"}\n',
        encoding="utf-8",
    )
    items = load_labelled(path)
    assert [(i.message, i.expected, i.scenario, i.step, i.line) for i in items] == [
        ("money back please", ("refund",), None, None, 1),
        ("hello there", (), None, None, 3),
        ("where is it", ("late",), "delivery", None, 4),
        ("born 1 May 1990", ("verify",), "lost", "verify", 5),
    ]
    check_labelled(items, RULES, source=str(path))  # every id known and reachable: no error


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"message": "hi", "rules": ["refund"]}', "unknown key(s) 'rules'"),
        ('{"message": "hi"}', '"expected" is missing'),
        ('{"expected": []}', '"message" is missing'),
        ('{"message": "  ", "expected": []}', '"message" must be non-blank text'),
        ('{"message": 3, "expected": []}', '"message" must be non-blank text, not int'),
        ('{"message": "hi", "expected": "refund"}', '"expected" must be a list of rule ids'),
        ('{"message": "hi", "expected": ["refund", 2]}', '"expected" must be a list of rule ids'),
        ('{"message": "hi", "expected": ["refund", "refund"]}', "names 'refund' more than once"),
        ('{"message": "hi", "expected": [], "scenario": ""}', '"scenario" must be non-blank text'),
        ('["hi", ["refund"]]', "expected a JSON object, got list"),
        ('{"message": "hi", "expected": [}', "not valid JSON"),
        ('{"message": NaN, "expected": []}', "NaN"),
    ],
)
def test_a_bad_line_is_a_typed_error_naming_file_and_line(line: str, problem: str) -> None:
    text = '{"message": "fine", "expected": []}\n' + line + "\n"
    with pytest.raises(LabelledMessagesError) as info:
        parse_labelled(text, source="set.jsonl")
    assert isinstance(info.value, InvalidInputError)
    assert (info.value.source, info.value.line, info.value.location) == ("set.jsonl", 2, None)
    assert problem in str(info.value)
    assert str(info.value).startswith("set.jsonl:2: ")


def test_an_empty_file_and_bad_utf8_are_errors(tmp_path: Path) -> None:
    with pytest.raises(LabelledMessagesError, match="no labelled message"):
        parse_labelled("\n  \n", source="empty.jsonl")
    path = tmp_path / "latin1.jsonl"
    path.write_bytes('{"message": "caf\xe9", "expected": []}\n'.encode("latin-1"))
    with pytest.raises(LabelledMessagesError, match="not valid UTF-8 at byte 16"):
        load_labelled(path)


def test_too_many_messages_is_refused() -> None:
    text = '{"message": "m", "expected": []}\n' * (MAX_LABELLED_MESSAGES + 1)
    with pytest.raises(LimitExceededError, match="more than 100,000 labelled messages") as info:
        parse_labelled(text)
    assert (info.value.line, info.value.location) == (MAX_LABELLED_MESSAGES + 1, None)


def test_unknown_ids_are_listed_with_the_line() -> None:
    items = parse_labelled('{"message": "a", "expected": []}\n{"message": "b", "expected": ["x", "refund", "y"]}\n')
    with pytest.raises(LabelledMessagesError) as info:
        check_labelled(items, RULES, source="set.jsonl")
    assert str(info.value) == (
        "set.jsonl:2: unknown rule id(s) 'x', 'y' (expected ids must be rules of the rulebook evaluated)"
    )


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ('{"message": "a", "expected": ["old"]}', "rule 'old' is disabled: it matches nothing"),
        ('{"message": "a", "expected": ["late"]}', "rule 'late' is a rule of scenario 'delivery': add \"scenario\""),
        ('{"message": "a", "expected": ["late"], "scenario": "other"}', "rule of scenario 'delivery'"),
        ('{"message": "a", "expected": ["verify"], "scenario": "lost"}', "is a rule of step 'verify': add \"step\""),
        ('{"message": "a", "expected": ["verify"], "step": "verify"}', "is a step of scenario 'lost'"),
    ],
)
def test_a_rule_that_cannot_match_the_message_is_an_error(record: str, problem: str) -> None:
    with pytest.raises(LabelledMessagesError, match=r"^<labelled>:1: ") as info:
        check_labelled(parse_labelled(record), RULES)
    assert problem in str(info.value)


def test_messages_built_in_code_are_located_by_index() -> None:
    items = [LabelledMessage(message="a", expected=("refund",)), LabelledMessage(message="b", expected=["nope"])]
    assert items[1].expected == ("nope",)
    assert items[1].line is None
    with pytest.raises(LabelledMessagesError) as info:
        check_labelled(items, RULES)
    assert info.value.location == "[1]"
    with pytest.raises(LabelledMessagesError, match="no labelled message"):
        check_labelled([], RULES)


def test_a_raw_line_separator_inside_a_message_stays_in_its_record() -> None:
    # json.dumps(..., ensure_ascii=False) writes U+2028, U+2029 and U+0085 raw; only "\n" ends a JSON Lines record
    text = (
        '{"message": "first\u2028second\u2029third\x85fourth", "expected": []}\r\n{"message": "next", "expected": []}\n'
    )
    found = parse_labelled(text, source="set.jsonl")
    assert [item.message for item in found] == ["first\u2028second\u2029third\x85fourth", "next"]
    with pytest.raises(LabelledMessagesError) as info:
        parse_labelled(text + '{"message": "x\u2028y", "expected": [}\n', source="set.jsonl")
    assert info.value.line == 3
