"""Phonetic and orthographic similarity of two strings, and transliteration of non-Latin names.

Phonetic similarity (the validator's ``calculate_phonetic_similarity``): a generator seeded with the first
string's seed (``hash(a) % 10000`` in miid, the hash of the ``hash_seed`` given) picks an order of the three
algorithms soundex, metaphone and nysiis (jellyfish 1.x) and a normalised weight for each; the score is the sum of
the weights of the algorithms whose codes of ``a`` and ``b`` are equal. The seed plan is cached per seed value
(10,000 exist) and the codes per string.

Orthographic similarity: ``1 - Levenshtein(a, b) / max(len(a), len(b))`` on the raw strings.
"""

from __future__ import annotations

from functools import lru_cache

import jellyfish
from rapidfuzz.distance import Levenshtein
from unidecode import unidecode

from norma.names._compat import Compat, check_compat, phonetic_plan, string_seed
from norma.names._pyhash import check_hash_seed
from norma.names._validate import check_str

__all__ = [
    "ALGORITHMS",
    "orthographic_similarity",
    "phonetic_codes",
    "phonetic_similarity",
    "transliterate",
]

ALGORITHMS: tuple[str, str, str] = ("soundex", "metaphone", "nysiis")
"""The phonetic algorithms, in the order of the validator's population list."""

_distance = Levenshtein.distance


@lru_cache(maxsize=1 << 16)
def phonetic_codes(text: str) -> tuple[str, str, str]:
    """The soundex, metaphone and nysiis codes of ``text`` (jellyfish 1.x), cached."""
    return jellyfish.soundex(text), jellyfish.metaphone(text), jellyfish.nysiis(text)


def transliterate(name: str) -> str:
    """``name`` in ASCII Latin letters (``unidecode``): ``"Иван Петров"`` -> ``"Ivan Petrov"``.

    The validator transliterates non-Latin seed names before it scores them phonetically (with an LLM, falling back
    to unidecode); norma uses unidecode, so results agree with the validator whenever it used the fallback.
    """
    return unidecode(check_str(name, "name"))


def _phonetic(a: str, b: str, compat: Compat, hash_seed: int | None) -> float:
    """Phonetic similarity without argument checks (the hot path)."""
    plan = phonetic_plan(string_seed(a, compat, hash_seed))
    codes_a = phonetic_codes(a)
    codes_b = phonetic_codes(b)
    mask = (codes_a[0] == codes_b[0]) | (codes_a[1] == codes_b[1]) << 1 | (codes_a[2] == codes_b[2]) << 2
    return plan.by_mask[mask] if compat == "miid" else plan.by_mask_stable[mask]


def _orthographic(a: str, b: str, compat: Compat) -> float:
    """Orthographic similarity without argument checks (the hot path)."""
    longest = max(len(a), len(b))
    if longest == 0:
        # The validator divides by zero and its except clause returns 0.0; identical (empty) strings are 1.0 in stable.
        return 0.0 if compat == "miid" else 1.0
    return 1.0 - (_distance(a, b) / longest)


def phonetic_similarity(
    a: str, b: str, *, compat: str = "miid", transliterate: bool = False, hash_seed: int | None = None
) -> float:
    """Phonetic similarity of ``b`` to ``a`` in [0, 1] (miid may return 1.0000000000000002, as the validator does).

    Not symmetric: the weights come from ``a``'s seed. In compat="miid" the seed is ``hash(a) % 10000``, so the
    result depends on ``PYTHONHASHSEED`` exactly like the validator's: ``hash_seed=N`` gives the validator's
    result under ``PYTHONHASHSEED=N`` in any process; ``None`` (the default) uses this process's own ``hash()``
    (no effect in compat="stable"). ``phonetic_similarity("", "")`` is 1.0
    (all codes are empty). With ``transliterate=True`` both strings go through :func:`transliterate` first, and
    the seed is taken from the transliterated ``a``.
    """
    mode = check_compat(compat)
    check_str(a, "a")
    check_str(b, "b")
    seed = check_hash_seed(hash_seed)
    if transliterate:
        a, b = unidecode(a), unidecode(b)
    return _phonetic(a, b, mode, seed)


def orthographic_similarity(a: str, b: str, *, compat: str = "miid") -> float:
    """``1 - Levenshtein(a, b) / max(len(a), len(b))`` on the raw strings, in [0, 1].

    Two empty strings give 0.0 in compat="miid" (the validator's division by zero is caught and scored 0.0) and
    1.0 in compat="stable" (they are identical).
    """
    mode = check_compat(compat)
    check_str(a, "a")
    check_str(b, "b")
    return _orthographic(a, b, mode)
