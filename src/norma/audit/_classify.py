"""§4.01: is a text technical, conversational or mixed — the spec's heuristic over two keyword lists."""

from __future__ import annotations

from collections.abc import Iterable

from norma.audit._lexicon import Lexicon, get_lexicon
from norma.audit._models import ContextType
from norma.audit._text import PhraseMatcher, fold

__all__ = ["classify_context", "count_keywords", "keyword_scores"]


def count_keywords(text: str, keywords: Iterable[str] | PhraseMatcher) -> int:
    """Occurrences of the keywords in ``text`` (repeats count).

    Whole words, case- and accent-insensitive ("codigo" counts for "código"); multi-word keywords match across
    any whitespace; a keyword in capitals is an acronym (``DNS``, ``RED``) and counts only in capitals or when a
    section reference follows; "¿qué es?" counts where "qué es" opens a question or sentence.
    """
    matcher = keywords if isinstance(keywords, PhraseMatcher) else PhraseMatcher(keywords)
    return matcher.count(text)


def keyword_scores(text: str, lexicon: Lexicon | None = None) -> tuple[int, int]:
    """(technical score, conversational score) of a text with the lexicon's keyword lists."""
    lexicon = lexicon or get_lexicon()
    folded = fold(text)
    return lexicon.technical.count(text, folded), lexicon.conversational.count(text, folded)


def classify_context(input_text: str, lexicon: Lexicon | None = None) -> ContextType:
    """The spec's algorithm, unchanged: no technical and some conversational words -> conversational; technical
    more than twice conversational -> technical; anything else (no keywords at all included) -> mixed."""
    tech_score, conv_score = keyword_scores(input_text, lexicon)
    if tech_score == 0 and conv_score > 0:
        return ContextType.CONVERSATIONAL
    if tech_score > conv_score * 2:
        return ContextType.TECHNICAL
    return ContextType.MIXED
