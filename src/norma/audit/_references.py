"""What an output cites and decides: normative references, technical decisions and claims about the norms.

* References (IR.0.01, §7.01): the spec's pattern ``(DNS|DR|ICR|RED|IRA)\\s+§?\\d+(\\.\\d+)?`` or ``R\\d+\\.\\d+``
  (deeper numbers like ``§3.01.2`` are read to their end; ``DR R2.01`` is one reference), plus the configured
  ``reference_patterns``: RE2 expressions (linear time) with a named group ``sec`` (the section) and optionally
  ``doc`` (the document's acronym, upper-cased). Text matched by two patterns counts once (the match that starts
  first wins; the spec's pattern wins a tie).
* Technical decisions (IR.5.02, §7.01): in prose, each sentence (or bullet) outside code that contains a design
  verb (``design_verbs.txt``); in code, each declared type (``class|interface|record|struct|enum Name``) that no
  earlier prose decision named (announcing a type and then declaring it is one decision).
  *Major* decisions (IR.0.01): the type declarations, and the sentences whose design verb is a major one
  (``!``-marked in the list: implement, create, define, introduce, design, split, extract, replace, inherit).
  ``using`` and ``namespace`` lines are never decisions (IR.0.01's exception for obvious C# syntax).
* Claims (IR.4.02): "según DNS §2.03, ...", "DNS §2.03 dice que ...", "as RED §1.01 states: ...", with the
  quoted text in quotes when there are quotes, else the rest of the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from norma._safety import Pattern, compile_pattern
from norma.audit._lexicon import Lexicon
from norma.audit._text import Line, ParsedText, PhraseMatcher, fold, sentences
from norma.errors import InvalidInputError

__all__ = [
    "Claim",
    "Decision",
    "REFERENCE_GROUPS",
    "Reference",
    "compile_reference_pattern",
    "find_claims",
    "find_decisions",
    "find_references",
]

REFERENCE_GROUPS = ("doc", "sec")
"""The named groups a configured reference pattern may have: ``sec`` (required) and ``doc``."""

_DOC = r"(?:DNS|DR|ICR|RED|IRA)"
_REFERENCE = re.compile(
    rf"(?<![\w.])(?P<doc>{_DOC})\s+(?:§\s*)?(?P<sec>R?\d+(?:\.\d+)*)(?![\w])|(?<![\w.])(?P<rule>R\d+\.\d+)(?![\w])"
)
_TYPE_DECL = re.compile(r"\b(class|interface|record|struct|enum)\s+([A-Z]\w*)")
_MAY_CITE = re.compile(rf"(?<![\w.]){_DOC}(?![\w])|(?<![\w.])R\d")
_CLAIM_WORDS = PhraseMatcher(
    ["según", "segun", "acuerdo", "conforme", "establece", "indica", "dice", "exige", "prescribe", "according",
     "stated", "required", "per", "says", "states", "requires", "reads"]
)  # fmt: skip
"""Every claim pattern contains one of these words (a cheap test before the regexes)."""
_IDENTIFIER = re.compile(r"[A-Z]\w+")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_CODE_OBVIOUS = re.compile(r"^\s*(using\s|namespace\s|```|~~~)")
_QUOTED = re.compile(r"[\"“«'‘](?P<q>[^\"”»'’]{8,})[\"”»'’]")
_REF_TEXT = rf"(?P<doc>{_DOC})(?:\s+(?:§\s*)?(?P<sec>R?\d+(?:\.\d+)*))?|(?P<rule>R\d+\.\d+)"
_CLAIMS = (
    re.compile(
        rf"(?:^[\s\-*•\d.)]*|[,;:]\s+)"
        rf"(?i:según|segun|de acuerdo con|conforme a|conforme al|como (?:establece|indica|dice|exige)|"
        rf"according to|as (?:stated|required) (?:in|by)|per)\s+(?i:el\s+|la\s+|the\s+)?(?:{_REF_TEXT})"
        rf"\s*[,:]?\s*(?P<rest>.+)",
    ),
    re.compile(
        rf"(?:{_REF_TEXT})\s+(?i:dice|establece|indica|exige|prescribe|says|states|requires|reads)"
        rf"(?:\s+(?i:que|that))?\s*[,:]?\s*(?P<rest>.+)",
    ),
)


@dataclass(frozen=True)
class Reference:
    """One normative reference in the output."""

    document: str | None
    """The acronym, or ``None`` for a bare rule id (``R2.01``)."""
    section: str
    line: int
    text: str

    @cached_property
    def key(self) -> str:
        """What makes two references the same rule (for ``rules_referenced``)."""
        from norma.audit._documents import section_key

        return f"{self.document or '*'} {section_key(self.section)}"


@dataclass(frozen=True)
class Decision:
    """One technical decision."""

    line: int
    text: str
    major: bool
    kind: str
    """``"type"`` (a declared type in code) or ``"statement"`` (a prose sentence or bullet)."""


@dataclass(frozen=True)
class Claim:
    """A statement of what a norm says."""

    line: int
    document: str | None
    section: str | None
    quoted: str
    """The text attributed to the norm."""
    literal: bool
    """In quotes (a quotation) rather than the rest of the sentence."""
    reformulation: bool
    """Marked as a reformulation ("en otras palabras"): allowed by IR.4.02."""
    sentence: str


@lru_cache(maxsize=256)
def compile_reference_pattern(pattern: str) -> Pattern:
    """A configured reference pattern compiled with RE2 (linear time), once per process.

    Raises:
        InvalidInputError: not valid RE2 (back-references, look-arounds), no ``sec`` group, or another named group.
    """
    compiled = compile_pattern(pattern)
    groups = set(getattr(compiled, "groupindex", {}))
    hint = "name the section (?P<sec>...) and, optionally, the document's acronym (?P<doc>...)"
    unknown = sorted(groups.difference(REFERENCE_GROUPS))
    if unknown:
        raise InvalidInputError(
            f"reference pattern {pattern!r} has unknown named group(s) {', '.join(unknown)}",
            hint=hint + "; other groups must be unnamed",
        )
    if "sec" not in groups:
        raise InvalidInputError(f"reference pattern {pattern!r} has no named group 'sec'", hint=hint)
    return compiled


def find_references(
    parsed: ParsedText, lines: set[int] | None = None, patterns: Sequence[Pattern] = ()
) -> list[Reference]:
    """Every reference outside code blocks (of the given lines only, when given), in order.

    ``patterns`` are configured reference patterns (see :func:`compile_reference_pattern`), tried after the spec's.
    """
    found: list[Reference] = []
    for line in parsed.lines:
        if line.code or (lines is not None and line.number not in lines):
            continue
        text = line.text
        candidates: list[tuple[int, int, int, Reference]] = []  # (start, pattern rank, end, reference)
        if "D" in text or "R" in text or "I" in text:  # every reference of the spec's pattern holds one of them
            for match in _REFERENCE.finditer(text):
                if match.group("rule"):
                    reference = Reference(None, match.group("rule"), line.number, match.group(0))
                else:
                    reference = Reference(match.group("doc"), match.group("sec"), line.number, match.group(0))
                candidates.append((match.start(), 0, match.end(), reference))
        for rank, pattern in enumerate(patterns, start=1):
            for match in pattern.finditer(text):
                section = (match.group("sec") or "").strip()
                if not section or match.end() == match.start():
                    continue
                document = (match.groupdict().get("doc") or "").strip().upper() or None
                reference = Reference(document, section, line.number, match.group(0))
                candidates.append((match.start(), rank, match.end(), reference))
        if not patterns:
            found.extend(candidate[3] for candidate in candidates)
            continue
        taken_until = -1
        for start, _rank, end, reference in sorted(candidates, key=lambda c: (c[0], c[1])):
            if start >= taken_until:  # overlapping matches of several patterns count once
                found.append(reference)
                taken_until = end
    return found


def _statement_units(line: Line) -> list[tuple[str, str]]:
    """(unit, folded unit) pairs: the whole bullet, or each sentence of a prose line."""
    if _BULLET.match(line.text):
        return [(_BULLET.sub("", line.text), _BULLET.sub("", line.folded))]
    return _sentence_pairs(line)


def _sentence_pairs(line: Line) -> list[tuple[str, str]]:
    raw, folded = sentences(line.text), sentences(line.folded)
    if len(raw) != len(folded):  # folding changed a sentence boundary (rare): fold each sentence instead
        folded = [fold(s) for s in raw]
    return list(zip(raw, folded, strict=True))


def find_decisions(parsed: ParsedText, lexicon: Lexicon, lines: set[int] | None = None) -> list[Decision]:
    """Technical decisions, in order (see the module docstring for the heuristic)."""
    decisions: list[Decision] = []
    announced: set[str] = set()
    for line in parsed.lines:
        if line.blank or (lines is not None and line.number not in lines):
            continue
        if line.code:
            if _CODE_OBVIOUS.match(line.text):
                continue
            for match in _TYPE_DECL.finditer(line.text):
                if match.group(2) in announced:  # the prose already stated this decision
                    continue
                decisions.append(Decision(line.number, f"{match.group(1)} {match.group(2)}", True, "type"))
            continue
        if line.text.lstrip().startswith("#"):
            continue
        for unit, folded in _statement_units(line):
            if lexicon.design_verbs.search(unit, folded) is not None:
                major = lexicon.major_verbs.search(unit, folded) is not None
                decisions.append(Decision(line.number, unit.strip(), major, "statement"))
                announced.update(_IDENTIFIER.findall(unit))
    return decisions


def find_claims(parsed: ParsedText, lexicon: Lexicon, lines: set[int] | None = None) -> list[Claim]:
    """Claims about what a norm says, outside code."""
    claims: list[Claim] = []
    previous_marked = False
    for line in parsed.lines:
        if line.code or line.blank or (lines is not None and line.number not in lines):
            previous_marked = False if line.blank else previous_marked
            continue
        if not _MAY_CITE.search(line.text):
            previous_marked = lexicon.reformulation.search(line.text, line.folded) is not None
            continue
        for sentence, folded in _sentence_pairs(line):
            marked = lexicon.reformulation.search(sentence, folded) is not None
            if _CLAIM_WORDS.search(sentence, folded) is None:  # no claim verb or marker: skip the regexes
                previous_marked = marked
                continue
            for pattern in _CLAIMS:
                match = pattern.search(sentence)
                if match is None:
                    continue
                rest = match.group("rest").strip()
                quoted = _QUOTED.search(rest)
                text = quoted.group("q") if quoted else rest
                if len(text.split()) < 3:
                    continue
                document = match.group("doc") or None
                section = match.group("sec") or match.group("rule")
                claims.append(
                    Claim(line.number, document, section, text.strip().rstrip("."), quoted is not None,
                          marked or previous_marked, sentence.strip())
                )  # fmt: skip
                break
            previous_marked = marked
    return claims
