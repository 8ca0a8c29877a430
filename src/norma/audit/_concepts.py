"""Technical concepts of a text (IR.3.01, IR.4.01, §7.03): code identifiers and acronyms, found by their shape.

A *concept* is, outside code: a PascalCase compound with two humps or more (``TrafficShaper``, ``IShapingPolicy``),
a camelCase word (``maxBurst``), a snake_case word (``max_burst``), a short acronym (``DSCP``, ``QoS``), or an
identifier in backticks; inside fenced code: every identifier that starts with a capital (types and
properties in C#) and is not a method name (followed by ``(``, unless after ``new``), except on ``using`` /
``namespace`` lines and in comments and string literals. Methods are not concepts anywhere: a name the code only
calls or declares as a method, or written with parentheses in backticks (`Decide()`), is left out. Document
acronyms (DNS, DR, ICR, RED, IRA, and those of the configured norms), verdict words and C# keywords are not
concepts. Prose words are not concepts: precision over recall (docs/design/060).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from norma.audit._text import ParsedText, fold

__all__ = ["Concept", "concept_phrase", "extract_concepts", "literal_in"]

_PASCAL = re.compile(r"(?<![\w.])(?:I(?=[A-Z][a-z]))?[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?![\w])")
_CAMEL = re.compile(r"(?<![\w.])[a-z]+[0-9]*[A-Z][A-Za-z0-9]*(?![\w])")
_SNAKE = re.compile(r"(?<![\w.])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w])")
_ACRONYM = re.compile(r"(?<![\w.§])[A-Z][A-Za-z]{0,3}[A-Z](?![\w])")
_BACKTICK = re.compile(r"`([^`\n]{2,80})`")
_CODE_IDENT = re.compile(r"(?<![\w.\"'])[A-Z][A-Za-z0-9_]{2,}(?![\w\"'])")
_IDENT = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*$")
_CODE_SKIP = re.compile(r"^\s*(using|namespace|```|~~~|//|/\*|\*|#)")
_STRINGS = re.compile(r"\"(?:[^\"\\]|\\.)*\"|//.*$")
_CODE_TOKEN = re.compile(r"(?<![\w.\"'])(?P<id>[A-Z][A-Za-z0-9_]{2,})(?![\w\"'])(?P<call>\s*(?:<[^<>()]*>)?\s*\()?")
_PROSE_WORD = re.compile(r"\b(?<![.§])(?=\w*[A-Z_])\w+")
_PROSE_SHAPE = re.compile(
    r"(?:I(?=[A-Z][a-z]))?[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+"  # PascalCase, two humps or more
    r"|[a-z]+[0-9]*[A-Z][A-Za-z0-9]*"  # camelCase
    r"|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"  # snake_case
    r"|[A-Z][A-Za-z]{0,3}[A-Z]"  # acronym
)
_HUMPS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")

NOT_CONCEPTS = frozenset(
    {
        "DNS", "DR", "ICR", "RED", "IRA", "IR", "IA", "AI", "FAIL", "PASS", "SKIP", "ERROR", "WARNING", "INFO",
        "NO", "OK", "TODO", "NOTE", "SI", "EN", "ES", "EL", "LA", "LOS", "LAS", "UN", "UNA", "Y", "O", "THE", "AND",
    }
)  # fmt: skip
"""Capitalised tokens that are never concepts (document acronyms, verdicts, shouted words)."""


@dataclass(frozen=True)
class Concept:
    """One technical concept and where it first appears."""

    term: str
    """As written (generic arguments and call parentheses removed)."""
    line: int
    """First line it appears on (1-based)."""
    in_code: bool

    @property
    def phrase(self) -> str:
        return concept_phrase(self.term)


def concept_phrase(term: str) -> str:
    """The words of an identifier, for embedding and literal search: ``IShapingPolicy`` -> ``shaping policy``."""
    last = term.rsplit(".", 1)[-1]
    if _ACRONYM.fullmatch(last):
        return last.lower()
    if len(last) > 2 and last[0] == "I" and last[1].isupper() and last[2].islower():
        last = last[1:]
    parts = [p for chunk in last.split("_") for p in _HUMPS.findall(chunk)]
    return " ".join(p.lower() for p in parts) if parts else last.lower()


_METHOD_MARK = "()"


def _clean(term: str) -> str:
    """`Type<T>` -> ``Type``; `Method(x)` -> ``Method()`` (the parentheses mark a method, which is not a concept)."""
    term = term.strip().strip("`")
    call = "(" in term
    term = term.split("<", 1)[0].split("(", 1)[0].strip().rstrip(".;:,")
    return term + _METHOD_MARK if call else term


def _candidates(text: str) -> Iterable[str]:
    for match in _BACKTICK.finditer(text) if "`" in text else ():
        inner = _clean(match.group(1))  # backticks may hold `Type<T>` or `Method()`
        if inner.endswith(_METHOD_MARK):
            yield inner  # dropped by extract_concepts
        elif (_IDENT.match(inner) and len(inner) >= 3 and not inner.islower()) or (
            _IDENT.match(inner) and "_" in inner
        ):
            yield inner
        elif not _IDENT.match(inner):  # code in backticks: its identifiers
            yield from (m.group(0) for m in _CODE_IDENT.finditer(match.group(1)))
            yield from (m.group(0) for m in _CAMEL.finditer(match.group(1)))
    stripped = _BACKTICK.sub(lambda m: " " * len(m.group(0)), text) if "`" in text else text
    for match in _PROSE_WORD.finditer(stripped):  # cheap word scan, then the shape tests on the few that may be
        word = match.group(0)
        if _PROSE_SHAPE.fullmatch(word):
            yield word


def extract_concepts(
    parsed: ParsedText, lines: Iterable[int] | None = None, *, exclude: frozenset[str] = frozenset()
) -> list[Concept]:
    """The distinct concepts of a parsed text (of the given line numbers only, when given), in order of appearance;
    ``exclude``: more words that are never concepts (the configured documents' acronyms and rule prefixes)."""
    wanted = set(lines) if lines is not None else None
    found_in: list[tuple[int, bool, list[str]]] = []
    methods: set[str] = set()
    types: set[str] = set()
    for line in parsed.lines:
        if wanted is not None and line.number not in wanted:
            continue
        if line.code:
            if _CODE_SKIP.match(line.text):
                continue
            text = line.text
            code = _STRINGS.sub(" ", text) if '"' in text or "//" in text else text
            terms = []
            for m in _CODE_TOKEN.finditer(code):
                if not m.group("call") or code[max(0, m.start() - 8) : m.start()].rstrip().endswith("new"):
                    terms.append(m.group("id"))
                else:
                    methods.add(m.group("id"))
            types.update(terms)
            found_in.append((line.number, True, terms))
        else:
            found_in.append((line.number, False, list(_candidates(line.text))))
    methods -= types  # a name used as a type somewhere is a type
    seen: dict[str, Concept] = {}
    for number, in_code, terms in found_in:
        for term in terms:
            if len(term) < 2 or term in NOT_CONCEPTS or (term.upper() in NOT_CONCEPTS and term.isupper()):
                continue
            if term in exclude:
                continue
            if term in methods or term.endswith(_METHOD_MARK):
                continue
            if term not in seen:
                seen[term] = Concept(term, number, in_code)
    return list(seen.values())


def literal_in(term: str, folded_text: str, folded_tokens: frozenset[str] | None = None) -> bool:
    """Whether a concept is literally in a folded text: the identifier, or its words as a phrase, or (with
    ``folded_tokens``) every one of its words of 3+ letters as tokens of the text."""
    ident = fold(term)
    if ident in folded_text and re.search(rf"(?<!\w){re.escape(ident)}(?!\w)", folded_text):
        return True
    phrase = concept_phrase(term)
    words = phrase.split()
    if (
        len(words) > 1
        and all(w in folded_text for w in words)
        and re.search(r"(?<!\w)" + r"\s+".join(map(re.escape, words)) + r"(?!\w)", folded_text)
    ):
        return True
    if folded_tokens is not None:
        long_words = [w for w in words if len(w) >= 3]
        return bool(long_words) and all(w in folded_tokens for w in long_words)
    return False
