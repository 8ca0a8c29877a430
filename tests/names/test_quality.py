"""part_score and variation_quality: every formula, every branch, and a slow reference for differential tests."""

from __future__ import annotations

import math
import random
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.names import (
    orthographic_similarity,
    part_score,
    phonetic_similarity,
    rule_compliance_score,
    variation_quality,
)
from norma.names._compat import name_part_weights, phonetic_plan, string_seed
from norma.names._quality import _distribution_quality

LEVELS_MIID = {
    "phonetic": (("Light", 0.8, 1.0, True), ("Medium", 0.6, 0.79, True), ("Far", 0.3, 0.59, True)),
    "orthographic": (("Light", 0.7, 1.0, True), ("Medium", 0.5, 0.69, True), ("Far", 0.2, 0.49, True)),
}
FLAT = {"Medium": 1.0}


# --- slow reference, written from the formulas -------------------------------------------------------------------


def ref_quality(scores: list[float], kind: str, targets: dict[str, float]) -> float:
    quality, matched = 0.0, 0
    for level, lo, hi, _ in LEVELS_MIID[kind]:
        p = targets.get(level, 0.0)
        if p == 0.0:
            continue
        c = len([s for s in scores if lo <= s <= hi])
        t = int(p * len(scores))
        if t > 0:
            r = c / t
            quality += p * (r if r <= 1 else 1 - math.exp(-(r - 1)))
            matched += c
    if len(scores) - matched > 0:
        quality = max(0.0, quality - 0.1 * ((len(scores) - matched) / len(scores)))
    return quality


