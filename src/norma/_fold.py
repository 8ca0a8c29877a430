"""The one case- and accent-insensitive text fold (issue #48): compatibility decomposition (NFKD), combining marks
dropped, then case folding, in that order. ``"Código"`` -> ``"codigo"``, ``"ß"`` -> ``"ss"``, full-width ``"Ａ"``
and mathematical ``"𝐀"`` -> ``"a"``.

Decomposing first means what a compatibility form decomposes to is case-folded too (``"𝐀"``, ``"ᴬ"``, ``"ϒ"``
end in lower case), and an iota subscript (``"ᾳ"``) is a mark dropped like an accent. Which marks are dropped is the
one choice a caller makes:

* by default, those of the combining diacritical blocks (what NFKD splits off Latin, Greek and Cyrillic letters):
  the audit's fold, whose word lists are Spanish and English;
* ``every_mark=True``: every nonspacing mark (Unicode category Mn) of every script (Arabic vowel signs, Hebrew
  points, Devanagari signs, variation selectors): the checks' fold, whose terms may be in any language.

Folding never adds or removes a newline (no character decomposes or case-folds to or from one).
"""

from __future__ import annotations

import functools
import re
import unicodedata

__all__ = ["COMBINING_DIACRITICS", "fold", "fold_char"]

COMBINING_DIACRITICS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
"""The combining diacritical mark blocks: the marks the default fold drops."""


def fold(text: str, *, every_mark: bool = False) -> str:
    """``text`` decomposed (NFKD), without combining marks (those of :data:`COMBINING_DIACRITICS`; with
    ``every_mark``, every nonspacing mark, character by character as :func:`fold_char`), case-folded."""
    if text.isascii():
        return text.lower()
    if every_mark:
        return "".join(fold_char(char) for char in text)
    return COMBINING_DIACRITICS.sub("", unicodedata.normalize("NFKD", text)).casefold()


@functools.lru_cache(maxsize=8192)
def fold_char(char: str) -> str:
    """One character folded, every nonspacing mark dropped: ``"É"`` -> ``"e"``, ``"ß"`` -> ``"ss"``,
    ``"\\u0301"`` -> ``""`` (a caller that maps folded offsets back to the original folds character by character)."""
    decomposed = unicodedata.normalize("NFKD", char)
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn").casefold()
