"""§4.02 "mixed: aplicar por segmento": which lines of the output the technical rules look at.

A segment is a paragraph of the output (a fenced code block is one paragraph). In a *technical* turn every
segment is technical; in a *conversational* turn none is. In a *mixed* turn each paragraph is classified with
§4.01's algorithm: code is technical; "technical" is technical; "mixed" (both kinds of keywords, or none) is
technical when the paragraph has a technical keyword, a normative reference or a technical decision; everything
else is conversational. Technical rules see the technical segments' lines; the rules for any output see all lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from norma._safety import Pattern
from norma.audit._classify import classify_context
from norma.audit._lexicon import Lexicon
from norma.audit._models import ContextType
from norma.audit._references import CitationSyntax, find_decisions, find_references
from norma.audit._text import ParsedText, parse_text

__all__ = ["Segment", "segment_output"]


@dataclass(frozen=True)
class Segment:
    """One paragraph of the output and how the rules treat it."""

    index: int
    start: int
    end: int
    kind: ContextType
    """TECHNICAL or CONVERSATIONAL."""
    lines: frozenset[int]


def _paragraph_kind(
    text: str, code: bool, lexicon: Lexicon, patterns: Sequence[Pattern], syntax: CitationSyntax | None
) -> ContextType:
    if code:
        return ContextType.TECHNICAL
    kind = classify_context(text, lexicon)
    if kind is ContextType.MIXED:
        parsed = parse_text(text)
        technical = (
            lexicon.technical.count(text) > 0
            or bool(find_references(parsed, patterns=patterns, syntax=syntax))
            or bool(find_decisions(parsed, lexicon))
        )
        return ContextType.TECHNICAL if technical else ContextType.CONVERSATIONAL
    return kind


def segment_output(
    parsed: ParsedText,
    context: ContextType,
    lexicon: Lexicon,
    patterns: Sequence[Pattern] = (),
    syntax: CitationSyntax | None = None,
) -> tuple[Segment, ...]:
    """The output's paragraphs as segments for the context the rules are applied in (``patterns`` and ``syntax``:
    the configured reference patterns and the norms' citation syntax, which make a paragraph that cites a norm
    technical)."""
    segments = []
    for paragraph in parsed.paragraphs:
        kind = (
            _paragraph_kind(paragraph.text, paragraph.code, lexicon, patterns, syntax)
            if context is ContextType.MIXED
            else context
        )
        lines = frozenset(line.number for line in paragraph.lines)
        segments.append(Segment(paragraph.index, paragraph.start, paragraph.end, kind, lines))
    return tuple(segments)