def ref_part(original: str, variations: list[str], phon: dict[str, float], orth: dict[str, float], e: float) -> float:
    if not variations:
        return 0.0
    tol = min(0.2 + 0.05 * (e // 10), 0.4)
    lo, hi = max(1, e - e * tol), e + e * tol
    n = len(variations)
    count = 1.0 if lo <= n <= hi else math.exp(-((lo - n) if n < lo else (n - hi)) / e)
    kept = [v for v in variations if not re.search(r"(.)\1{2,}", v, re.IGNORECASE)]
    dropped = n - len(kept)
    unique: list[str] = []
    for v in kept:
        if not any(phonetic_similarity(v, u) * 0.7 + orthographic_similarity(v, u) * 0.3 > 0.99 for u in unique):
            unique.append(v)
    o = len(original)
    lengths = [min(len(v) / o, o / len(v)) * (1 - min(1, abs(len(v) - o) / o)) for v in unique]
    total = 0.0
    for x in lengths:
        total += x
    length = total / len(lengths) if lengths else 0.0
    pq = ref_quality([phonetic_similarity(original, v) for v in unique], "phonetic", phon)
    oq = ref_quality([orthographic_similarity(original, v) for v in unique], "orthographic", orth)
    sim = (pq + oq) / 2
    if sim < 0.2:
        sim *= 0.1
    score = 0.6 * sim + 0.15 * count + 0.1 * (len(unique) / n) + 0.15 * length
    if dropped:
        score = max(0.0, score * (1 - min(0.2, dropped * 0.05)))
    return score


# --- part_score formulas -----------------------------------------------------------------------------------------


def count_of(n: int, expected: float) -> float:
    variations = [f"Jo{chr(97 + i % 26)}{chr(97 + i // 26)}n" for i in range(n)]
    return float(part_score("John", variations, FLAT, FLAT, expected)[1]["count"]["score"])


def test_count_score() -> None:
    assert count_of(10, 10) == 1.0
    assert count_of(8, 10) == 1.0  # tolerance 25 % at E = 10: [7.5, 12.5]
    assert count_of(7, 10) == math.exp(-0.5 / 10)
    assert count_of(13, 10) == math.exp(-0.5 / 10)
    assert count_of(1, 5) == math.exp(-3 / 5)  # tolerance 20 % at E = 5: [4, 6]
    assert count_of(2, 1) == math.exp(-(2 - 1.2) / 1)  # lower bound floored at 1
    assert count_of(56, 40) == 1.0  # tolerance capped at 40 %: [24, 56]
    assert count_of(57, 40) == math.exp(-1 / 40)


def test_filter_penalty() -> None:
    base = ["Jon", "Jhon", "Johm"]
    _, clean_metrics = part_score("John", base, FLAT, FLAT, 3)
    _, one_metrics = part_score("John", [*base, "Joooohn"], FLAT, FLAT, 3)
    assert one_metrics["filter"] == {"filtered_count": 1, "penalty": 0.05}
    assert one_metrics["uniqueness"]["score"] == 3 / 4  # filtered variations still count in the denominator
    many = part_score("John", [*base, "JJJohn", "Joooo", "Johnnn", "AAAx", "xxXy"], FLAT, FLAT, 3)[1]
    assert many["filter"] == {"filtered_count": 5, "penalty": 0.2}
    assert clean_metrics["filter"]["penalty"] == 0.0


def test_uniqueness_and_duplicates() -> None:
    _, metrics = part_score("John", ["Jon", "Jon", "Jhon", "Jon"], FLAT, FLAT, 4)
    assert metrics["uniqueness"] == {"unique_count": 2, "total_count": 4, "score": 0.5}


def test_length_score() -> None:
    _, metrics = part_score("John", ["Jo", "Johnny"], FLAT, FLAT, 2)
    expected = ((2 / 4) * (1 - 2 / 4) + (4 / 6) * (1 - 2 / 4)) / 2
    assert metrics["length"]["score"] == expected


def test_distribution_quality_gaps_and_overshoot() -> None:
    miid = (("Light", 0.8, 1.0, True), ("Medium", 0.6, 0.79, True), ("Far", 0.3, 0.59, True))
    stable = (("Light", 0.8, 1.0, True), ("Medium", 0.6, 0.8, False), ("Far", 0.3, 0.6, False))
    targets = {"Light": 0.5, "Medium": 0.5}
    assert _distribution_quality([0.795, 0.9], miid, targets) == max(0.0, 0.5 * 1 + 0.5 * 0 - 0.1 * 0.5)
    assert _distribution_quality([0.795, 0.9], stable, targets) == 1.0
    # 1.0000000000000002 is above Light's upper bound in miid: unmatched.
    assert _distribution_quality([1.0000000000000002, 0.9], miid, {"Light": 1.0}) == 0.5 - 0.1 * 0.5
    # diminishing returns above the target count
    assert _distribution_quality([0.9, 0.9, 0.9, 0.7], miid, {"Light": 0.5, "Medium": 0.5}) == (
        0.5 * (1 - math.exp(-(3 / 2 - 1))) + 0.5 * (1 / 2)
    )
    # a level whose target count rounds to 0 does not count its matches
    assert _distribution_quality([0.9, 0.7, 0.7], miid, {"Light": 0.3, "Medium": 0.7}) == max(
        0.0, 0.7 * (2 / 2) - 0.1 * (1 / 3)
    )
    assert _distribution_quality([], miid, {"Light": 1.0}) == 0.0


def test_overshooting_name_is_unmatched_in_miid_only() -> None:
    overshoot = {s for s in range(10000) if phonetic_plan(s).full_miid > 1.0}
    name = next(f"Nm{i}" for i in range(100000) if string_seed(f"Nm{i}", "miid") in overshoot)
    miid = part_score(name, [name], {"Light": 1.0}, {"Light": 1.0}, 1)[1]
    stable = part_score(name, [name], {"Light": 1.0}, {"Light": 1.0}, 1, compat="stable")[1]
    assert miid["phonetic_scores"] == [1.0000000000000002]
    assert miid["similarity"]["phonetic"] == 0.0
    assert stable["similarity"]["phonetic"] == 1.0


def test_low_similarity_is_cut_to_a_tenth() -> None:
    _, metrics = part_score("John", ["Xavier"], {"Light": 1.0}, {"Light": 1.0}, 1)
    assert metrics["similarity"]["combined"] == 0.0
    _, metrics = part_score("John", ["Jon", "Xq", "Zv", "Wk", "Qp"], {"Light": 1.0}, {"Light": 1.0}, 5)
    raw = (metrics["similarity"]["phonetic"] + metrics["similarity"]["orthographic"]) / 2
    assert 0.0 < raw < 0.2
    assert metrics["similarity"]["combined"] == raw * 0.1


def test_part_score_weights() -> None:
    score, m = part_score("John", ["Jon", "Johm", "Jhon"], {"Light": 1.0}, {"Light": 1.0}, 3)
    expected = 0.6 * m["similarity"]["combined"] + 0.15 * m["count"]["score"] + 0.1 * m["uniqueness"]["score"]
    assert score == expected + 0.15 * m["length"]["score"]


def test_part_score_empty_and_errors() -> None:
    assert part_score("John", [], FLAT, FLAT, 5) == (0.0, {})
    with pytest.raises(InvalidInputError, match="expected count is 0"):
        part_score("John", ["Jon"], FLAT, FLAT, 0)
    with pytest.raises(InvalidInputError, match="empty"):
        part_score("", ["Jon"], FLAT, FLAT, 1)
    with pytest.raises(InvalidInputError, match=r"variations\[1\]"):
        part_score("John", ["Jon", ""], FLAT, FLAT, 2)
    assert part_score("John", ["Jon"], FLAT, FLAT, 0, compat="stable")[1]["count"]["score"] == math.exp(-1)
    assert part_score("John", ["Jon", ""], FLAT, FLAT, 2, compat="stable")[1]["uniqueness"]["unique_count"] == 2


@pytest.mark.parametrize(
    ("phon", "orth", "count"),
    [
        ({"Light": math.nan}, FLAT, 5),
        ({"Lite": 0.5}, FLAT, 5),
        (FLAT, {"Far": "0.2"}, 5),
        (FLAT, {"Far": 1.5}, 5),
        (FLAT, FLAT, math.nan),
        (FLAT, FLAT, -1),
        (FLAT, FLAT, "10"),
        ([("Light", 1.0)], FLAT, 5),
    ],
)
def test_bad_labels(phon: Any, orth: Any, count: Any) -> None:
    with pytest.raises(InvalidInputError):
        part_score("John", ["Jon"], phon, orth, count)
    with pytest.raises(InvalidInputError):
        variation_quality("John Smith", ["Jon Smith"], phon, orth, count)


def test_none_targets_mean_medium() -> None:
    assert part_score("John", ["Jon"], None, None, 1) == part_score("John", ["Jon"], FLAT, FLAT, 1)


# --- variation_quality branches ----------------------------------------------------------------------------------

NAME = "John Smith"
VARIATIONS = ["Jon Smith", "John Smyth", "Jhon Smith", "Johnny Smith", "J. Smith", "John Smit", "Jonh Smith", "Smith"]
DIST = {"Light": 0.2, "Medium": 0.6, "Far": 0.2}


@pytest.mark.parametrize("rule_based", [None, {}, {"rule_percentage": 40}])
def test_no_selected_rules_gives_eighty_percent_of_base(rule_based: Any) -> None:
    final, base, metrics = variation_quality(NAME, VARIATIONS, DIST, DIST, 8, rule_based)
    assert final == (1.0 - 0.2) * base + 0.2 * 0.0
    assert metrics["expected_base_count"] == 8 * (1.0 - 0.0)


def test_empty_selected_rules_gives_base() -> None:
    final, base, _ = variation_quality(NAME, VARIATIONS, DIST, DIST, 8, {"selected_rules": [], "rule_percentage": 30})
    assert final == base


def test_rules_blend_and_remove_compliant_variations() -> None:
    rules = {"selected_rules": ["delete_random_letter", "swap_adjacent_consonants"], "rule_percentage": 25}
    final, base, metrics = variation_quality(NAME, VARIATIONS, DIST, DIST, 8, rules)
    rc, _ = rule_compliance_score(NAME, VARIATIONS, rules["selected_rules"], 0.25)
    assert metrics["rule_compliance"]["score"] == rc
    assert final == (1.0 - 0.2) * base + 0.2 * rc
    assert metrics["rule_compliant_variations_count"] == 3  # Jon Smith, John Smit, Jonh Smith
    assert metrics["expected_base_count"] == 8 * (1.0 - 0.25)
    assert metrics["first_name"]["metrics"]["count"]["actual"] == 5


def test_all_rules_impossible_score_one() -> None:
    rules = {"selected_rules": ["name_parts_permutations"], "rule_percentage": 30}
    final, base, metrics = variation_quality("John", ["Jon", "Johm"], DIST, DIST, 2, rules)
    assert metrics["rule_compliance"]["score"] == 1.0
    assert final == (1.0 - 0.2) * base + 0.2 * 1.0


def test_all_rule_variations_with_zero_expected_base() -> None:
    rules = {"selected_rules": ["delete_random_letter"], "rule_percentage": 100}
    _, base, _ = variation_quality("John", ["Jon", "Jhn"], DIST, DIST, 2, rules)
    assert base == 1.0
    with pytest.raises(InvalidInputError):
        variation_quality("John", ["Jon", "Johm"], DIST, DIST, 2, rules)
    assert variation_quality("John", ["Jon", "Johm"], DIST, DIST, 2, rules, compat="stable")[1] < 1.0


def test_three_part_weight_quirk() -> None:
    first, last = name_part_weights("john paul smith", "miid")
    assert first + last < 0.9
    stable_first, stable_last = name_part_weights("john paul smith", "stable")
    assert stable_first + stable_last == 1.0
    _, base, metrics = variation_quality("john paul smith", ["jon paul smith"], FLAT, FLAT, 1)
    assert base == first * metrics["first_name"]["score"] + last * metrics["last_name"]["score"]


def test_one_part_name_keeps_the_unsplit_name() -> None:
    _, base, metrics = variation_quality("John ", ["Jon"], FLAT, FLAT, 1)
    assert "last_name" not in metrics
    assert base == metrics["first_name"]["score"] == part_score("John ", ["Jon"], FLAT, FLAT, 1)[0]
    assert part_score("John ", ["Jon"], FLAT, FLAT, 1) != part_score("John", ["Jon"], FLAT, FLAT, 1)


def test_missing_last_names_are_penalised() -> None:
    _, _, metrics = variation_quality(NAME, ["Jon Smith", "Jon", "", "Jhon Smyth"], FLAT, FLAT, 4)
    unpenalised = part_score("Smith", ["Smith", "Smyth"], FLAT, FLAT, 4)[0]
    assert metrics["last_name"]["score"] == unpenalised * (1.0 - 2 / 4)


def test_empty_name() -> None:
    with pytest.raises(InvalidInputError):
        variation_quality("", ["Jon"], FLAT, FLAT, 1)
    assert variation_quality("", [], FLAT, FLAT, 1)[:2] == (0.0, 0.0)
    with pytest.raises(InvalidInputError, match="empty"):
        variation_quality(" ", [], FLAT, FLAT, 1, compat="stable")


def test_expected_zero() -> None:
    with pytest.raises(InvalidInputError):
        variation_quality(NAME, VARIATIONS, DIST, DIST, 0)
    assert variation_quality(NAME, [], DIST, DIST, 0)[1] == 1.0
    _, base, _ = variation_quality(NAME, VARIATIONS, DIST, DIST, 0, compat="stable")
    assert 0.0 <= base < 1.0


def test_transliterated_scoring() -> None:
    final, base, metrics = variation_quality("Иван Петров", ["Ivan Petrov", "Iwan Petrow"], FLAT, FLAT, 2, None,
                                             transliterate=True)  # fmt: skip
    assert metrics["transliterated_name"] == "Ivan Petrov"
    assert (final, base) == variation_quality("Ivan Petrov", ["Ivan Petrov", "Iwan Petrow"], FLAT, FLAT, 2)[:2]


@pytest.mark.parametrize(
    "rule_based",
    [[1], {"selected_rules": "delete_random_letter"}, {"selected_rules": [1]}, {"rule_percentage": math.nan},
     {"rule_percentage": 120}],
)  # fmt: skip
def test_bad_rule_based(rule_based: Any) -> None:
    with pytest.raises(InvalidInputError):
        variation_quality(NAME, VARIATIONS, DIST, DIST, 8, rule_based)


def test_bad_name_and_variations() -> None:
    with pytest.raises(InvalidInputError, match="name"):
        variation_quality(None, VARIATIONS, DIST, DIST, 8)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match=r"variations\[0\]"):
        variation_quality(NAME, [None], DIST, DIST, 8)  # type: ignore[list-item]


# --- differential tests against the reference ---------------------------------------------------------------------

parts = st.sampled_from(["John", "Smith", "Anna", "Aaron", "Иван", "Li", "Bartholomew", "x" * 31 + "y"])
variation_text = st.text(alphabet="JohnSmitAaBrlwxyИв", min_size=1, max_size=12)
dists = st.sampled_from([DIST, FLAT, {"Light": 0.5, "Medium": 0.5}, {"Far": 1.0}, {"Light": 0.1, "Far": 0.9}])


@settings(max_examples=150, deadline=None)
@given(
    part=parts,
    variations=st.lists(st.one_of(variation_text, parts), max_size=12),
    phon=dists,
    orth=dists,
    expected=st.integers(1, 20),
)
def test_part_score_matches_reference(
    part: str, variations: list[str], phon: dict[str, float], orth: dict[str, float], expected: int
) -> None:
    assert part_score(part, variations, phon, orth, expected)[0] == ref_part(part, variations, phon, orth, expected)


@settings(max_examples=60, deadline=None)
@given(
    long=st.text(alphabet="ab", min_size=29, max_size=34),
    position=st.integers(0, 28),
)
def test_long_near_duplicates_match_reference(long: str, position: int) -> None:
    # Strings over 30 characters one edit apart can be near-duplicates: the fast path must not skip them.
    edited = long[:position] + ("b" if long[position] == "a" else "a") + long[position + 1 :]
    variations = [long, edited, long[::-1]]
    assert part_score(long, variations, FLAT, FLAT, 3)[0] == ref_part(long, variations, FLAT, FLAT, 3)


def ref_weights(name: str) -> tuple[float, float]:
    parts = name.split()
    if len(parts) < 2:
        return 1.0, 0.0
    rng = random.Random(hash(name) % 10000)
    total_length = sum(len(p) for p in parts)
    weights = [len(p) / total_length * rng.uniform(0.8, 1.2) for p in parts]
    total = 0.0
    for w in weights:
        total += w
    return weights[0] / total, weights[1] / total


def ref_variation_quality(
    name: str, variations: list[str], phon: dict[str, float], orth: dict[str, float], n: int, rule_based: Any
) -> tuple[float, float]:
    fraction, rule_score, compliant = 0.0, 0.0, set()
    has_rules = bool(rule_based) and "selected_rules" in rule_based
    if has_rules and rule_based["selected_rules"]:
        fraction = rule_based.get("rule_percentage", 30) / 100.0
        rule_score, metrics = rule_compliance_score(name, variations, rule_based["selected_rules"], fraction)
        compliant = set(metrics["rules_satisfied_by_variation"])
    others = [v for v in variations if v not in compliant]
    parts = name.split()
    first, last = (parts[0], parts[-1]) if len(parts) >= 2 else (name, None)
    firsts = [v.split()[0] for v in others if v.split()]
    lasts = [v.split()[-1] for v in others if len(v.split()) >= 2]
    e = n * (1.0 - fraction)
    first_score = ref_part(first, firsts, phon, orth, e)
    if last:
        last_score = ref_part(last, lasts, phon, orth, e)
        if len(lasts) < len(others):
            last_score *= 1.0 - (len(others) - len(lasts)) / len(others)
        w_first, w_last = ref_weights(name)
        base = w_first * first_score + w_last * last_score
    else:
        base = first_score
    if e == 0:
        base = 1.0
    if has_rules and not rule_based["selected_rules"]:
        return 1.0 * base + 0.0 * rule_score, base
    return (1.0 - 0.2) * base + 0.2 * rule_score, base


seed_names = st.sampled_from(["John Smith", "Anna", "William Lloyd Jones", "Mary-Ann O'Neil", "Иван Петров", "Bo Li"])
rule_labels = st.one_of(
    st.none(),
    st.just({}),
    st.builds(
        lambda rules, pct: {"selected_rules": rules, "rule_percentage": pct},
        st.lists(
            st.sampled_from(
                [
                    "delete_random_letter",
                    "swap_random_letter",
                    "name_parts_permutations",
                    "replace_random_vowel_with_random_vowel",
                    "remove_all_spaces",
                    "odd_rule",
                ]
            ),
            max_size=3,
        ),
        st.integers(10, 60),
    ),
)


@st.composite
def quality_cases(draw: st.DrawFn) -> tuple[str, list[str]]:
    name = draw(seed_names)
    edits = st.builds(
        lambda i, c, k: [name[:i] + name[i + 1 :], name[:i] + c + name[i:], name[:i] + c + name[i + 1 :], name][k],
        st.integers(0, len(name) - 1),
        st.sampled_from("aeiouxyz "),
        st.integers(0, 3),
    )
    return name, draw(st.lists(st.one_of(edits, variation_text), min_size=1, max_size=12))


@settings(max_examples=120, deadline=None)
@given(case=quality_cases(), phon=dists, orth=dists, rule_based=rule_labels)
def test_variation_quality_matches_reference(
    case: tuple[str, list[str]], phon: dict[str, float], orth: dict[str, float], rule_based: Any
) -> None:
    name, variations = case
    got = variation_quality(name, variations, phon, orth, len(variations), rule_based)
    assert got[:2] == ref_variation_quality(name, variations, phon, orth, len(variations), rule_based)


@settings(max_examples=120, deadline=None)
@given(case=quality_cases(), phon=dists, orth=dists, rule_based=rule_labels)
def test_stable_scores_stay_in_range(
    case: tuple[str, list[str]], phon: dict[str, float], orth: dict[str, float], rule_based: Any
) -> None:
    name, variations = case
    final, base, _ = variation_quality(name, variations, phon, orth, len(variations), rule_based, compat="stable")
    assert 0.0 <= final <= 1.0
    assert 0.0 <= base <= 1.0
