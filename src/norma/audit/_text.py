"""Normalisation (§3 step 2): accent and case folding (:func:`norma._fold.fold`, combining diacritics dropped), phrase
matching, lines, paragraphs and code blocks.

Lines are the output's ``text.split("\\n")`` lines, numbered from 1; folding never adds or removes a newline, so a
folded line has the same number as its original. Paragraphs are runs of non-blank lines; a fenced code block
(```) is a paragraph of its own whatever blank lines it holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from norma._fold import fold

__all__ = [
    "Line",
    "Paragraph",
    "ParsedText",
    "PhraseMatcher",
    "fold",
    "parse_text",
    "sentences",
    "shorten",
    "tokens",
]

_FENCE = re.compile(r"^\s*(```|~~~)")
_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


def tokens(text: str) -> list[str]:
    """The folded word tokens of a text (§3 step 2, tokenisation)."""
    return _WORD.findall(fold(text))


def sentences(text: str) -> list[str]:
    """A line split after ``. ! ? ; :`` followed by a space."""
    return [part for part in _SENTENCE_END.split(text) if part.strip()]


def shorten(text: str, limit: int = 120) -> str:
    """One line of at most ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _is_acronym(phrase: str) -> bool:
    return len(phrase) >= 2 and phrase.isalpha() and phrase.isupper()


