"""The one text fold (norma._fold): NFKD, marks dropped, then case folding, for the audit and the checks.

The checks used to case-fold before decomposing, the audit after: they differed where a compatibility form
decomposes to a capital (mathematical and modifier letters, Greek symbols) and on the Greek iota subscript. The
order is now the audit's everywhere; the marks each drops are what they were.
"""

from __future__ import annotations

from typing import Any

import pytest

from norma._fold import fold, fold_char
from norma.checks import CheckStatus, evaluate_checks
from norma.rules import Rule

# (text, folded by both) where the two old orders differed: the checks' order left capitals and kept the iota
DIFFERED = [
    ("\U0001d40f\U0001d408\U0001d40d", "pin"),  # MATHEMATICAL BOLD CAPITAL P, I, N: the checks gave "PIN"
    ("\u1d2c\u1d2e", "ab"),  # MODIFIER LETTER CAPITAL A, B: the checks gave "AB"
    ("\u03d2", "υ"),  # GREEK UPSILON WITH HOOK SYMBOL: the checks gave "Υ"
    ("\u03f9", "σ"),  # GREEK CAPITAL LUNATE SIGMA SYMBOL: the checks gave "ς"
    ("\u1fb3", "α"),  # GREEK SMALL LETTER ALPHA WITH YPOGEGRAMMENI: the checks gave "αι"
    ("\u1f88", "α"),  # GREEK CAPITAL LETTER ALPHA WITH PSILI AND PROSGEGRAMMENI: the checks gave "αι"
]
# where they agreed, and still do
AGREED = [
    ("Código", "codigo"),
    ("STRAßE", "strasse"),
    ("\u0130stanbul", "istanbul"),  # dotted capital I: casefold gives i + U+0307, NFKD I + U+0307
    ("ΟΔΟΣ ὁδός", "οδοσ οδοσ"),  # final sigma folds to σ
    ("ＰＩＮ ㎏ ﬁ", "pin kg fi"),  # full-width, squared, ligature
    ("cafe\u0301", "cafe"),
]


@pytest.mark.parametrize(("text", "expected"), DIFFERED + AGREED)
def test_both_folds_decompose_drop_marks_then_case_fold(text: str, expected: str) -> None:
    assert fold(text) == expected
    assert fold(text, every_mark=True) == expected
    assert "".join(fold_char(c) for c in text) == expected


def test_the_audit_drops_the_combining_diacritics_and_the_checks_every_nonspacing_mark() -> None:
    arabic = "\u0643\u064e\u062a\u064e\u0628\u064e"  # kataba with its three fathas (Mn, not a Latin diacritic)
    assert fold(arabic) == arabic
    assert fold(arabic, every_mark=True) == "\u0643\u062a\u0628"
    heart = "\u2764\ufe0f"  # a heart and the emoji variation selector (Mn)
    assert fold(heart) == heart
    assert fold(heart, every_mark=True) == "\u2764"
    hindi = "\u0928\u092e\u0938\u094d\u0924\u0947"  # namaste: virama and vowel sign e are Mn
    assert fold(hindi) == hindi
    assert fold(hindi, every_mark=True) == "\u0928\u092e\u0938\u0924"


def test_folding_never_adds_or_removes_a_newline() -> None:
    """What lets the audit number folded lines as the original ones: true of every code point."""
    for start in range(0, 0x110000, 0x1000):
        chars = [chr(c) for c in range(start, start + 0x1000) if not 0xD800 <= c <= 0xDFFF and c != 0x0A]
        block = "".join(chars)
        assert "\n" not in fold(block), hex(start)
        assert "\n" not in fold(block, every_mark=True), hex(start)


def _not_contains(output: str, terms: list[str]) -> Any:
    rule = Rule(
        id="no-pin",
        condition_text="c",
        action_text="a",
        checks=[{"id": "pin", "kind": "not_contains", "terms": terms, "when": "always"}],
    )
    return evaluate_checks(rule, output, matched=False)[0]


def test_a_check_finds_a_term_written_in_mathematical_capitals() -> None:
    result = _not_contains("your \U0001d40f\U0001d408\U0001d40d is safe", ["pin"])
    assert result.status is CheckStatus.FAIL
    assert [(s.start, s.end) for s in result.evidence] == [(5, 8)]
    assert _not_contains("\u1fb3\u03b9", ["\u03b1"]).status is CheckStatus.PASS  # "αι" is not the word "α"
