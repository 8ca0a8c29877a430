"""Candidate strings for the generator: edits of one name part, and constructive variations for each rule.

Edits keep the letter case of the position they change and stay in the part's own script: a Latin part is edited
with a-z, any other part with the letters it contains and their Unicode neighbours. Substitutions lean towards
letters that sound alike (vowel for vowel, the same Soundex class for consonants) so that sound-alike and
look-different edits both exist in the pool.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from functools import lru_cache

from norma.names._evaluators import VOWELS

__all__ = [
    "SPECIAL_CHARACTERS",
    "TRIPLE",
    "alphabet_of",
    "edit_pool",
    "onset_variants",
    "rule_pool",
    "substitute_letter",
]

TRIPLE = re.compile(r"(?i)(.)\1{2,}")
"""The validator drops a variation with three equal characters in a row (any case)."""

SPECIAL_CHARACTERS = "_-.@#*+&"
"""Separators used where a rule replaces spaces."""

_LATIN = "abcdefghijklmnopqrstuvwxyz"
_SOUNDEX_CLASSES = ("aeiouy", "bfpv", "cgjkqsxz", "dt", "l", "mn", "r", "hw")
_TITLES = ("Mr.", "Dr.", "Ms.", "Mrs.", "Prof.", "Sir", "Lady", "Lord", "Rev.", "Capt.")
_SUFFIXES = ("Jr.", "Sr.", "PhD", "MD", "III", "Esq.")
_SILENT_PAIRS = ("gh", "kn", "wh", "hw")
_ONSETS = ("c", "k", "ck", "kn", "n", "ph", "pf", "f", "s", "g", "j", "ca", "co", "cu")
"""Spellings of a first sound. Soundex keeps the first letter as written while Metaphone and NYSIIS read
"c"/"k", "kn"/"n" and "ph"/"f" alike, so these rewrites are how a string matches Metaphone and NYSIIS but not
Soundex: a phonetic score that no edit after the first letter reaches."""


def onset_variants(part: str) -> list[str]:
    """``part`` with its first one or two letters respelled by each of :data:`_ONSETS`, in the part's case."""
    if not part[:1].isalpha() or not part.isascii():
        return []
    out = []
    for cut in (1, 2):
        if cut == 2 and not part[1:2].isalpha():
            break
        for onset in _ONSETS:
            if part.isupper() and len(part) > 1:
                head = onset.upper()
            else:
                head = onset.capitalize() if part[:1].isupper() else onset
            text = head + part[cut:]
            if text != part:
                out.append(text)
    return out


def alphabet_of(part: str) -> str:
    """The letters edits of ``part`` use: a-z for a Latin part, else its own letters and their neighbours."""
    if part.isascii():
        return _LATIN
    letters = {ch.lower() for ch in part if ch.isalpha()}
    near = {chr(ord(ch) + delta) for ch in letters for delta in (-2, -1, 1, 2) if 0 < ord(ch) + delta < 0x110000}
    return "".join(sorted(ch for ch in letters | near if ch.isalpha() and ch == ch.lower()))


@lru_cache(maxsize=4096)
def _options(lower: str, alphabet: str) -> tuple[str, str]:
    """(sound-alike letters, any letters) that may replace ``lower``."""
    alike = alphabet
    if alphabet == _LATIN:
        for group in _SOUNDEX_CLASSES:
            if lower in group:
                alike = group
                break
    alike = alike.replace(lower, "") or alphabet.replace(lower, "")
    return alike, alphabet.replace(lower, "")


def _cased(template: str, ch: str) -> str:
    return ch.upper() if template.isupper() else ch


def substitute_letter(old: str, rng: random.Random, alphabet: str, alike: float = 0.6) -> str:
    """Another letter for ``old`` (same case): sound-alike with probability ``alike``, else any of ``alphabet``."""
    similar, anything = _options(old.lower(), alphabet)
    options = similar if rng.random() < alike else anything
    return _cased(old, options[int(rng.random() * len(options))]) if options else old


def edit_pool(part: str, rng: random.Random, per_distance: int = 32) -> list[str]:
    """Distinct edits of ``part`` (including ``part`` itself), none with three equal characters in a row.

    Every single substitution, swap, deletion and insertion (after the first letter), silent letter pairs and
    sound-alike first letters; then, for each number of changed letters, random substitutions that mostly keep
    the first letter (which every phonetic code keeps) and lean towards sound-alike letters, some followed by a
    swap or a length change.
    """
    alphabet = alphabet_of(part)
    seen: dict[str, None] = {part: None}

    def add(text: str) -> None:
        if text and text not in seen and not TRIPLE.search(text):
            seen[text] = None

    n = len(part)
    letters = [i for i, ch in enumerate(part) if ch.isalpha()]  # hyphens and apostrophes stay
    for i in letters:
        ch = part[i]
        for letter in alphabet:
            if letter != ch.lower():
                add(part[:i] + _cased(ch, letter) + part[i + 1 :])
    for i in range(n - 1):
        if part[i].isalpha() and part[i + 1].isalpha():
            add(part[:i] + part[i + 1] + part[i] + part[i + 2 :])
    for i in letters:
        add(part[:i] + part[i + 1 :])
    # Every single insertion after the first letter, and the silent pairs: some codes ignore a letter that others
    # keep (NYSIIS drops a final "s", Metaphone a "gh" or a "k" before "n"), which is how a string matches one
    # phonetic code and not another, and so reaches the partial phonetic scores.
    for i in range(1, n + 1):
        for letter in alphabet:
            add(part[:i] + letter + part[i:])
        if alphabet == _LATIN:
            for pair in _SILENT_PAIRS:
                add(part[:i] + pair + part[i:])
    if alphabet == _LATIN:
        for text in onset_variants(part):
            add(text)
    for distance in range(2, len(letters) + 1):
        for trial in range(per_distance):
            chars = list(part)
            keep_first = len(letters) > distance and rng.random() < 0.8
            positions = letters[1:] if keep_first else letters
            alike = (0.9, 0.6, 0.3)[trial % 3]
            for position in rng.sample(positions, distance):
                chars[position] = substitute_letter(chars[position], rng, alphabet, alike)
            text = "".join(chars)
            if trial % 8 == 5 and n > 2:
                i = rng.randrange(1, n - 1)
                if text[i].isalpha() and text[i + 1].isalpha():
                    text = text[:i] + text[i + 1] + text[i] + text[i + 2 :]
            elif trial % 8 == 6:
                i = rng.choice(letters[1:] or letters)
                text = text[:i] + text[i + 1 :]
            elif trial % 8 == 7:
                i = rng.randrange(1, n + 1)
                text = text[:i] + rng.choice(alphabet) + text[i:]
            add(text)
    return list(seen)


