"""The two scoring modes: ``compat="miid"`` (bit-for-bit with the MIID validator) and ``compat="stable"``.

Everything that differs between the modes lives here, so the formulas in the other modules read the same for
both. ``docs/design/010-names-compat.md`` puts the two side by side.

=====================  ==========================================  ==========================================
topic                  miid                                        stable
=====================  ==========================================  ==========================================
seed of a string       ``hash(s) % 10000``: with ``hash_seed=N``   ``blake2b(utf-8, 8 bytes) % 10000``, the
                       the hash of a CPython started with          same in every process and Python version
                       ``PYTHONHASHSEED=N`` (any process); with    (``hash_seed`` has no effect)
                       ``None`` this process's own ``hash()``
phonetic sum           matched weights added one by one in the     ``math.fsum`` of the matched weights,
                       sampled order (can give 1.0000000000000002)  clamped to 1.0
level ranges           inclusive, with gaps (0.79..0.80 matches    gap-free half-open ranges
                       nothing)
expected count 0       error (the validator raises)                count score 1.0 for no variations,
                                                                   exp(-n) for n variations
three-part names       first weight and *second* part's weight,    first and last part's weights,
                       normalised over all parts (sum < 1)         renormalised to sum to 1
=====================  ==========================================  ==========================================
"""

from __future__ import annotations

import hashlib
import math
import random
from functools import lru_cache
from typing import Literal, NamedTuple

from norma.errors import InvalidInputError
from norma.names._pyhash import seeded_hash

__all__ = [
    "COMPATS",
    "MAX_FULL_MIID",
    "SIMILARITY_LEVELS",
    "Compat",
    "LevelRange",
    "PhoneticPlan",
    "check_compat",
    "name_part_weights",
    "phonetic_plan",
    "string_seed",
]

Compat = Literal["miid", "stable"]
COMPATS: tuple[Compat, ...] = ("miid", "stable")

SEED_MODULUS = 10000
"""The validator seeds its generator with ``hash(s) % 10000``: only 10,000 distinct plans exist."""


def check_compat(compat: object) -> Compat:
    """Return ``compat`` if it names a mode; raise :class:`InvalidInputError` otherwise."""
    if compat == "miid":
        return "miid"
    if compat == "stable":
        return "stable"
    raise InvalidInputError(
        f"unknown compat mode {compat!r}", location="compat", hint="use compat='miid' or compat='stable'"
    )


class LevelRange(NamedTuple):
    """The scores a similarity level accepts: ``lower <= score <= upper`` (or ``< upper`` when not inclusive)."""

    lower: float
    upper: float
    upper_inclusive: bool = True

    def contains(self, score: float) -> bool:
        """True when ``score`` falls in this range."""
        if self.upper_inclusive:
            return self.lower <= score <= self.upper
        return self.lower <= score < self.upper


SIMILARITY_LEVELS: dict[str, dict[str, dict[str, LevelRange]]] = {
    "miid": {
        "phonetic": {
            "Light": LevelRange(0.80, 1.00),
            "Medium": LevelRange(0.60, 0.79),
            "Far": LevelRange(0.30, 0.59),
        },
        "orthographic": {
            "Light": LevelRange(0.70, 1.00),
            "Medium": LevelRange(0.50, 0.69),
            "Far": LevelRange(0.20, 0.49),
        },
    },
    "stable": {
        "phonetic": {
            "Light": LevelRange(0.80, 1.00),
            "Medium": LevelRange(0.60, 0.80, upper_inclusive=False),
            "Far": LevelRange(0.30, 0.60, upper_inclusive=False),
        },
        "orthographic": {
            "Light": LevelRange(0.70, 1.00),
            "Medium": LevelRange(0.50, 0.70, upper_inclusive=False),
            "Far": LevelRange(0.20, 0.50, upper_inclusive=False),
        },
    },
}
"""Level ranges per mode and kind (``"phonetic"``, ``"orthographic"``), levels in scoring order."""


def string_seed(text: str, compat: Compat, hash_seed: int | None = None) -> int:
    """The generator seed of a string: ``hash(text) % 10000`` (miid) or a blake2b digest ``% 10000`` (stable).

    In miid, ``hash_seed`` is the ``PYTHONHASHSEED`` whose ``hash()`` to use (:func:`norma.names.str_hash`,
    the same in every process); ``None`` uses this process's own ``hash()``.
    """
    if compat == "miid":
        return (hash(text) if hash_seed is None else seeded_hash(text, hash_seed)) % SEED_MODULUS
    return _stable_seed(text)


@lru_cache(maxsize=1 << 16)
def _stable_seed(text: str) -> int:
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % SEED_MODULUS


@lru_cache(maxsize=SEED_MODULUS)
def _draws(seed: int, count: int) -> tuple[float, ...]:
    """The first ``count`` ``random()`` values of ``random.Random(seed)`` (a pure function of the seed)."""
    rng = random.Random(seed)
    return tuple(rng.random() for _ in range(count))


