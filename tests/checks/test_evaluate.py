"""Every check kind on hand-made outputs whose verdicts are known; spans are the offsets counted by hand (written
out in the comments), never computed by the code under test."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from norma.checks import MAX_EVIDENCE, NO_LLM, CheckedOutput, CheckResult, CheckStatus, Span, evaluate_checks
from norma.errors import InvalidInputError
from norma.rules import Rule, Severity


def _run(check: dict[str, Any], output: str, *, matched: bool = True, action_text: str = "help") -> CheckResult:
    rule = Rule(id="r", condition_text="anything", action_text=action_text, checks=[{"id": "c", **check}])
    results = evaluate_checks(rule, output, matched=matched)
    assert len(results) == 1
    return results[0]


def _spans(result: CheckResult) -> list[tuple[int, int, int, int, str]]:
    return [(s.start, s.end, s.line, s.column, s.text) for s in result.evidence]


# --- contains / not_contains -----------------------------------------------------------------------------------------


def test_not_contains_finds_every_occurrence_case_insensitively_on_word_boundaries() -> None:
    # "Your Password is: PASSWORD1 or password."  Password: 5-13; PASSWORD1 is another word; password: 31-39
    result = _run({"kind": "not_contains", "terms": ["password"]}, "Your Password is: PASSWORD1 or password.")
    assert result.status is CheckStatus.FAIL
    assert result.message == "mentions 'password' (2 times)"
    assert _spans(result) == [(5, 13, 1, 6, "Password"), (31, 39, 1, 32, "password")]


def test_a_clean_output_passes_not_contains() -> None:
    result = _run({"kind": "not_contains", "terms": ["password", "pin"]}, "Your passport and pinned note.")
    assert (result.status, result.message, result.evidence) == (
        CheckStatus.PASS,
        "mentions none of the 2 forbidden terms",
        (),
    )


def test_accents_are_ignored_and_spans_cover_the_original_characters() -> None:
    # "Un café, un CAFÉ et un cafe\u0301."  café: 3-7; CAFÉ: 12-16; cafe + combining acute: 23-28 (5 characters)
    output = "Un café, un CAFÉ et un cafe\u0301."
    result = _run({"kind": "not_contains", "terms": ["cafe"]}, output)
    assert _spans(result) == [(3, 7, 1, 4, "café"), (12, 16, 1, 13, "CAFÉ"), (23, 28, 1, 24, "cafe\u0301")]
    accented_term = _run({"kind": "not_contains", "terms": ["Café"]}, "the cafe")  # ASCII output, accented term
    assert _spans(accented_term) == [(4, 8, 1, 5, "cafe")]


def test_folding_that_changes_lengths_maps_back_to_the_original_offsets() -> None:
    # "ßß Straße": "ßß" folds to four characters; Straße: 3-9 (6 characters, 7 folded)
    result = _run({"kind": "not_contains", "terms": ["strasse"]}, "ßß Straße")
    assert _spans(result) == [(3, 9, 1, 4, "Straße")]
    # full-width letters fold to ASCII (NFKD): "ＰＩＮ ok": 0-3
    assert _spans(_run({"kind": "not_contains", "terms": ["pin"]}, "ＰＩＮ ok")) == [(0, 3, 1, 1, "ＰＩＮ")]


def test_non_latin_scripts_and_emoji() -> None:
    # Chinese has no spaces between words, so no word boundary is needed: 请0 输1 入2 密3 码4 。5
    assert _spans(_run({"kind": "not_contains", "terms": ["密码"]}, "请输入密码。")) == [(3, 5, 1, 4, "密码")]
    # Cyrillic, upper case: "Ваш " 0-4, ПАРОЛЬ 4-10
    assert _spans(_run({"kind": "not_contains", "terms": ["пароль"]}, "Ваш ПАРОЛЬ: 123")) == [(4, 10, 1, 5, "ПАРОЛЬ")]
    # an emoji is one character (one code point): 👍0 space1 password 2-10
    assert _spans(_run({"kind": "not_contains", "terms": ["password"]}, "👍 password 👍")) == [
        (2, 10, 1, 3, "password")
    ]
    # Latin words still need their boundaries: "pass" is not in "passport"
    assert _run({"kind": "not_contains", "terms": ["pass"]}, "your passport").status is CheckStatus.PASS


def test_lines_and_columns_are_one_based() -> None:
    # "Hello\n" 0-5; line 2 "your pin is\n" 6-17 (pin at 11); line 3 "  PIN: 1234" from 18 (PIN at 20)
    result = _run({"kind": "not_contains", "terms": ["pin"]}, "Hello\nyour pin is\n  PIN: 1234")
    assert _spans(result) == [(11, 14, 2, 6, "pin"), (20, 23, 3, 3, "PIN")]


def test_contains_any_and_all() -> None:
    any_check = {"kind": "contains", "terms": ["refund", "return"]}
    assert _run(any_check, "A RETURN is possible.").message == "mentions 'return' (once)"
    missing = _run(any_check, "No money back.")
    assert (missing.status, missing.message, missing.evidence) == (
        CheckStatus.FAIL,
        "mentions none of 'refund', 'return'",
        (),
    )
    all_check = {"kind": "contains", "terms": ["refund", "policy"], "mode": "all"}
    assert _run(all_check, "Our refund policy.").status is CheckStatus.PASS
    partial = _run(all_check, "Our refund.")
    assert (partial.status, partial.message, partial.evidence) == (CheckStatus.FAIL, "does not mention 'policy'", ())


def test_not_contains_all_fails_only_when_every_term_is_there() -> None:
    check = {"kind": "not_contains", "terms": ["bank", "password"], "mode": "all"}
    assert _run(check, "the bank only").status is CheckStatus.PASS
    # "bank password": bank 0-4, password 5-13
    both = _run(check, "bank password")
    assert both.status is CheckStatus.FAIL
    assert both.message == "mentions all the terms together: 'bank' (once), 'password' (once)"
    assert _spans(both) == [(0, 4, 1, 1, "bank"), (5, 13, 1, 6, "password")]


# --- regex / not_regex -----------------------------------------------------------------------------------------------


def test_regex() -> None:
    check = {"kind": "regex", "pattern": "(?i)ref-[0-9]{4}"}
    found = _run(check, "see REF-1234")
    assert (found.status, found.message) == (CheckStatus.PASS, "matches '(?i)ref-[0-9]{4}' at line 1, column 5")
    missing = _run(check, "no reference")
    assert (missing.status, missing.message, missing.evidence) == (
        CheckStatus.FAIL,
        "nothing matches '(?i)ref-[0-9]{4}'",
        (),
    )


def test_not_regex_reports_every_match() -> None:
    # "go to " 0-5, URL 6-25; " now\n" 25-29; line 2 from 30: "or " then http://b.c 33-43
    output = "go to https://a.example/x now\nor http://b.c"
    result = _run({"kind": "not_regex", "pattern": r"https?://\S+"}, output)
    assert result.status is CheckStatus.FAIL
    assert result.message == r"matches 'https?://\S+' 2 times"  # as the rulebook writes it: one backslash
    assert _spans(result) == [(6, 25, 1, 7, "https://a.example/x"), (33, 43, 2, 4, "http://b.c")]
    assert _run({"kind": "not_regex", "pattern": "https?://"}, "no links").status is CheckStatus.PASS


def test_regex_offsets_are_characters_not_bytes() -> None:
    # a0 é1 é2 😀3 b4
    assert _spans(_run({"kind": "not_regex", "pattern": "é+"}, "aéé😀b")) == [(1, 3, 1, 2, "éé")]
    assert _spans(_run({"kind": "not_regex", "pattern": "b"}, "aéé😀b")) == [(4, 5, 1, 5, "b")]


def test_not_regex_on_a_blank_output() -> None:
    result = _run({"kind": "not_regex", "pattern": r"^\s*$"}, "")
    assert result.status is CheckStatus.FAIL
    assert _spans(result) == [(0, 0, 1, 1, "")]


# --- max_chars / max_words / min_words -------------------------------------------------------------------------------


def test_max_chars_counts_characters_and_points_past_the_limit() -> None:
    assert _run({"kind": "max_chars", "limit": 5}, "héllo").status is CheckStatus.PASS
    over = _run({"kind": "max_chars", "limit": 5}, "héllo!")
    assert (over.status, over.message) == (CheckStatus.FAIL, "6 characters, over the limit of 5")
    assert _spans(over) == [(5, 6, 1, 6, "!")]
    assert _run({"kind": "max_chars", "limit": 0}, "").status is CheckStatus.PASS


def test_max_words_points_from_the_first_word_too_many_to_the_last_word() -> None:
    # one0 two4 -8 (not a word) three10 four16 five21-25
    result = _run({"kind": "max_words", "limit": 3}, "one two - three four five  ")
    assert (result.status, result.message) == (CheckStatus.FAIL, "5 words, over the limit of 3")
    assert _spans(result) == [(16, 25, 1, 17, "four five")]
    assert _run({"kind": "max_words", "limit": 5}, "one two - three four five").status is CheckStatus.PASS
    assert _run({"kind": "max_words", "limit": 2}, "").status is CheckStatus.PASS


def test_min_words() -> None:
    assert _run({"kind": "min_words", "limit": 2}, "Hello there").status is CheckStatus.PASS
    chinese = _run({"kind": "min_words", "limit": 2}, "日本語のテキスト")  # no spaces: one word
    assert (chinese.status, chinese.message, chinese.evidence) == (
        CheckStatus.FAIL,
        "1 words, fewer than the minimum of 2",
        (),
    )
    assert _run({"kind": "min_words", "limit": 1}, "").message == "0 words, fewer than the minimum of 1"


# --- json ------------------------------------------------------------------------------------------------------------

STATUS_SCHEMA = {"type": "object", "required": ["status"], "properties": {"status": {"enum": ["ok", "error"]}}}


def test_json_whole_output_or_first_fenced_block() -> None:
    assert _run({"kind": "json"}, '{"a": 1}').message == "the output is JSON"
    fenced = _run({"kind": "json"}, 'Here:\n```json\n{"a": [1, 2]}\n```\nDone')
    assert (fenced.status, fenced.message) == (CheckStatus.PASS, "the fenced block at line 2 is JSON")
    # "```python\n" (line 1), "x = 1\n" (line 2), "```\n" (line 3), "```json\n" (line 4), "[1]" (line 5)
    skipped = _run({"kind": "json"}, "```python\nx = 1\n```\n```json\n[1]\n```")
    assert skipped.message == "the fenced block at line 4 is JSON"


def test_json_that_does_not_parse_points_at_the_error() -> None:
    # '{"a": 1,}': the parser expects a name at offset 8, the "}"
    result = _run({"kind": "json"}, '{"a": 1,}')
    assert result.status is CheckStatus.FAIL
    assert result.message == (
        "the output is not JSON: Expecting property name enclosed in double quotes at line 1, column 9"
    )
    assert _spans(result) == [(8, 9, 1, 9, "}")]
    empty = _run({"kind": "json"}, "")
    assert empty.message == "the output is not JSON: Expecting value at line 1, column 1"
    assert _spans(empty) == [(0, 0, 1, 1, "")]
    nan = _run({"kind": "json"}, '{"a": NaN}')
    assert (nan.status, nan.message, nan.evidence) == (
        CheckStatus.FAIL,
        "the output is not JSON: NaN is not a JSON value",
        (),
    )


def test_json_against_a_schema() -> None:
    check = {"kind": "json", "schema": STATUS_SCHEMA}
    assert _run(check, '{"status": "ok"}').message == "the output is JSON that the schema accepts"
    # "```json\n" 0-7 (line 1, the block's line); its content '{"status": "maybe"}' 8-27 on line 2
    result = _run(check, '```json\n{"status": "maybe"}\n```')
    assert result.status is CheckStatus.FAIL
    assert result.message == (
        "the fenced block at line 1 does not match the schema: at $.status: 'maybe' is not one of ['ok', 'error']"
    )
    assert _spans(result) == [(8, 27, 2, 1, '{"status": "maybe"}')]


def test_an_unresolvable_local_reference_is_a_skip_not_a_pass() -> None:
    result = _run({"kind": "json", "schema": {"$ref": "#/$defs/missing"}}, "{}")
    assert result.status is CheckStatus.SKIP
    assert result.message.startswith("the schema cannot be used: unresolvable reference")


# --- no_pii ----------------------------------------------------------------------------------------------------------


def test_card_numbers_are_confirmed_by_luhn_and_masked_in_the_evidence() -> None:
    # "Card: " 0-5, 4111 1111 1111 1111 (a Luhn-valid test number) 6-25
    result = _run({"kind": "no_pii"}, "Card: 4111 1111 1111 1111.")
    assert (result.status, result.message) == (CheckStatus.FAIL, "personal data found: card number (once)")
    assert _spans(result) == [(6, 25, 1, 7, "**** **** **** 1111")]
    assert _run({"kind": "no_pii"}, "Card: 4111 1111 1111 1112.").status is CheckStatus.PASS  # Luhn fails
    # a card number followed by more digits is still found: "4111111111111111 123" (16 digits, then 3)
    assert _spans(_run({"kind": "no_pii", "kinds": ["card"]}, "4111111111111111 123")) == [
        (0, 16, 1, 1, "************1111")
    ]


def test_ibans_are_confirmed_by_mod_97() -> None:
    # "IBAN: " 0-5, GB82 WEST 1234 5698 7654 32 (the standard example) 6-33; an upper-case word after it is not part
    result = _run({"kind": "no_pii", "kinds": ["iban"]}, "IBAN: GB82 WEST 1234 5698 7654 32 AND MORE")
    assert (result.message, _spans(result)) == (
        "personal data found: IBAN (once)",
        [(6, 33, 1, 7, "**** **** **** **** **54 32")],
    )
    assert _run({"kind": "no_pii", "kinds": ["iban"]}, "IBAN: GB83 WEST 1234 5698 7654 32").status is CheckStatus.PASS
    # the digits of an IBAN are not reported again as a card number
    de = _run({"kind": "no_pii"}, "DE89 3704 0044 0532 0130 00")
    assert (de.message, [s.start for s in de.evidence]) == ("personal data found: IBAN (once)", [0])


def test_email_addresses_and_phone_numbers() -> None:
    # "Write to " 0-8, jane.doe@example.org 9-29
    email = _run({"kind": "no_pii"}, "Write to jane.doe@example.org.")
    assert _spans(email) == [(9, 29, 1, 10, "****.***@******e.org")]
    # "Call " 0-4, +33 6 12 34 56 78 5-22
    phone = _run({"kind": "no_pii"}, "Call +33 6 12 34 56 78 today")
    assert (phone.message, _spans(phone)) == (
        "personal data found: phone number (once)",
        [(5, 22, 1, 6, "+** * ** ** 56 78")],
    )
    # "at " 0-2, (555) 123-4567 3-17; "tel " 0-3, 06 12 34 56 78 4-18
    assert [(s.start, s.end) for s in _run({"kind": "no_pii"}, "at (555) 123-4567.").evidence] == [(3, 17)]
    assert [(s.start, s.end) for s in _run({"kind": "no_pii"}, "tel 06 12 34 56 78").evidence] == [(4, 18)]
    # 😀0 space1 "mail:" 2-6 space7 a@b.co 8-14 (four letters and digits: nothing to mask)
    assert _spans(_run({"kind": "no_pii", "kinds": ["email"]}, "😀 mail: a@b.co")) == [(8, 14, 1, 9, "a@b.co")]


def test_ordinary_numbers_are_not_personal_data() -> None:
    result = _run({"kind": "no_pii"}, "Order 2024-01-15, total 1234.56 EUR, ref 123456, version 1.2.3")
    assert (result.status, result.message) == (
        CheckStatus.PASS,
        "no card number, IBAN, e-mail address, phone number found",
    )


def test_only_the_kinds_asked_for_are_looked_for() -> None:
    output = "jane@example.org, 4111 1111 1111 1111"
    assert _run({"kind": "no_pii", "kinds": ["email"]}, output).message == "personal data found: e-mail address (once)"
    assert _run({"kind": "no_pii", "kinds": ["phone"]}, output).status is CheckStatus.PASS


# --- judge, when, the result's fields --------------------------------------------------------------------------------


def test_a_judge_check_is_skipped_without_an_llm_never_passed() -> None:
    for output in ("", "I have explained the refund policy."):
        result = _run({"kind": "judge", "criterion": "explains the refund policy", "votes": 3}, output)
        assert (result.status, result.message, result.evidence) == (CheckStatus.SKIP, NO_LLM, ())
    assert NO_LLM.startswith("no LLM configured")


def test_checks_apply_when_the_rule_matched_or_always() -> None:
    rule = Rule(
        id="cards",
        condition_text="customer asks about their card",
        checks=[
            {"id": "short", "kind": "max_words", "limit": 50},
            {"id": "no-card", "kind": "no_pii", "kinds": ["card"], "when": "always", "severity": "warning"},
        ],
    )
    output = "Your card 4111 1111 1111 1111 is blocked."
    assert [r.check_id for r in evaluate_checks(rule, output, matched=True)] == ["short", "no-card"]
    unmatched = evaluate_checks(rule, output, matched=False)
    assert [(r.rule_id, r.check_id, r.kind, r.severity, r.weight, r.status) for r in unmatched] == [
        ("cards", "no-card", "no_pii", Severity.WARNING, 1.0, CheckStatus.FAIL)
    ]
    assert unmatched[0].to_dict() == {
        "rule_id": "cards",
        "check_id": "no-card",
        "kind": "no_pii",
        "severity": "warning",
        "weight": 1.0,
        "status": "fail",
        "message": "personal data found: card number (once)",
        "evidence": [{"start": 10, "end": 29, "line": 1, "column": 11, "text": "**** **** **** 1111"}],
        "enforced": True,
    }
    assert evaluate_checks(Rule(id="plain", condition_text="x"), output, matched=True) == []


def test_a_neighbours_requirements_are_skipped_with_the_reason_and_its_prohibitions_apply() -> None:
    rule = Rule(
        id="fraud",
        condition_text="customer reports a payment they did not make",
        checks=[
            {"id": "offers-freeze", "kind": "contains", "terms": ["freeze"]},
            {"id": "fraud-team", "kind": "regex", "pattern": "fraud team", "when": "matched"},  # the author's override
            {"id": "no-blame", "kind": "not_contains", "terms": ["your fault"]},
            {"id": "long-enough", "kind": "min_words", "limit": 3, "when": "enforced"},
            {"id": "no-card", "kind": "no_pii", "kinds": ["card"], "when": "always"},
        ],
    )
    output = "It was your fault, the fraud team says."
    why = "similarity 0.400, 0.300 below the top match's 0.700"
    got = evaluate_checks(rule, output, matched=True, neighbour=why)
    assert [(r.check_id, r.status.value, r.enforced) for r in got] == [
        ("offers-freeze", "skip", False),
        ("fraud-team", "pass", True),
        ("no-blame", "fail", True),
        ("long-enough", "skip", False),
        ("no-card", "pass", True),
    ]
    assert got[0].message == (
        "the rule matched only as a neighbour (similarity 0.400, 0.300 below the top match's 0.700): "
        "a requirement applies when the rule governs the turn"
    )
    governing = evaluate_checks(rule, output, matched=True)
    assert [(r.check_id, r.status.value) for r in governing] == [
        ("offers-freeze", "fail"), ("fraud-team", "pass"), ("no-blame", "fail"), ("long-enough", "pass"),
        ("no-card", "pass"),
    ]  # fmt: skip
    assert [r.check_id for r in evaluate_checks(rule, output, matched=False, neighbour=why)] == ["no-card"]


def test_an_output_that_is_not_text_or_not_unicode_is_refused() -> None:
    rule = Rule(id="r", condition_text="x", checks=[{"id": "c", "kind": "max_chars", "limit": 3}])
    with pytest.raises(InvalidInputError, match="must be text, not bytes"):
        evaluate_checks(rule, b"abc", matched=True)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="not valid Unicode"):
        evaluate_checks(rule, "a\ud800", matched=True)


def test_one_checked_output_gives_each_rule_what_evaluate_checks_gives_it() -> None:
    # a turn evaluates one output against each of its rules through one CheckedOutput
    rules = [
        Rule(id="words", condition_text="x", checks=[{"id": "c", "kind": "max_words", "limit": 3}]),
        Rule(id="terms", condition_text="x", checks=[{"id": "c", "kind": "not_contains", "terms": ["pin"]}]),
        Rule(id="card", condition_text="x", checks=[{"id": "c", "kind": "no_pii", "when": "always"}]),
        Rule(id="plain", condition_text="x"),
    ]
    output = "Your PIN is 1234.\nCard 4111 1111 1111 1111, café"
    checked = CheckedOutput(output)
    got = [checked.evaluate(rule, matched=matched) for matched in (True, False) for rule in rules]
    assert got == [evaluate_checks(rule, output, matched=matched) for matched in (True, False) for rule in rules]
    assert [r.status for results in got for r in results] == [CheckStatus.FAIL] * 4
    other = CheckedOutput("short and clean")  # nothing of the first output is kept
    assert [r.status for r in other.evaluate(rules[1], matched=True)] == [CheckStatus.PASS]


def test_a_checked_output_that_is_not_unicode_is_refused_for_every_rule_naming_it() -> None:
    checked = CheckedOutput("a\ud800")
    for rule_id in ("first", "second"):
        rule = Rule(id=rule_id, condition_text="x", checks=[{"id": "c", "kind": "max_chars", "limit": 3}])
        with pytest.raises(InvalidInputError, match="not valid Unicode") as caught:
            checked.evaluate(rule, matched=True)
        assert caught.value.source == f"rule {rule_id!r}"
    bad_message = CheckedOutput("fine", message="a\ud800")
    with pytest.raises(InvalidInputError, match="message must be valid Unicode"):
        bad_message.evaluate(rule, matched=True)


# --- large outputs ---------------------------------------------------------------------------------------------------


def test_a_100000_character_output() -> None:
    # "abc " 24,997 times (99,988 characters), then "password!!!!": 100,000 characters, 24,998 words
    output = "abc " * 24_997 + "password!!!!"
    assert len(output) == 100_000
    rule = Rule(
        id="big",
        condition_text="x",
        checks=[
            {"id": "term", "kind": "not_contains", "terms": ["password"]},
            {"id": "re", "kind": "not_regex", "pattern": "pass[a-z]+"},
            {"id": "words", "kind": "max_words", "limit": 100},
            {"id": "chars", "kind": "max_chars", "limit": 99_999},
            {"id": "pii", "kind": "no_pii"},
            {"id": "json", "kind": "json"},
        ],
    )
    results = {r.check_id: r for r in evaluate_checks(rule, output, matched=True)}
    assert _spans(results["term"]) == [(99_988, 99_996, 1, 99_989, "password")]
    assert _spans(results["re"]) == [(99_988, 99_996, 1, 99_989, "password")]
    # the 101st word starts at 100 * 4 = 400; the span runs to the end and shows its first 200 characters
    assert results["words"].message == "24,998 words, over the limit of 100"
    assert results["words"].evidence == (Span(start=400, end=100_000, line=1, column=401, text="abc " * 50),)
    assert _spans(results["chars"]) == [(99_999, 100_000, 1, 100_000, "!")]
    assert results["pii"].status is CheckStatus.PASS
    assert results["json"].status is CheckStatus.FAIL


def test_evidence_is_capped_and_the_message_gives_the_full_count() -> None:
    output = "é " * 50_000  # accented, so the folded text is built; "e" matches each é at offsets 0, 2, 4, ...
    result = _run({"kind": "not_contains", "terms": ["e"]}, output)
    assert result.message == f"mentions 'e' (50,000 times) (the first {MAX_EVIDENCE} shown)"
    assert len(result.evidence) == MAX_EVIDENCE == 100
    assert _spans(result)[0] == (0, 1, 1, 1, "é")
    assert _spans(result)[-1] == (198, 199, 1, 199, "é")


def test_no_pii_stays_linear_on_adversarial_text() -> None:
    for output in ("a" * 100_000, "1" * 100_000, "a." * 50_000, "+1 " * 33_333):
        assert _run({"kind": "no_pii"}, output).status is CheckStatus.PASS


def test_the_checksum_libraries_load_only_when_used() -> None:
    code = (
        "import sys, norma.checks, norma.rules\n"
        "rule = norma.rules.Rule(id='r', condition_text='x', checks=[{'id': 'c', 'kind': 'max_words', 'limit': 3}])\n"
        "norma.checks.evaluate_checks(rule, 'a b', matched=True)\n"
        "print(sorted(m for m in ('jsonschema', 'stdnum') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_word_counts_follow_isspace_and_isalnum_on_any_unicode() -> None:
    """Words are runs of non-space characters (str.isspace) holding a letter or digit (str.isalnum): the checks
    count them with two regular expressions, compared here with a plain character loop."""
    import random

    from norma.checks._evaluate import _Output

    alphabet = [" ", "\t", "\n", "\u00a0", "\u2003", "\u3000", "\x1c", "a", "Z", "9", "_", "!", "é", "\u0301", "٣"]
    draw = random.Random(38)
    for _ in range(2_000):
        text = "".join(draw.choice(alphabet) for _ in range(draw.randint(0, 30)))
        runs: list[tuple[int, int]] = []
        start = None
        for index, char in enumerate(text):
            if char.isspace():
                if start is not None:
                    runs.append((start, index))
                    start = None
            elif start is None:
                start = index
        if start is not None:
            runs.append((start, len(text)))
        expected = [(a, b) for a, b in runs if any(c.isalnum() for c in text[a:b])]
        assert _Output(text).words == expected, repr(text)


def test_a_pattern_is_shown_as_written_in_quotes_it_does_not_hold() -> None:
    from norma.checks._evaluate import as_written

    assert as_written(r"\b\d{8}\b") == r"'\b\d{8}\b'"
    assert as_written(r"(?i)\b(don't)\s+share") == r'''"(?i)\b(don't)\s+share"'''
    assert as_written("""say "don't" """) == """`say "don't" `"""
    assert as_written("""`"'""") == repr("""`"'""")  # all three quotes: Python's repr, escapes and all
