"""Rule evaluators: does ``variation`` apply ``rule`` to ``original``?

Each evaluator takes ``(original, variation)`` and returns a bool, and gives the MIID validator's answer for
every pair of strings. They are written to be fast (lengths first, one scan for the differing positions
instead of building every candidate string) but each one's docstring states the validator's rule, and
``tests/names/test_evaluators.py`` checks them against a literal transcription of those rules.

Conventions: vowels are exactly ``aeiou`` (``y`` is a consonant); a consonant is an alphabetic character that is
not a vowel (so every non-Latin letter is a consonant); name parts come from ``str.split()``. "lower" means both
strings are lower-cased first; "raw" means the comparison is case-sensitive.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from rapidfuzz.distance import Levenshtein

from norma.errors import InvalidInputError
from norma.names._compat import check_compat
from norma.names._validate import check_str

__all__ = [
    "ASCII_LENGTH_CHANGE",
    "RAW_LENGTH_CHANGE",
    "RULE_EVALUATORS",
    "SPECIAL_CHARACTERS",
    "SUFFIXES",
    "TITLES",
    "VOWELS",
    "evaluate_rule",
    "is_consonant",
]

VOWELS = "aeiou"
SPECIAL_CHARACTERS = "!@#$%^&*()_+-=[]{}|;:,.<>?"
TITLES: tuple[str, ...] = (
    "Mr.", "Mrs.", "Ms.", "Mr", "Mrs", "Ms", "Miss", "Dr.", "Dr", "Prof.", "Prof", "Sir", "Lady", "Lord", "Dame",
    "Master", "Mistress", "Rev.", "Hon.", "Capt.", "Col.", "Lt.", "Sgt.", "Maj.",
)  # fmt: skip
SUFFIXES: tuple[str, ...] = ("Jr.", "Sr.", "III", "IV", "V", "PhD", "MD", "Esq.", "Jr", "Sr")
_TITLES_LOWER = tuple(title.lower() for title in TITLES)
_TITLE_SET = frozenset(_TITLES_LOWER)
_SUFFIX_SET = frozenset(suffix.lower() for suffix in SUFFIXES)

_distance = Levenshtein.distance


def is_consonant(char: str) -> bool:
    """An alphabetic character that is not one of ``aeiou`` (case-insensitive)."""
    return char.isalpha() and char.lower() not in VOWELS


def _first_mismatch(a: str, b: str) -> int:
    """Index of the first position where ``a`` and ``b`` differ (``min(len)`` when one is a prefix).

    A binary search on prefix equality: slices compare in C, so this beats a character loop."""
    low, high = 0, min(len(a), len(b))
    if a[:high] == b[:high]:
        return high
    while low < high:  # invariant: a[:low] == b[:low] and a[:high + 1] != b[:high + 1]
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _two_adjacent_swapped(a: str, b: str) -> int:
    """For equal-length strings: the index ``i`` when ``b`` is ``a`` with ``a[i]`` and ``a[i+1]`` exchanged (and the
    two differ), else -1."""
    i = _first_mismatch(a, b)
    if i + 1 >= len(a):
        return -1
    if a[i] != b[i + 1] or a[i + 1] != b[i]:
        return -1
    if a[i + 2 :] != b[i + 2 :]:
        return -1
    return i


def _one_deleted(longer: str, shorter: str) -> bool:
    """``shorter`` is ``longer`` with exactly one character removed (lengths already differ by one)."""
    i = _first_mismatch(longer, shorter)
    return longer[i + 1 :] == shorter[i:]


def space_replaced(original: str, variation: str) -> bool:
    """replace_spaces_with_random_special_characters (raw): ``original`` has a space, ``variation`` none, they
    differ, lengths differ by at most k (spaces in ``original``) and Levenshtein(original without spaces,
    variation) <= k + 1."""
    if " " not in original or " " in variation or original == variation:
        return False
    spaces = original.count(" ")
    if abs(len(variation) - len(original)) > spaces:
        return False
    return _distance(original.replace(" ", ""), variation, score_cutoff=spaces + 1) <= spaces + 1


def double_letter_replaced(original: str, variation: str) -> bool:
    """replace_double_letters_with_single_letter (lower): one of two equal adjacent alphabetic characters removed."""
    o = original.lower()
    v = variation.lower()
    if len(v) != len(o) - 1:
        return False
    return any(o[i] == o[i + 1] and o[i].isalpha() and o[:i] + o[i + 1 :] == v for i in range(len(o) - 1))


def _class_substituted(o: str, v: str, member: Callable[[str], bool]) -> bool:
    """Same length, different, at least one position where a ``member`` character became another ``member``
    character, and at most one other changed position (the shape of the three replacement rules)."""
    if len(o) != len(v) or o == v:
        return False
    matches = 0
    others = 0
    for a, b in zip(o, v, strict=True):
        if a != b:
            if member(a) and member(b):
                matches += 1
            else:
                others += 1
                if others > 1:
                    return False
    return matches >= 1


def vowel_replaced(original: str, variation: str) -> bool:
    """replace_random_vowel_with_random_vowel (lower): same length, different, at least one vowel->vowel change and at
    most one other change."""
    return _class_substituted(original.lower(), variation.lower(), VOWELS.__contains__)


def consonant_replaced(original: str, variation: str) -> bool:
    """replace_random_consonant_with_random_consonant (lower): same length, different, at least one
    consonant->consonant change and at most one other change."""
    return _class_substituted(original.lower(), variation.lower(), is_consonant)


def letters_swapped(original: str, variation: str) -> bool:
    """swap_random_letter and swap_adjacent_syllables (raw): same length, different, exactly two differing positions,
    adjacent and cross-equal."""
    if len(original) != len(variation) or original == variation:
        return False
    return _two_adjacent_swapped(original, variation) >= 0


def adjacent_consonants_swapped(original: str, variation: str) -> bool:
    """swap_adjacent_consonants (lower): same length, different, ``variation`` is ``original`` with one adjacent pair of
    consonants exchanged."""
    o = original.lower()
    v = variation.lower()
    if len(o) != len(v) or o == v:
        return False
    i = _two_adjacent_swapped(o, v)
    return i >= 0 and is_consonant(o[i]) and is_consonant(o[i + 1])


def letter_deleted(original: str, variation: str) -> bool:
    """delete_random_letter (raw): one character shorter and Levenshtein distance 1."""
    return len(variation) == len(original) - 1 and _one_deleted(original, variation)


def letter_inserted(original: str, variation: str) -> bool:
    """insert_random_letter (raw): one character longer and Levenshtein distance 1."""
    return len(variation) == len(original) + 1 and _one_deleted(variation, original)


def _removed_where(o: str, v: str, keep: Callable[[str], bool]) -> bool:
    # Is v (lower) equal to o (lower) with one character c removed, keep(c) true? Deleting at i works only for
    # i <= first mismatch.
    if len(v) != len(o) - 1:
        return False
    limit = _first_mismatch(o, v)
    return any(keep(o[i]) and o[i + 1 :] == v[i:] for i in range(limit + 1))


def _is_vowel(char: str) -> bool:
    return char in VOWELS


def vowel_removed(original: str, variation: str) -> bool:
    """remove_random_vowel: raw length check (one shorter), then the lower-cased original with one vowel removed
    equals the lower-cased variation."""
    if len(variation) != len(original) - 1:
        return False
    return _removed_where(original.lower(), variation.lower(), _is_vowel)


def consonant_removed(original: str, variation: str) -> bool:
    """remove_random_consonant: raw length check (one shorter), then the lower-cased original with one consonant
    removed equals the lower-cased variation."""
    if len(variation) != len(original) - 1:
        return False
    return _removed_where(original.lower(), variation.lower(), is_consonant)


def all_spaces_removed(original: str, variation: str) -> bool:
    """remove_all_spaces (raw): ``original`` has a space and ``variation == original.replace(" ", "")``."""
    return " " in original and variation == original.replace(" ", "")


def letter_duplicated(original: str, variation: str) -> bool:
    """duplicate_random_letter_as_double_letter (lower): the lower-cased variation is one character longer than the
    lower-cased original and equals ``o[:i] + o[i] + o[i:]`` for some ``i`` (``"kathryn" -> "KAATHRYN"``)."""
    o = original.lower()
    v = variation.lower()
    if len(v) != len(o) + 1:
        return False
    limit = min(_first_mismatch(o, v), len(o) - 1)
    return any(v[i] == o[i] and v[i + 1 :] == o[i:] for i in range(limit + 1))


def title_added(original: str, variation: str) -> bool:
    """add_random_leading_title: different (raw), then lower-cased, ``variation`` starts with a title and a space and
    is the original after it, or within Levenshtein 2 of it."""
    if original == variation:
        return False
    # Titles hold no space, so "starts with title + ' '" means "the text before the first space is the title".
    head, space, rest = variation.lower().partition(" ")
    if not space or head not in _TITLE_SET:
        return False
    o = original.lower()
    return rest == o or _distance(o, rest, score_cutoff=2) <= 2


def suffix_added(original: str, variation: str) -> bool:
    """add_random_trailing_title: different (raw), then lower-cased, ``variation`` is the original, a space and a
    suffix, or ends with a space and a suffix and the rest is within Levenshtein 2 of the original."""
    if original == variation:
        return False
    # Suffixes hold no space, so "ends with ' ' + suffix" means "the text after the last space is the suffix".
    rest, space, tail = variation.lower().rpartition(" ")
    if not space or tail not in _SUFFIX_SET:
        return False
    o = original.lower()
    return rest == o or _distance(o, rest, score_cutoff=2) <= 2


@lru_cache(maxsize=4096)
def _initial_forms(original: str) -> tuple[str, ...]:
    """The lower-cased initials forms ``"j.s."``, ``"j. s."``, ``"js"`` of a name with at least two parts."""
    firsts = [part[0] for part in original.split()]
    if len(firsts) < 2:
        return ()
    return (".".join(firsts).lower() + ".", ". ".join(firsts).lower() + ".", "".join(firsts).lower())


def initials_only(original: str, variation: str) -> bool:
    """shorten_name_to_initials: different (raw), at least two parts, and the lower-cased variation is the parts'
    first characters as ``"j.s."``, ``"j. s."`` or ``"js"``."""
    if original == variation:
        return False
    forms = _initial_forms(original)
    return bool(forms) and variation.lower() in forms


@lru_cache(maxsize=4096)
def _sorted_parts(original: str) -> tuple[list[str], list[str]]:
    parts = original.split()
    return parts, sorted(parts)


def parts_permuted(original: str, variation: str) -> bool:
    """name_parts_permutations (raw): at least two parts, as many in both, the same parts, another order."""
    o, ordered = _sorted_parts(original)
    if len(o) < 2:
        return False
    v = variation.split()
    if len(o) != len(v):
        return False
    return o != v and ordered == sorted(v)


@lru_cache(maxsize=4096)
def _first_initial_forms(original: str) -> tuple[str, ...]:
    parts = original.split()
    if len(parts) < 2:
        return ()
    rest = " ".join(parts[1:])
    return (parts[0][0] + ". " + rest).lower(), (parts[0][0] + "." + rest).lower()


def first_name_initial(original: str, variation: str) -> bool:
    """initial_only_first_name: at least two parts; the lower-cased variation is the first part's first character,
    ``"."`` or ``". "``, then the other parts (lower-cased). Note: no "different" check, as in the validator."""
    forms = _first_initial_forms(original)
    return bool(forms) and variation.lower() in forms


def name_abbreviated(original: str, variation: str) -> bool:
    """shorten_name_to_abbreviations: different (raw); one part: the variation is one part, strictly shorter and a
    case-insensitive prefix; two or more parts: as many parts, each strictly shorter and a case-sensitive prefix."""
    if original == variation:
        return False
    o = _sorted_parts(original)[0]
    v = variation.split()
    if len(o) == 1:
        if len(v) != 1:
            return False
        return len(v[0]) < len(o[0]) and o[0].lower().startswith(v[0].lower())
    if len(o) < 2 or len(o) != len(v):
        return False
    return all(len(b) < len(a) and a.startswith(b) for a, b in zip(o, v, strict=True))


def special_replaced(original: str, variation: str) -> bool:
    """replace_random_special_character_with_random_special_character (raw): same length, different, at least one
    special->special change and at most one other change."""
    if not any(char in SPECIAL_CHARACTERS for char in original):
        return False
    return _class_substituted(original, variation, _is_special)


def _is_special(char: str) -> bool:
    return char in SPECIAL_CHARACTERS


def special_removed(original: str, variation: str) -> bool:
    """remove_random_special_character (raw): one special character of ``original`` removed."""
    return _removed_where(original, variation, _is_special)


def title_removed(original: str, variation: str) -> bool:
    """remove_title (lower): ``original`` starts with a title and a space; ``variation`` differs from it and is the
    rest after the title, or within Levenshtein 2 of it."""
    o = original.lower()
    v = variation.lower()
    if o == v:
        return False
    for title in TITLES:
        if o.startswith(title.lower() + " "):
            rest = o[len(title) + 1 :]
            if rest == v or _distance(v, rest, score_cutoff=2) <= 2:
                return True
    return False


RULE_EVALUATORS: dict[str, Callable[[str, str], bool]] = {
    "replace_spaces_with_random_special_characters": space_replaced,
    "replace_double_letters_with_single_letter": double_letter_replaced,
    "replace_random_vowel_with_random_vowel": vowel_replaced,
    "replace_random_consonant_with_random_consonant": consonant_replaced,
    "replace_random_special_character_with_random_special_character": special_replaced,
    "swap_random_letter": letters_swapped,
    "swap_adjacent_consonants": adjacent_consonants_swapped,
    "swap_adjacent_syllables": letters_swapped,
    "delete_random_letter": letter_deleted,
    "remove_random_vowel": vowel_removed,
    "remove_random_consonant": consonant_removed,
    "remove_random_special_character": special_removed,
    "remove_title": title_removed,
    "remove_all_spaces": all_spaces_removed,
    "duplicate_random_letter_as_double_letter": letter_duplicated,
    "insert_random_letter": letter_inserted,
    "add_random_leading_title": title_added,
    "add_random_trailing_title": suffix_added,
    "shorten_name_to_initials": initials_only,
    "name_parts_permutations": parts_permuted,
    "initial_only_first_name": first_name_initial,
    "shorten_name_to_abbreviations": name_abbreviated,
}
"""Rule id -> evaluator ``(original, variation) -> bool``: the 19 catalog rules and 3 extra ones."""


RAW_LENGTH_CHANGE: dict[Callable[[str, str], bool], int] = {
    letters_swapped: 0,
    letter_deleted: -1,
    letter_inserted: 1,
    vowel_removed: -1,
    consonant_removed: -1,
    special_removed: -1,
    special_replaced: 0,
}
"""Evaluators that return False unless ``len(variation) == len(original) + change`` (raw lengths): callers may skip
them on that check alone."""

ASCII_LENGTH_CHANGE: dict[Callable[[str, str], bool], int] = {
    double_letter_replaced: -1,
    letter_duplicated: 1,
    vowel_replaced: 0,
    consonant_replaced: 0,
    adjacent_consonants_swapped: 0,
}
"""Evaluators that compare lower-cased strings and return False unless the lower-cased lengths differ by
``change``; for ASCII strings ``lower()`` keeps the length, so the raw lengths decide."""


def evaluate_rule(rule: str, original: str, variation: str, *, compat: str = "miid") -> bool:
    """Does ``variation`` apply ``rule`` to ``original``?

    The evaluators are the same in both modes. An unknown rule raises :class:`InvalidInputError` (the validator
    raises a lookup error there).
    """
    check_compat(compat)
    check_str(rule, "rule")
    check_str(original, "original")
    check_str(variation, "variation")
    evaluator = RULE_EVALUATORS.get(rule)
    if evaluator is None:
        raise InvalidInputError(
            f"unknown rule {rule!r}", location="rule", hint="see norma.names.RULE_EVALUATORS for the known rule ids"
        )
    return evaluator(original, variation)
