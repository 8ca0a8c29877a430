"""A generator of name variations built to score well under the validator's formulas.

How it plays the score (docs/design/012-names-generator.md has the reasoning):

* **Rule-compliant variations** only feed the rule-compliance score (they are removed before the base score), so
  they are built constructively, one family per catalog rule (:mod:`norma.names._variants`), checked with the
  real evaluators, and picked so that every effective rule is satisfied at least once while their number matches
  ``max(1, int(n * p))``; one variation that satisfies several rules is preferred when slots are scarce.
* **The other variations** carry the base score. For each scored name part (first and last) a pool of a few
  hundred edits is scored with the real phonetic and orthographic similarity and binned into (phonetic level,
  orthographic level) cells; a small min-cost flow (:mod:`norma.names._plan`) picks how many of each cell to take
  so that every level gets exactly ``int(share * k)`` variations (a level past its target loses almost all its
  credit), preferring same-length edits (the length score).
* The number ``k`` of non-rule variations is chosen, in and around the count tolerance, on the estimated final
  score (level targets that floor well, a rule target that every rule can meet), and first and last parts are
  paired so that no pair is accidentally compliant with an effective rule.
* Some phonetic scores need Metaphone and NYSIIS to match and Soundex not: only a respelled first sound ("Karen"
  -> "Caren", "Nancy" -> "Knancy", "Frank" -> "Phrank") does that, so such respellings seed the pool and the walks.

Deterministic for a ``seed``. In ``compat="miid"`` the phonetic weights come from Python's ``hash()`` (as in the
validator): give ``hash_seed`` (the validator's ``PYTHONHASHSEED``) for output that is the same in every process;
with ``hash_seed=None`` it is reproducible across processes only under the same ``PYTHONHASHSEED``.
``compat="stable"`` does not depend on it.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Mapping, Sequence

from norma.errors import InvalidInputError
from norma.names._compat import Compat, check_compat, name_part_weights
from norma.names._compliance import evaluate_rule_compliance
from norma.names._evaluators import RULE_EVALUATORS, evaluate_rule
from norma.names._formulas import (
    COUNT_WEIGHT,
    count_range,
    count_score,
    expected_base_count,
    expected_compliant,
    final_weights,
    length_score,
    rule_fraction,
    rule_quantity,
)
from norma.names._labels import DEFAULT_RULE_PERCENTAGE, check_distribution
from norma.names._plan import Candidate, PartPlan, level_of, plan_part
from norma.names._pyhash import check_hash_seed
from norma.names._similarity import orthographic_similarity, phonetic_codes, phonetic_similarity
from norma.names._validate import check_fraction, check_str, check_str_list
from norma.names._variants import TRIPLE, alphabet_of, edit_pool, rule_pool, substitute_letter

__all__ = ["generate_variations"]

_MAX_RULE_VARIATIONS = 40
_COMPOSE = 6
_WALKS = 10
_STEPS_PER_LETTER = 10
_MAX_STEPS = 60
_PATTERNS = tuple(p for p in itertools.product((True, False), repeat=3) if any(p))


def generate_variations(
    name: str,
    count: int,
    phonetic_similarity: Mapping[str, float] | None = None,
    orthographic_similarity: Mapping[str, float] | None = None,
    rules: Sequence[str] = (),
    rule_percentage: float = DEFAULT_RULE_PERCENTAGE,
    seed: int | None = None,
    *,
    compat: str = "miid",
    hash_seed: int | None = None,
) -> list[str]:
    """Variations of ``name`` built to score well for these labels (the arguments of ``variation_quality``).

    Args:
        name: the seed name (one, two or three parts; non-Latin letters are edited within their own script).
        count: the requested number of variations (``variation_count``); the result may hold a few more or fewer
            when that scores higher (the validator's count tolerance, or a larger total that gives every rule its
            own variation).
        phonetic_similarity: the phonetic level distribution, e.g. ``{"Light": 0.2, "Medium": 0.6, "Far": 0.2}``
            (``None``: ``{"Medium": 1.0}``, the validator's default).
        orthographic_similarity: the orthographic level distribution.
        rules: the selected rules; about ``rule_percentage`` % of the variations follow them.
        rule_percentage: the share of rule-compliant variations, in percent (0-100).
        seed: makes the output reproducible (see the module docstring about ``compat="miid"``).
        compat: the scoring mode to aim at, ``"miid"`` or ``"stable"``.
        hash_seed: in compat="miid", the ``PYTHONHASHSEED`` of the validator to aim at (0..4294967295; ``None``:
            this process's own ``hash()``); see :func:`norma.names.variation_quality`.

    Raises:
        InvalidInputError: a non-string or empty name, a count that is not an integer >= 0, an unknown level, a
            NaN or out-of-range share or percentage, rules that are not a list of strings, a non-integer seed or
            hash seed.
    """
    name = check_str(name, "name")
    parts = name.split()
    if not parts:
        raise InvalidInputError("name is empty", location="name", hint="pass a seed name such as 'John Smith'")
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise InvalidInputError(f"count must be an integer >= 0, not {count!r}", location="count")
    pdist = check_distribution(phonetic_similarity, "phonetic_similarity")
    odist = check_distribution(orthographic_similarity, "orthographic_similarity")
    rule_list = check_str_list(rules, "rules")
    percentage = check_fraction(rule_percentage, "rule_percentage", upper=100.0)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise InvalidInputError(f"seed must be an integer or None, not {seed!r}", location="seed")
    mode = check_compat(compat)
    hashed = check_hash_seed(hash_seed)
    return _generate(name, count, pdist, odist, rule_list, percentage, random.Random(seed), mode, hashed)


def _generate(
    name: str,
    count: int,
    pdist: Mapping[str, float],
    odist: Mapping[str, float],
    rule_list: list[str],
    percentage: float,
    rng: random.Random,
    mode: Compat,
    hash_seed: int | None,
) -> list[str]:
    """:func:`generate_variations` on checked arguments."""
    parts = name.split()
    share = rule_fraction(percentage, bool(rule_list))
    effective = list(evaluate_rule_compliance(name, [name], rule_list, compat=mode)[0]) if rule_list else []
    checkable = [rule for rule in effective if rule in RULE_EVALUATORS]
    rule_variations, covered = _rule_variations(name, checkable, rng, mode)
    expected = expected_base_count(count, share)
    scored = [0] if len(parts) == 1 else [0, len(parts) - 1]
    weights = name_part_weights(name, mode, hash_seed)
    pools = [_score_pool(parts[i], rng, mode, hash_seed) for i in scored]

    base_weight, rule_weight = final_weights(True, bool(rule_list))
    best: tuple[float, int, list[PartPlan]] | None = None
    for k in sorted(_k_choices(expected), key=lambda k: abs(k - expected)):  # ties go to the nearest count
        plans = [plan_part(pool, k, pdist, odist) for pool in pools]
        counted = COUNT_WEIGHT * count_score(sum(len(p.chosen) for p in plans) // len(plans), expected)
        base = 1.0 if expected == 0 else sum(w * (p.value + counted) for w, p in zip(weights, plans, strict=False))
        for c in range(len(rule_variations) + 1):
            # Without rules the final score is the base score, and no variation should follow a rule.
            rule_score = _rule_score(c, k + c, share, covered, len(effective))
            total = base_weight * base + rule_weight * rule_score if rule_list else base - c
            if best is None or total > best[0] + 1e-12:
                best = (total, c, plans)
    assert best is not None
    _, c, plans = best
    chosen_rules = rule_variations[:c]
    others = _assemble(name, plans, checkable, set(chosen_rules), mode) if expected > 0 else []
    variations = [text for text in dict.fromkeys(others) if text != name and text not in chosen_rules] + chosen_rules
    rng.shuffle(variations)
    return variations


def _score_pool(part: str, rng: random.Random, compat: Compat, hash_seed: int | None) -> list[Candidate]:
    """Score the edit pool of ``part``, grown by walks towards every pattern of matching phonetic codes."""
    texts = edit_pool(part, rng)
    rng.shuffle(texts)
    pool = {text: _candidate(part, text, compat, hash_seed) for text in texts}
    _walk_patterns(part, pool, rng, compat, hash_seed)
    return list(pool.values())


def _candidate(part: str, text: str, compat: Compat, hash_seed: int | None) -> Candidate:
    return Candidate(
        text,
        level_of(phonetic_similarity(part, text, compat=compat, hash_seed=hash_seed), "phonetic", compat),
        level_of(orthographic_similarity(part, text, compat=compat), "orthographic", compat),
        length_score(len(text), len(part)),
    )


def _mutate(part: str, text: str, rng: random.Random, alphabet: str) -> str:
    """One edit of a letter of ``text``, mostly not the first one and mostly one still equal to ``part``'s (so the
    walk moves away from ``part``); positions are drawn by rejection, which is cheaper than listing them."""
    n = len(text)
    i = -1
    for _try in range(6):
        i = int(rng.random() * n)
        if not text[i].isalpha() or (i == 0 and n > 1 and rng.random() < 0.8):
            continue
        if i < len(part) and text[i] != part[i] and rng.random() < 0.8:
            continue
        break
    if i < 0 or not text[i].isalpha():
        return text
    roll = rng.random()
    if roll < 0.08 and n > 2:
        return text[:i] + text[i + 1 :]
    if roll < 0.16:
        return text[: i + 1] + substitute_letter(text[i].lower(), rng, alphabet, 0.5) + text[i + 1 :]
    if roll < 0.22:  # a doubled letter: every phonetic code reads a double as one letter
        return text[: i + 1] + text[i].lower() + text[i + 1 :]
    if roll < 0.26 and i < n - 1 and text[i + 1].isalpha():
        return text[:i] + text[i + 1] + text[i] + text[i + 2 :]
    return text[:i] + substitute_letter(text[i], rng, alphabet, 0.7) + text[i + 1 :]


def _walk_patterns(
    part: str, pool: dict[str, Candidate], rng: random.Random, compat: Compat, hash_seed: int | None
) -> None:
    """For each non-empty set of phonetic codes (soundex, metaphone, NYSIIS) to keep, walk away from ``part`` by
    edits that keep those codes equal, and keep every string whose other codes all differ: these are the strings
    that hit each partial phonetic score, at growing orthographic distances."""
    reference = phonetic_codes(part)
    alphabet = alphabet_of(part)
    steps = min(_STEPS_PER_LETTER * len(part), _MAX_STEPS)
    patterns: dict[tuple[bool, ...], list[str]] = {}
    for text in pool:
        codes = phonetic_codes(text)
        patterns.setdefault(tuple(codes[i] == reference[i] for i in range(3)), []).append(text)
    for keep in _PATTERNS:
        kept = [i for i in range(3) if keep[i]]
        dropped = [i for i in range(3) if not keep[i]]
        # Half the walks start from strings that already have this pattern (a respelled first sound is the only
        # way to some patterns), the others from the part itself.
        starts = patterns.get(keep, [])[: _WALKS // 2]
        for walk in range(_WALKS):
            current = starts[(walk // 2) % len(starts)] if walk % 2 and starts else part
            for _step in range(steps):
                text = _mutate(part, current, rng, alphabet)
                if text == current or not text or TRIPLE.search(text):
                    continue
                codes = phonetic_codes(text)
                if any(codes[i] != reference[i] for i in kept):
                    continue
                current = text
                if text not in pool and all(codes[i] != reference[i] for i in dropped):
                    pool[text] = _candidate(part, text, compat, hash_seed)


def _k_choices(expected: float) -> list[int]:
    """Numbers of non-rule variations worth trying: the count tolerance, three steps below it and up to about
    ``expected`` steps above it.

    A step outside costs some count score (``exp(-d / E)``) and can buy more: level targets that floor well, or a
    larger total, which raises the rule target ``int(n * p)`` until the rules can each get their own variation
    (three rules that no single variation follows together score 1.0 only with three rule variations, so with
    ``p = 0.29`` the total has to reach 11). The choice is made on the estimated final score.
    """
    if expected <= 0:
        return [0]
    low, high = count_range(expected)
    return list(range(max(1, math.ceil(low) - 3), math.floor(high) + 2 + max(3, int(expected))))


def _rule_score(c: int, n: int, share: float, covered: Sequence[int], n_effective: int) -> float:
    """The rule-compliance score of ``c`` rule variations (picked in order) among ``n`` variations."""
    if n_effective == 0:
        return 1.0
    if c == 0:
        return 0.0
    return rule_quantity(c, expected_compliant(n, share)) * covered[c] / n_effective


def _rule_variations(name: str, rules: Sequence[str], rng: random.Random, compat: str) -> tuple[list[str], list[int]]:
    """Compliant variations in the order to take them (cover every rule first) and the rules covered after each."""
    mode = check_compat(compat)
    coverage: dict[str, frozenset[str]] = {}
    natural: list[str] = []
    by_rule: dict[str, list[str]] = {}
    for rule in rules:
        texts = rule_pool(name, rule)
        rng.shuffle(texts)
        natural.extend(texts)
        by_rule[rule] = texts
    if len(rules) > 1:
        # One variation that follows several rules (a vowel and a consonant replaced: each rule allows one other
        # change) fills one slot and still counts for each rule: try the rules' constructions one after another.
        coverage.update(_compositions(name, rules, by_rule, rng, mode))
    # Case variants come next: several evaluators compare lower-cased strings, so "mathew rogers" follows a rule
    # that "Mathew Rogers" follows, and counts as another compliant variation when the rule allows few.
    cased = [variant for text in natural for variant in (text.lower(), text.upper(), text.title())]
    # Last resort, for rules that compare ``split()`` parts (a reordering): the same parts with other spacing.
    spaced = [variant for text in natural for variant in (text.replace(" ", "  "), f"{text} ", f" {text}")]
    for text in natural + cased + spaced:
        if text not in coverage and text != name:
            coverage[text] = frozenset(r for r in rules if evaluate_rule(r, name, text, compat=mode))
    rank = {text: index for index, text in enumerate(coverage)}
    pending = {text: cov for text, cov in coverage.items() if cov}
    order: list[str] = []
    covered = [0]
    done: set[str] = set()
    while pending and len(order) < _MAX_RULE_VARIATIONS:
        text = max(pending, key=lambda t: (len(pending[t] - done), len(pending[t]), -rank[t]))
        done |= pending.pop(text)
        order.append(text)
        covered.append(len(done))
    return order, covered


def _compositions(
    name: str, rules: Sequence[str], by_rule: Mapping[str, list[str]], rng: random.Random, compat: Compat
) -> dict[str, frozenset[str]]:
    """Variations that follow at least two of ``rules``, built by applying two or three rules' constructions in
    turn (a few outputs of each), with the rules each follows."""
    found: dict[str, frozenset[str]] = {}
    frontier = [(text, frozenset([rule])) for rule in rules for text in by_rule[rule][:_COMPOSE]]
    for _depth in range(2):
        grown: list[tuple[str, frozenset[str]]] = []
        for text, applied in frontier:
            for rule in rules:
                if rule in applied:
                    continue
                seconds = rule_pool(text, rule)
                rng.shuffle(seconds)
                for second in seconds[:_COMPOSE]:
                    if second in found or second == name:
                        continue
                    cov = frozenset(r for r in rules if evaluate_rule(r, name, second, compat=compat))
                    if len(cov) >= 2:
                        found[second] = cov
                        grown.append((second, applied | {rule}))
        frontier = grown[: _COMPOSE * len(rules)]
    return found


def _compliant(name: str, variation: str, rules: Sequence[str], compat: str) -> bool:
    mode = check_compat(compat)
    return any(evaluate_rule(rule, name, variation, compat=mode) for rule in rules)


def _assemble(name: str, plans: Sequence[PartPlan], rules: Sequence[str], taken: set[str], compat: str) -> list[str]:
    """Join the chosen parts into whole variations that follow no effective rule (they would leave the base)."""
    parts = name.split()

    def ok(text: str) -> bool:
        return text != name and text not in taken and not _compliant(name, text, rules, compat)

    if len(plans) == 1:
        out = []
        for cand, cell in zip(plans[0].chosen, plans[0].cells, strict=True):
            text = cand.text
            if not ok(text):
                spare = next((s for s in plans[0].spares.get(cell, []) if ok(s.text) and s.text not in out), None)
                text = spare.text if spare else text
            out.append(text)
        return out
    middle = " ".join(parts[1:-1])
    firsts = [c.text for c in plans[0].chosen]
    lasts = [c.text for c in plans[1].chosen]
    size = min(len(firsts), len(lasts))
    firsts, lasts = firsts[:size], lasts[:size]

    def join(first: str, last: str) -> str:
        return f"{first} {middle} {last}" if middle else f"{first} {last}"

    match = _match(firsts, lasts, lambda f, last: ok(join(f, last)))
    for i in range(size):
        if match[i] is not None:
            continue
        free = [j for j in range(size) if j not in match]
        cell = plans[0].cells[i]
        replacement = next(
            (
                (s.text, j)
                for s in plans[0].spares.get(cell, [])
                if s.text not in firsts
                for j in free
                if ok(join(s.text, lasts[j]))
            ),
            None,
        )
        if replacement is not None:
            firsts[i], match[i] = replacement
        else:
            match[i] = free[0]
    return [join(firsts[i], lasts[j]) for i, j in enumerate(match) if j is not None]


def _match(left: Sequence[str], right: Sequence[str], allowed: Callable[[str, str], bool]) -> list[int | None]:
    """A maximum matching of ``left`` to ``right`` under ``allowed(l, r)`` (Kuhn's augmenting paths)."""
    edges = [[j for j, r in enumerate(right) if allowed(l_text, r)] for l_text in left]
    owner: list[int | None] = [None] * len(right)

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j in seen:
                continue
            seen.add(j)
            holder = owner[j]
            if holder is None or augment(holder, seen):
                owner[j] = i
                return True
        return False

    for i in range(len(left)):
        augment(i, set())
    match: list[int | None] = [None] * len(left)
    for j, holder in enumerate(owner):
        if holder is not None:
            match[holder] = j
    return match
