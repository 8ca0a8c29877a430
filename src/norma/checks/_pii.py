"""Personal data in an output: candidates found by linear-time patterns (RE2), confirmed by checksums where the
data has one (``stdnum.luhn`` for card numbers, ``stdnum.iban`` for IBANs; python-stdnum is imported on first use).

A candidate that overlaps one already found is dropped, so each stretch of the output is reported once, in the
order IBAN, card, e-mail, phone (an IBAN's digits are not also a card number).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from norma._safety import Pattern, compile_pattern

__all__ = ["PII_LABELS", "find_pii", "mask"]

PII_LABELS = {"card": "card number", "iban": "IBAN", "email": "e-mail address", "phone": "phone number"}
"""How a message names each kind of personal data."""

_PATTERNS = {
    "iban": r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){11,30}\b",
    "card": r"\b[0-9](?:[ -]?[0-9]){12,18}\b",
    "email": r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}\b",
    # international (+ country code, 8 to 15 digits in all), national with a leading 0 (10 or 11 digits),
    # North American with separators ((555) 123-4567, 555-123-4567, 555.123.4567)
    "phone": r"\+[0-9](?:[ .-]?\(?[0-9]\)?){7,14}\b|\b0[1-9](?:[ .-]?[0-9]){8,9}\b"
    r"|(?:\([0-9]{3}\) ?|\b[0-9]{3}[.-])[0-9]{3}[.-][0-9]{4}\b",
}
_ORDER = ("iban", "card", "email", "phone")


@functools.cache
def _pattern(kind: str) -> Pattern:
    return compile_pattern(_PATTERNS[kind])


def _checksum(kind: str) -> Callable[[str], bool] | None:
    if kind == "card":
        from stdnum import luhn

        return lambda digits: 13 <= len(digits) <= 19 and bool(luhn.is_valid(digits))
    if kind == "iban":
        from stdnum import iban

        return lambda compact: bool(iban.is_valid(compact))
    return None


def _confirmed(text: str, start: int, end: int, valid: Callable[[str], bool]) -> int | None:
    """The end of the longest prefix of ``text[start:end]`` that ends where a group of characters ends (before a
    separator, or at ``end``) and whose letters and digits pass ``valid``; None if there is none. (A card number
    followed by more digits, or an IBAN followed by an upper-case word, is still found.)"""
    positions = [i for i in range(start, end) if text[i].isalnum()]
    compact = "".join(text[i] for i in positions)
    for size in range(len(positions), 0, -1):
        last = positions[size - 1]
        if (last + 1 == end or not text[last + 1].isalnum()) and valid(compact[:size]):
            return last + 1
    return None


def find_pii(text: str, kinds: Sequence[str]) -> list[tuple[str, int, int]]:
    """``(kind, start, end)`` of each piece of personal data of ``kinds`` in ``text``, in text order."""
    found: list[tuple[str, int, int]] = []
    taken: list[tuple[int, int]] = []
    for kind in _ORDER:
        if kind not in kinds:
            continue
        valid = _checksum(kind)
        for match in _pattern(kind).finditer(text):
            start, end = match.start(), match.end()
            if valid is not None:
                confirmed = _confirmed(text, start, end, valid)
                if confirmed is None:
                    continue
                end = confirmed
            if any(start < b and a < end for a, b in taken):
                continue
            taken.append((start, end))
            found.append((kind, start, end))
    return sorted(found, key=lambda item: item[1])


def mask(text: str) -> str:
    """``text`` with every letter and digit but the last four replaced by ``*`` (``**** **** **** 1111``)."""
    keep = 4
    out = []
    for char in reversed(text):
        if char.isalnum():
            if keep:
                keep -= 1
            else:
                char = "*"
        out.append(char)
    return "".join(reversed(out))