def _replace_spaces(name: str) -> Iterator[str]:
    for ch in SPECIAL_CHARACTERS:
        yield name.replace(" ", ch)


def _double_to_single(name: str) -> Iterator[str]:
    for i in range(len(name) - 1):
        if name[i].lower() == name[i + 1].lower() and name[i].isalpha():
            yield name[:i] + name[i + 1 :]


def _replace_letters(name: str, vowels: bool) -> Iterator[str]:
    for i, ch in enumerate(name):
        lower = ch.lower()
        if not ch.isalpha() or (lower in VOWELS) != vowels:
            continue
        pool = VOWELS if vowels else "".join(c for c in alphabet_of(name) if c not in VOWELS)
        for letter in pool:
            if letter != lower:
                yield name[:i] + _cased(ch, letter) + name[i + 1 :]


def _swaps(name: str, consonants_only: bool) -> Iterator[str]:
    for i in range(len(name) - 1):
        a, b = name[i], name[i + 1]
        if a == b:
            continue
        if consonants_only and not all(c.isalpha() and c.lower() not in VOWELS for c in (a, b)):
            continue
        yield name[:i] + b + a + name[i + 2 :]


def _deletions(name: str, keep: Callable[[str], bool]) -> Iterator[str]:
    for i, ch in enumerate(name):
        if keep(ch):
            yield name[:i] + name[i + 1 :]


def _duplicates(name: str) -> Iterator[str]:
    for i, ch in enumerate(name):
        if ch.isalpha():
            yield name[:i] + ch + name[i:]


def _insertions(name: str) -> Iterator[str]:
    for i in range(1, len(name) + 1):
        for letter in "aeiourlnhy":
            yield name[:i] + letter + name[i:]


def _structure(name: str, rule: str) -> Iterator[str]:
    parts = name.split()
    if len(parts) < 2:
        return
    if rule == "initial_only_first_name":
        rest = " ".join(parts[1:])
        yield f"{parts[0][0]}. {rest}"
        yield f"{parts[0][0]}.{rest}"
    elif rule == "shorten_name_to_initials":
        initials = [p[0] for p in parts]
        yield ". ".join(initials) + "."
        yield ".".join(initials) + "."
        yield "".join(initials)
    elif rule == "shorten_name_to_abbreviations":
        for cuts in itertools.product(*[range(max(1, len(p) - 3), len(p)) for p in parts]):
            yield " ".join(p[:cut] for p, cut in zip(parts, cuts, strict=True))
    elif rule == "name_parts_permutations":
        for order in itertools.permutations(parts):
            yield " ".join(order)


def _rule_strings(name: str, rule: str) -> Iterator[str]:
    if rule == "replace_spaces_with_random_special_characters":
        yield from _replace_spaces(name)
    elif rule == "replace_double_letters_with_single_letter":
        yield from _double_to_single(name)
    elif rule in ("replace_random_vowel_with_random_vowel", "replace_random_consonant_with_random_consonant"):
        yield from _replace_letters(name, vowels=rule == "replace_random_vowel_with_random_vowel")
    elif rule in ("swap_adjacent_consonants", "swap_adjacent_syllables", "swap_random_letter"):
        yield from _swaps(name, consonants_only=rule == "swap_adjacent_consonants")
    elif rule == "delete_random_letter":
        yield from _deletions(name, str.isalpha)
    elif rule == "remove_random_vowel":
        yield from _deletions(name, lambda ch: ch.lower() in VOWELS)
    elif rule == "remove_random_consonant":
        yield from _deletions(name, lambda ch: ch.isalpha() and ch.lower() not in VOWELS)
    elif rule == "remove_all_spaces":
        yield name.replace(" ", "")
    elif rule == "duplicate_random_letter_as_double_letter":
        yield from _duplicates(name)
    elif rule == "insert_random_letter":
        yield from _insertions(name)
    elif rule == "add_random_leading_title":
        yield from (f"{title} {name}" for title in _TITLES)
    elif rule == "add_random_trailing_title":
        yield from (f"{name} {suffix}" for suffix in _SUFFIXES)
    else:
        yield from _structure(name, rule)


def rule_pool(name: str, rule: str) -> list[str]:
    """Distinct variations of the whole ``name`` built to follow ``rule`` (unchecked: the caller evaluates them).

    An unknown rule, or one with no constructor (the extra evaluators), gives an empty list.
    """
    seen: dict[str, None] = {}
    for text in _rule_strings(name, rule):
        if text != name and text.strip() and not TRIPLE.search(text):
            seen.setdefault(text, None)
    return list(seen)