MAX_FULL_MIID = 1.0000000000000002
"""The largest ``PhoneticPlan.full_miid`` over all 10,000 seeds (``tests/names/test_similarity.py`` checks every
seed): no phonetic score in compat="miid" exceeds it."""


class PhoneticPlan(NamedTuple):
    """What ``random.Random(seed)`` draws for the phonetic score: algorithm order and normalised weights."""

    order: tuple[int, int, int]
    """Indexes into ``("soundex", "metaphone", "nysiis")`` in sampled order."""
    weights: tuple[float, float, float]
    """Normalised weights, aligned with ``order``."""
    full_miid: float
    """The score when every algorithm matches, summed as the validator does (may be 1.0000000000000002)."""
    by_mask: tuple[float, ...]
    """The miid score for each set of matching algorithms: bit ``i`` of the index set when algorithm ``i``
    (soundex, metaphone, nysiis) matches; weights added in sampled order, skipping the others (as adding 0.0)."""
    by_mask_stable: tuple[float, ...]
    """The stable score per set: ``math.fsum`` of the matched weights, at most 1.0, exactly 1.0 when all match."""


def _randbelow(rng: random.Random, n: int) -> int:
    # random.Random._randbelow_with_getrandbits (CPython 3.11): k = n.bit_length(), redraw until below n.
    # For n == 1 this keeps drawing single bits until a 0 comes: it consumes a variable number of words.
    k = n.bit_length()
    r = rng.getrandbits(k)
    while r >= n:
        r = rng.getrandbits(k)
    return r


@lru_cache(maxsize=SEED_MODULUS)
def phonetic_plan(seed: int) -> PhoneticPlan:
    """The validator's draws for one seed, computed once.

    The validator calls ``random.seed(seed)``, ``random.sample(["soundex", "metaphone", "nysiis"], k=3)`` and then
    ``random.random()`` three times. ``sample`` with a population of 3 takes the pool branch: ``_randbelow(3)``,
    ``_randbelow(2)``, ``_randbelow(1)``. The draws are replayed here with ``getrandbits``/``random`` (whose
    outputs are fixed by the Mersenne Twister) so the plan does not depend on how a Python version implements
    ``sample``. ``sum()`` of floats is compensated from Python 3.12 on, so totals are added one by one, as 3.11 did.
    """
    rng = random.Random(seed)
    pool = [0, 1, 2]
    picked: list[int] = []
    for i in range(3):
        remaining = 3 - i
        j = _randbelow(rng, remaining)
        picked.append(pool[j])
        pool[j] = pool[remaining - 1]
    raw = [rng.random(), rng.random(), rng.random()]
    total = 0.0
    for weight in raw:
        total += weight
    normalised = (raw[0] / total, raw[1] / total, raw[2] / total)
    by_mask = []
    by_mask_stable = []
    for mask in range(8):
        score = 0.0
        for index, weight in zip(picked, normalised, strict=True):
            if mask >> index & 1:
                score += weight
        by_mask.append(score)
        matched = [w for index, w in zip(picked, normalised, strict=True) if mask >> index & 1]
        by_mask_stable.append(1.0 if mask == 7 else min(1.0, math.fsum(matched)))
    return PhoneticPlan(
        (picked[0], picked[1], picked[2]), normalised, by_mask[7], tuple(by_mask), tuple(by_mask_stable)
    )


def name_part_weights(name: str, compat: Compat, hash_seed: int | None = None) -> tuple[float, float]:
    """Weights of the first and last name scores for a seed ``name``.

    Each part's weight is ``len(part) / total_len * uniform(0.8, 1.2)`` drawn from ``Random(seed(name))``, then
    normalised over all parts. miid returns the weights of parts 0 and 1 (so for three parts the last-name score
    is weighted with the middle part's weight and the two add to less than 1); stable returns the first and last
    parts' weights renormalised to sum to 1. One part: ``(1.0, 0.0)``. ``hash_seed``: see :func:`string_seed`.
    """
    parts = name.split()
    if len(parts) < 2:
        return 1.0, 0.0
    draws = _draws(string_seed(name, compat, hash_seed), len(parts))
    total_length = 0
    for part in parts:
        total_length += len(part)
    # random.uniform(0.8, 1.2) is 0.8 + (1.2 - 0.8) * random()
    weights = [len(part) / total_length * (0.8 + (1.2 - 0.8) * draw) for part, draw in zip(parts, draws, strict=True)]
    if compat == "miid":
        total = 0.0
        for weight in weights:
            total += weight
        return weights[0] / total, weights[1] / total
    pair = math.fsum((weights[0], weights[-1]))
    first = weights[0] / pair
    return first, 1.0 - first
