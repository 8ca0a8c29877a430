"""Which language a text is written in, English or Spanish: a small deterministic guess without dependencies.

The audit writes its titles and messages in the language of the request's input unless the configuration says
otherwise (``AuditConfig.lang``). The guess counts function words that exist in one language only ("the", "is",
"with" against "el", "es", "con") and the letters and marks only Spanish uses (ñ, á, é, í, ó, ú, ¿, ¡); the
larger count wins, and a tie (no evidence either way, or as much of each) is :data:`DEFAULT_LANG`. Same text, same
answer: nothing random, nothing learnt.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["DEFAULT_LANG", "LANGUAGES", "Lang", "guess_language", "language_scores"]

Lang = Literal["en", "es"]
"""A language the audit writes its messages in."""
LANGUAGES: tuple[Lang, ...] = ("en", "es")
DEFAULT_LANG: Lang = "en"
"""What a text without evidence is taken to be written in."""

_WORD = re.compile(r"[^\W\d_]+")
_SPANISH_MARKS = frozenset("ñáéíóú¿¡")

_ENGLISH = frozenset(
    {
        "the", "of", "and", "to", "is", "are", "was", "were", "be", "been", "it", "its", "this", "that", "these",
        "those", "for", "with", "on", "at", "by", "from", "or", "an", "how", "what", "which", "who", "why", "when",
        "where", "do", "does", "did", "i", "you", "we", "they", "my", "your", "our", "their", "can", "could", "should",
        "would", "will", "not", "there", "here", "if", "then", "than", "into", "about", "please", "thanks", "hello",
        "use", "using", "write", "create", "add", "make", "need", "want",
    }
)  # fmt: skip
"""English function words (and a few everyday verbs) that are not Spanish words."""
_SPANISH = frozenset(
    {
        "el", "la", "los", "las", "de", "del", "al", "que", "y", "en", "un", "una", "unos", "unas", "es", "son",
        "está", "están", "ser", "fue", "por", "para", "con", "sin", "sobre", "como", "cómo", "qué", "cuál", "cuando",
        "cuándo", "donde", "dónde", "porque", "pero", "más", "muy", "también", "este", "esta", "esto", "estos",
        "estas", "ese", "esa", "eso", "mi", "tu", "su", "sus", "nos", "le", "les", "lo", "se", "hay", "puedo",
        "puedes", "quiero", "necesito", "hola", "gracias", "usa", "usar", "escribe", "crea", "añade", "hace", "haz",
        "implementa",
    }
)  # fmt: skip
"""Spanish function words (and a few everyday verbs) that are not English words ("a", "no", "me" are both)."""


def language_scores(text: str) -> tuple[int, int]:
    """(English evidence, Spanish evidence) of a text: function words of each language, plus one per Spanish-only
    letter or mark."""
    words = _WORD.findall(text.lower())
    english = sum(1 for w in words if w in _ENGLISH)
    spanish = sum(1 for w in words if w in _SPANISH)
    spanish += sum(1 for ch in text.lower() if ch in _SPANISH_MARKS)
    return english, spanish


def guess_language(text: str, fallback: str | None = None) -> Lang:
    """``"en"`` or ``"es"``: the language with more evidence in ``text``; on a tie, the guess for ``fallback``
    (another text, such as the output), then :data:`DEFAULT_LANG`."""
    english, spanish = language_scores(text)
    if english != spanish:
        return "en" if english > spanish else "es"
    if fallback is not None:
        return guess_language(fallback)
    return DEFAULT_LANG
