"""Finding things in an output and saying where: terms matched case- and accent-insensitively on word boundaries
(spans mapped back to the original text), words, and offsets turned into 1-based lines and columns."""

from __future__ import annotations

import bisect
from collections.abc import Iterator

from norma._fold import fold as fold_text
from norma._fold import fold_char
from norma.checks._results import MAX_SPAN_TEXT, Span

__all__ = ["FoldedText", "Locator", "fold_char", "joins_words"]

_SPACELESS = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # halfwidth Katakana
    (0x20000, 0x3FFFF),  # CJK extensions B and later
)
"""Scripts written without spaces between words: their letters never need a word boundary."""


def joins_words(char: str) -> bool:
    """Whether ``char`` is part of a word that a boundary must not cut: a letter, digit or underscore of a script
    written with spaces."""
    if char.isascii():
        return char.isalnum() or char == "_"
    if not char.isalnum():
        return False
    code = ord(char)
    return not any(low <= code <= high for low, high in _SPACELESS)


def fold(text: str) -> str:
    """``text`` folded as the checks fold it: every nonspacing mark dropped (:func:`norma._fold.fold`)."""
    return fold_text(text, every_mark=True)


class FoldedText:
    """An output folded for case- and accent-insensitive search, remembering which original character each folded
    character came from (folding changes lengths: ``"ß"`` becomes two characters, ``"e\\u0301"`` one)."""

    def __init__(self, text: str) -> None:
        self.text = text
        if text.isascii():
            self.folded = text.lower()
            self._origin: list[int] | None = None  # the identity
            return
        pieces = []
        origin: list[int] = []
        for index, char in enumerate(text):
            piece = fold_char(char)
            pieces.append(piece)
            origin.extend([index] * len(piece))
        self.folded = "".join(pieces)
        self._origin = origin

    def find(self, term: str) -> Iterator[tuple[int, int]]:
        """``(start, end)`` in the original text of each occurrence of ``term`` (folded) on word boundaries,
        left to right, not overlapping. An occurrence ending on a letter takes the accents that follow it."""
        needle = fold(term)
        haystack = self.folded
        size = len(haystack)
        at = haystack.find(needle)
        while at >= 0:
            end = at + len(needle)
            left_ok = at == 0 or not (joins_words(haystack[at - 1]) and joins_words(haystack[at]))
            right_ok = end == size or not (joins_words(haystack[end - 1]) and joins_words(haystack[end]))
            if left_ok and right_ok:
                yield self._original(at, end)
                at = haystack.find(needle, end)
            else:
                at = haystack.find(needle, at + 1)

    def _original(self, start: int, end: int) -> tuple[int, int]:
        origin = self._origin
        if origin is None:
            return start, end
        first, last = origin[start], origin[end - 1]
        if end == len(origin):
            return first, len(self.text)  # what folds to nothing after the last letter (accents) belongs to it
        following = origin[end]
        return first, following if following > last else last + 1


class Locator:
    """Turns offsets of one output into :class:`Span` values (1-based line and column)."""

    def __init__(self, text: str) -> None:
        self.text = text
        newlines = []
        at = text.find("\n")
        while at >= 0:
            newlines.append(at)
            at = text.find("\n", at + 1)
        self._newlines = newlines

    def span(self, start: int, end: int, *, text: str | None = None) -> Span:
        """The span ``[start, end)``; ``text`` replaces the output's own (already cut) text when given."""
        before = bisect.bisect_left(self._newlines, start)
        line_start = self._newlines[before - 1] + 1 if before else 0
        shown = self.text[start : min(end, start + MAX_SPAN_TEXT)] if text is None else text
        return Span(start=start, end=end, line=before + 1, column=start - line_start + 1, text=shown)
