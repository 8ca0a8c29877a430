"""Rule evaluators: True and False cases per rule, unicode, empty strings, and a differential test against a slow,
obviously-correct reference written from the rules' wording (build every candidate, compare)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.names import RULE_CATALOG, RULE_EVALUATORS, evaluate_rule, evaluate_rule_compliance
from norma.names._catalog import EXTRA_RULES
from norma.names._compliance import effective_rules

VOWELS = set("aeiou")
SPECIAL = set("!@#$%^&*()_+-=[]{}|;:,.<>?")
TITLES = ["Mr.", "Mrs.", "Ms.", "Mr", "Mrs", "Ms", "Miss", "Dr.", "Dr", "Prof.", "Prof", "Sir", "Lady", "Lord",
          "Dame", "Master", "Mistress", "Rev.", "Hon.", "Capt.", "Col.", "Lt.", "Sgt.", "Maj."]  # fmt: skip
SUFFIXES = ["Jr.", "Sr.", "III", "IV", "V", "PhD", "MD", "Esq.", "Jr", "Sr"]


def lev(a: str, b: str) -> int:
    """Textbook dynamic-programming Levenshtein distance."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def consonant(c: str) -> bool:
    return c.isalpha() and c.lower() not in "aeiou"


def deletions(s: str) -> list[tuple[int, str]]:
    return [(i, s[:i] + s[i + 1 :]) for i in range(len(s))]


def swapped(s: str, i: int) -> str:
    chars = list(s)
    chars[i], chars[i + 1] = chars[i + 1], chars[i]
    return "".join(chars)


def changes(o: str, v: str, same_class: Callable[[str, str], bool]) -> bool:
    if len(o) != len(v) or o == v:
        return False
    diffs = [(a, b) for a, b in zip(o, v, strict=True) if a != b]
    matches = sum(1 for a, b in diffs if same_class(a, b))
    return matches >= 1 and len(diffs) - matches <= 1


def ref(rule: str, o: str, v: str) -> bool:
    ol, vl = o.lower(), v.lower()
    parts = o.split()
    if rule == "replace_spaces_with_random_special_characters":
        k = o.count(" ")
        return k > 0 and " " not in v and o != v and abs(len(v) - len(o)) <= k and lev(o.replace(" ", ""), v) <= k + 1
    if rule == "replace_double_letters_with_single_letter":
        return any(ol[i] == ol[i + 1] and ol[i].isalpha() and cand == vl for i, cand in deletions(ol)[:-1])
    if rule == "replace_random_vowel_with_random_vowel":
        return changes(ol, vl, lambda a, b: a in VOWELS and b in VOWELS)
    if rule == "replace_random_consonant_with_random_consonant":
        return changes(ol, vl, lambda a, b: consonant(a) and consonant(b))
    if rule == "replace_random_special_character_with_random_special_character":
        return changes(o, v, lambda a, b: a in SPECIAL and b in SPECIAL)
    if rule in ("swap_random_letter", "swap_adjacent_syllables"):
        return len(o) == len(v) and o != v and any(swapped(o, i) == v for i in range(len(o) - 1))
    if rule == "swap_adjacent_consonants":
        return any(
            consonant(ol[i]) and consonant(ol[i + 1]) and swapped(ol, i) == vl and ol != vl for i in range(len(ol) - 1)
        )
    if rule == "delete_random_letter":
        return len(v) == len(o) - 1 and lev(o, v) == 1
    if rule == "insert_random_letter":
        return len(v) == len(o) + 1 and lev(o, v) == 1
    if rule == "remove_random_vowel":
        return len(v) == len(o) - 1 and any(ol[i] in VOWELS and c == vl for i, c in deletions(ol))
    if rule == "remove_random_consonant":
        return len(v) == len(o) - 1 and any(consonant(ol[i]) and c == vl for i, c in deletions(ol))
    if rule == "remove_random_special_character":
        return any(o[i] in SPECIAL and c == v for i, c in deletions(o))
    if rule == "remove_all_spaces":
        return " " in o and v == o.replace(" ", "")
    if rule == "duplicate_random_letter_as_double_letter":
        return any(ol[:i] + ol[i] + ol[i:] == vl for i in range(len(ol)))
    if rule == "add_random_leading_title":
        return o != v and any(vl.startswith(t.lower() + " ") and lev(ol, vl[len(t) + 1 :]) <= 2 for t in TITLES)
    if rule == "add_random_trailing_title":
        return o != v and any(vl.endswith(" " + s.lower()) and lev(ol, vl[: -len(s) - 1]) <= 2 for s in SUFFIXES)
    if rule == "remove_title":
        return ol != vl and any(ol.startswith(t.lower() + " ") and lev(vl, ol[len(t) + 1 :]) <= 2 for t in TITLES)
    if rule == "shorten_name_to_initials":
        firsts = [p[0] for p in parts]
        forms = {".".join(firsts).lower() + ".", ". ".join(firsts).lower() + ".", "".join(firsts).lower()}
        return o != v and len(parts) >= 2 and vl in forms
    if rule == "name_parts_permutations":
        vp = v.split()
        return len(parts) >= 2 and len(vp) == len(parts) and sorted(vp) == sorted(parts) and vp != parts
    if rule == "initial_only_first_name":
        if len(parts) < 2:
            return False
        rest = " ".join(parts[1:])
        return vl in {(parts[0][0] + ". " + rest).lower(), (parts[0][0] + "." + rest).lower()}
    if rule == "shorten_name_to_abbreviations":
        vp = v.split()
        if o == v:
            return False
        if len(parts) == 1:
            return len(vp) == 1 and len(vp[0]) < len(parts[0]) and parts[0].lower().startswith(vp[0].lower())
        return (
            len(parts) >= 2
            and len(vp) == len(parts)
            and all(len(b) < len(a) and a.startswith(b) for a, b in zip(parts, vp, strict=True))
        )
    raise AssertionError(rule)