class PhraseMatcher:
    """Finds phrases as whole words, case- and accent-insensitively, with two refinements.

    * A phrase written in capitals (``DNS``, ``RED``) is an acronym: it matches only in capitals, or in any case
      when a section reference follows it (``red §3.01``), so the Spanish word "red" is not the document RED.
    * A phrase written as a question (``¿qué es?``) matches its words where they open a question or sentence
      or follow a comma ("¿Qué es un namespace?", "Hi, what is X?"), not anywhere ("lo que es").

    Ordinary phrases are compared as word sequences (``\\w+`` tokens of the folded text), so a multi-word phrase
    matches its words in a row whatever spaces or punctuation separate them ("cutting-edge" = "cutting edge").
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        self.phrases = tuple(dict.fromkeys(p.strip() for p in phrases if p.strip()))
        words: list[str] = []
        openers: list[str] = []
        acronyms: list[str] = []
        for phrase in self.phrases:
            if _is_acronym(phrase):
                acronyms.append(phrase)
            elif phrase.startswith(("¿", "¡")) or phrase.endswith("?"):
                openers.append(fold(phrase.strip("¿?¡! ")))
            else:
                words.append(fold(phrase))
        self._singles: frozenset[str] = frozenset()
        multi: dict[int, set[str]] = {}
        singles: set[str] = set()
        for phrase in words:
            parts = _WORD.findall(phrase)
            if len(parts) == 1:
                singles.add(parts[0])
            elif parts:
                multi.setdefault(len(parts), set()).add(" ".join(parts))
        self._singles = frozenset(singles)
        self._multi = tuple((n, frozenset(items)) for n, items in sorted(multi.items(), reverse=True))
        self._firsts = frozenset(p.split(" ", 1)[0] for _, items in self._multi for p in items)
        self._openers = _alternation(openers, r"(?:^|(?<=[¿¡.!?,;:\n]))\s*", r"(?!\w)")
        self._opener_firsts = frozenset(w for o in openers for w in _WORD.findall(o)[:1])
        self._acronym_words = frozenset(a.lower() for a in acronyms)
        if acronyms:
            names = "|".join(sorted(map(re.escape, acronyms), key=len, reverse=True))
            self._acronyms: re.Pattern[str] | None = re.compile(
                rf"(?<!\w)(?:(?:{names})(?!\w)|(?i:{names})(?=\s+§?\d))"
            )
        else:
            self._acronyms = None

    def find(self, text: str, folded: str | None = None) -> list[str]:
        """Every occurrence in ``text``, as the phrase found (folded, or the acronym as written)."""
        folded = fold(text) if folded is None else folded
        words = _words_of(folded)
        singles = self._singles
        found = [w for w in words if w in singles] if singles and not singles.isdisjoint(words) else []
        if self._multi and not self._firsts.isdisjoint(words):
            starts = [i for i, w in enumerate(words) if w in self._firsts]
            for size, phrases in self._multi:
                found.extend(key for i in starts if (key := " ".join(words[i : i + size])) in phrases)
        if self._openers is not None and not self._opener_firsts.isdisjoint(words):
            found.extend(m.group(0).strip() for m in self._openers.finditer(folded))
        if self._acronyms is not None and not self._acronym_words.isdisjoint(words):
            found.extend(m.group(0) for m in self._acronyms.finditer(text))
        return found

    def count(self, text: str, folded: str | None = None) -> int:
        """How many occurrences (repeats count)."""
        return len(self.find(text, folded))

    def search(self, text: str, folded: str | None = None) -> str | None:
        """An occurrence (the first of :meth:`find`), or ``None``."""
        found = self.find(text, folded)
        return found[0] if found else None


@lru_cache(maxsize=16384)
def _words_of(folded: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(folded))


def _alternation(phrases: list[str], before: str, after: str) -> re.Pattern[str] | None:
    if not phrases:
        return None
    parts = sorted({r"\s+".join(map(re.escape, p.split())) for p in phrases}, key=len, reverse=True)
    return re.compile(f"{before}(?:{'|'.join(parts)}){after}")


class Line(NamedTuple):
    """One line of a text (a named tuple: texts have many lines and audits must be fast)."""

    number: int
    text: str
    folded: str
    code: bool
    """Inside a fenced code block (fence lines included)."""
    blank: bool
    """Only whitespace."""


@dataclass(frozen=True)
class Paragraph:
    """A run of non-blank lines, or one fenced code block."""

    index: int
    lines: tuple[Line, ...]
    code: bool

    @property
    def start(self) -> int:
        return self.lines[0].number

    @property
    def end(self) -> int:
        return self.lines[-1].number

    @property
    def text(self) -> str:
        return "\n".join(line.text for line in self.lines)


@dataclass(frozen=True)
class ParsedText:
    """A text cut into numbered lines and paragraphs."""

    text: str
    folded: str
    lines: tuple[Line, ...]
    paragraphs: tuple[Paragraph, ...]

    def line(self, number: int) -> Line:
        return self.lines[number - 1]

    def paragraph_of(self, number: int) -> Paragraph | None:
        for paragraph in self.paragraphs:
            if paragraph.start <= number <= paragraph.end:
                return paragraph
        return None

    @property
    def code_lines(self) -> tuple[Line, ...]:
        return tuple(line for line in self.lines if line.code)

    @property
    def prose_lines(self) -> tuple[Line, ...]:
        return tuple(line for line in self.lines if not line.code and not line.blank)


def parse_text(text: str) -> ParsedText:
    """Number the lines, mark fenced code, and group paragraphs."""
    raw_lines = text.split("\n")
    folded_text = fold(text)
    folded_lines = folded_text.split("\n")
    if len(folded_lines) != len(raw_lines):  # a character folded into a newline: fold line by line instead
        folded_lines = [fold(line) for line in raw_lines]
    lines: list[Line] = []
    fences: set[int] = set()
    in_code = False
    for number, (raw, folded) in enumerate(zip(raw_lines, folded_lines, strict=True), start=1):
        fence = ("`" in raw or "~" in raw) and _FENCE.match(raw) is not None
        lines.append(Line(number, raw.rstrip("\r"), folded.rstrip("\r"), in_code or fence, not raw.strip()))
        if fence:
            fences.add(number)
            in_code = not in_code
    paragraphs: list[Paragraph] = []
    current: list[Line] = []

    def close() -> None:
        if current:
            paragraphs.append(Paragraph(len(paragraphs), tuple(current), current[0].code))
            current.clear()

    for line in lines:
        if line.code:
            if current and not current[0].code:
                close()
            current.append(line)
            if line.number in fences and len(current) > 1:
                close()
        elif line.blank:
            close()
        else:
            if current and current[0].code:
                close()
            current.append(line)
    close()
    return ParsedText(text, folded_text, tuple(lines), tuple(paragraphs))