ALL_RULES = list(RULE_CATALOG) + list(EXTRA_RULES)

CASES: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]]]] = {
    # rule: (pairs that comply, pairs that do not)
    "replace_spaces_with_random_special_characters": (
        [("John Smith", "John_Smith"), ("John Paul Smith", "John-Paul.Smith"), ("A B", "A#B")],
        [("John", "Jo_hn"), ("John Smith", "John Smith"), ("John Smith", "John Sm_ith x"), ("", "")],
    ),
    "replace_double_letters_with_single_letter": (
        [("William", "Wiliam"), ("Anna Lee", "Ana Lee"), ("LLoyd", "lOyd")],
        [("William", "William"), ("John", "Jon"), ("A--B", "A-B"), ("", "")],
    ),
    "replace_random_vowel_with_random_vowel": (
        [("John", "Jahn"), ("Maria", "Mario"), ("Anna", "Enna")],
        [("John", "Jyhn"), ("John", "John"), ("Иван", "Иэан"), ("", "")],
    ),
    "replace_random_consonant_with_random_consonant": (
        [("John", "Jomn"), ("Иван", "Идан"), ("Smith", "Smiph")],
        [("John", "Jahn"), ("John", "JOHN"), ("Jo", "J1"), ("", "")],
    ),
    "replace_random_special_character_with_random_special_character": (
        [("John-Smith", "John_Smith"), ("A.B", "A,B")],
        [("John Smith", "John_Smith"), ("John-Smith", "John-Smith"), ("", "")],
    ),
    "swap_adjacent_consonants": (
        [("John", "Jonh"), ("Smith", "Smiht"), ("Кирилл", "Кирлил")],
        [("John", "Jhno"), ("Anna", "Anna"), ("Aeon", "Eaon"), ("", "")],
    ),
    "swap_adjacent_syllables": (
        [("John", "Jhon"), ("Anna", "nAna")],
        [("John", "John"), ("John", "Jnho"), ("", "")],
    ),
    "swap_random_letter": (
        [("Maria", "Mraia"), ("李小龙", "小李龙")],
        [("Maria", "mAria"), ("Maria", "Mariaa"), ("", "")],
    ),
    "delete_random_letter": (
        [("John", "Jon"), ("A", ""), ("Иван", "Ивн")],
        [("John", "John"), ("John", "Jo"), ("John", "Jxn"), ("", "")],
    ),
    "remove_random_vowel": (
        [("John", "Jhn"), ("Anna", "nna"), ("ANNA", "nna")],
        [("John", "Jon"), ("Иван", "Ивн"), ("Jhn", "Jn"), ("", "")],
    ),
    "remove_random_consonant": (
        [("John", "Jon"), ("Иван", "Ивн"), ("SMITH", "sith")],
        [("John", "Jhn"), ("John", "John"), ("A1", "A"), ("", "")],
    ),
    "remove_random_special_character": (
        [("John-Smith", "JohnSmith"), ("A.B.", "A.B")],
        [("John Smith", "JohnSmith"), ("John-Smith", "John-Smith"), ("", "")],
    ),
    "remove_all_spaces": (
        [("John Smith", "JohnSmith"), ("John Paul Smith", "JohnPaulSmith")],
        [("John", "John"), ("John Smith", "johnsmith"), ("", "")],
    ),
    "duplicate_random_letter_as_double_letter": (
        [
            ("John", "Joohn"),
            ("John", "JJohn"),
            ("John", "Jjohn"),
            ("Ли", "Лии"),
            ("austin cho duncan", "austIn cho dunncan"),
            ("kathryn", "KAATHRYN"),
            ("Victoria Foster", "Victoria ffoster"),
        ],
        [("John", "Johna"), ("John", "John"), ("John", "JOHN"), ("John", "Jxohn"), ("", "a")],
    ),
    "insert_random_letter": (
        [("John", "Johxn"), ("", "a"), ("Иван", "Ивкан")],
        [("John", "John"), ("John", "Johxxn"), ("John", "Jxhn")],
    ),
    "add_random_leading_title": (
        [("John Smith", "Mr. John Smith"), ("John Smith", "dr jon smith"), ("Anna", "Lady Anna")],
        [("John Smith", "John Smith"), ("John Smith", "Mr.John Smith"), ("John Smith", "King John Smith"), ("", "")],
    ),
    "add_random_trailing_title": (
        [("John Smith", "John Smith Jr."), ("John Smith", "jon smith phd"), ("Anna", "Anna V")],
        [("John Smith", "John Smith"), ("John Smith", "John SmithJr."), ("John Smith", "John Smith Esquire")],
    ),
    "remove_title": (
        [("Mr. John Smith", "John Smith"), ("Dr Anna Lee", "anna lee"), ("Sir Paul", "Paull")],
        [("John Smith", "Smith"), ("Mr. John Smith", "Mr. John Smith"), ("Mr. John Smith", "Bob"), ("", "")],
    ),
    "initial_only_first_name": (
        [("John Smith", "J. Smith"), ("John Paul Smith", "j.paul smith"), ("J. Smith", "J. Smith")],
        [("John", "J."), ("John Smith", "J Smith"), ("John Smith", "John S."), ("", "")],
    ),
    "shorten_name_to_initials": (
        [("John Smith", "J.S."), ("John Smith", "j. s."), ("John Paul Smith", "JPS")],
        [("John", "J."), ("John Smith", "J S"), ("JS", "JS"), ("", "")],
    ),
    "shorten_name_to_abbreviations": (
        [("John Smith", "Jo Sm"), ("Alexander", "alex"), ("John Paul Smith", "J P Smi")],
        [("John Smith", "Jo Smith"), ("John Smith", "jo sm"), ("John", "John"), ("", "")],
    ),
    "name_parts_permutations": (
        [("John Smith", "Smith John"), ("John Paul Smith", "Paul Smith John"), ("A B", "B  A")],
        [("John", "John"), ("John Smith", "John Smith"), ("John Smith", "smith john"), ("", "")],
    ),
}


def test_every_rule_has_cases() -> None:
    assert sorted(CASES) == sorted(ALL_RULES)


@pytest.mark.parametrize("rule", ALL_RULES)
def test_true_cases(rule: str) -> None:
    for original, variation in CASES[rule][0]:
        assert evaluate_rule(rule, original, variation), (rule, original, variation)
        assert ref(rule, original, variation), (rule, original, variation)


@pytest.mark.parametrize("rule", ALL_RULES)
def test_false_cases(rule: str) -> None:
    for original, variation in CASES[rule][1]:
        assert not evaluate_rule(rule, original, variation), (rule, original, variation)
        assert not ref(rule, original, variation), (rule, original, variation)


def test_duplicate_letter_compares_lower_cased_strings_like_the_validator() -> None:
    # The validator (62bb538 / 659496b) lower-cases both strings first (docs/design/010-names-compat.md).
    rule = "duplicate_random_letter_as_double_letter"
    assert evaluate_rule(rule, "John", "JJohn")
    assert evaluate_rule(rule, "John", "jjohn")
    assert evaluate_rule(rule, "austin cho duncan", "austIn cho dunncan")
    assert evaluate_rule(rule, "kathryn", "KAATHRYN")
    assert evaluate_rule(rule, "Victoria Foster", "Victoria ffoster")
    assert not evaluate_rule(rule, "Victoria Foster", "Victoria fffoster")
    # lower() can change the length ("İ" -> "i" + U+0307): the lengths compared are the lower-cased ones.
    assert evaluate_rule(rule, "İ", "ii\u0307")
    assert not evaluate_rule(rule, "İ", "İİ")


def test_non_latin_letters_are_consonants() -> None:
    assert not evaluate_rule("replace_random_vowel_with_random_vowel", "Иван", "Ивон")
    assert evaluate_rule("replace_random_consonant_with_random_consonant", "李小龙", "李大龙")
    assert evaluate_rule("remove_random_consonant", "Ивaн", "Иaн")


def test_y_is_a_consonant() -> None:
    assert evaluate_rule("replace_random_consonant_with_random_consonant", "Kyle", "Kkle")
    assert not evaluate_rule("replace_random_vowel_with_random_vowel", "Kyle", "Kale")


def test_unknown_rule_raises() -> None:
    with pytest.raises(InvalidInputError, match="unknown rule"):
        evaluate_rule("make_it_shorter", "John", "Jon")


@pytest.mark.parametrize("bad", [None, 3, b"John", ["John"]])
def test_non_string_inputs_raise(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        evaluate_rule("delete_random_letter", bad, "Jon")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        evaluate_rule("delete_random_letter", "John", bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        evaluate_rule(bad, "John", "Jon")  # type: ignore[arg-type]


def test_bad_compat_raises() -> None:
    with pytest.raises(InvalidInputError, match="compat"):
        evaluate_rule("delete_random_letter", "John", "Jon", compat="exact")


def test_registry_is_a_plain_dict_of_the_catalog_and_extras() -> None:
    assert type(RULE_EVALUATORS) is dict
    assert set(RULE_EVALUATORS) == set(RULE_CATALOG) | set(EXTRA_RULES)
    assert RULE_EVALUATORS["swap_adjacent_syllables"] is RULE_EVALUATORS["swap_random_letter"]


ALPHABET = "aAbBeEiIoOuUyYnNlLsS -.İßИв李"
names = st.text(alphabet=ALPHABET, max_size=9)


def edits(draw: st.DrawFn, name: str) -> str:
    kind = draw(st.integers(0, 12))
    if not name or kind == 0:
        return draw(names)
    i = draw(st.integers(0, len(name) - 1))
    c = draw(st.sampled_from(ALPHABET))
    return [
        name,
        name[:i] + name[i + 1 :],
        name[:i] + c + name[i:],
        name[:i] + c + name[i + 1 :],
        name[:i] + name[i] + name[i:],
        swapped(name, i) if i + 1 < len(name) else name,
        name.lower(),
        draw(st.sampled_from(TITLES)) + " " + name,
        name + " " + draw(st.sampled_from(SUFFIXES)),
        name[:i] + name[i].swapcase() + name[i:],  # a letter doubled in the other case
        (name[:i] + name[i] + name[i:]).upper(),
        (name[:i] + name[i] + name[i:]).swapcase(),
    ][kind - 1]


@st.composite
def pairs(draw: st.DrawFn) -> tuple[str, str]:
    name = draw(names)
    return name, edits(draw, name)


@settings(max_examples=400, deadline=None)
@given(pair=pairs(), rule=st.sampled_from(ALL_RULES))
def test_matches_reference(pair: tuple[str, str], rule: str) -> None:
    original, variation = pair
    assert evaluate_rule(rule, original, variation) == ref(rule, original, variation)


@settings(max_examples=200, deadline=None)
@given(original=names, variation=names, rule=st.sampled_from(ALL_RULES))
def test_matches_reference_on_unrelated_strings(original: str, variation: str, rule: str) -> None:
    assert evaluate_rule(rule, original, variation) == ref(rule, original, variation)


ASCII_NAMES = st.text(alphabet="aAbBeEiIoOnNlLsSyY -.'", min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(name=ASCII_NAMES, data=st.data())
def test_a_doubled_letter_in_any_case_complies(name: str, data: st.DataObject) -> None:
    # Mixed case: the validator lower-cases both strings, so recasing any character of a doubled-letter variation
    # keeps it compliant (ASCII: lower() keeps the length), and the compliance functions agree with the evaluator.
    rule = "duplicate_random_letter_as_double_letter"
    i = data.draw(st.integers(0, len(name) - 1))
    doubled = name[:i] + name[i] + name[i:]
    flips = data.draw(st.lists(st.booleans(), min_size=len(doubled), max_size=len(doubled)))
    variation = "".join(c.swapcase() if flip else c for c, flip in zip(doubled, flips, strict=True))
    assert evaluate_rule(rule, name, variation)
    assert ref(rule, name, variation)
    assert evaluate_rule_compliance(name, [variation, name], [rule])[0] == {rule: [variation]}


@settings(max_examples=300, deadline=None)
@given(
    pair=pairs(),
    rule=st.sampled_from(
        [
            "duplicate_random_letter_as_double_letter",
            "remove_random_vowel",
            "replace_double_letters_with_single_letter",
            "swap_adjacent_consonants",
        ]
    ),
)
def test_lower_casing_rules_in_mixed_case_match_reference(pair: tuple[str, str], rule: str) -> None:
    original, variation = pair
    for o, v in ((original, variation), (original.upper(), variation), (original, variation.swapcase())):
        assert evaluate_rule(rule, o, v) == ref(rule, o, v)
        assert bool(evaluate_rule_compliance(o, [v], [rule])[0].get(rule)) == (
            ref(rule, o, v) and rule in effective_rules(o, [rule])
        )
