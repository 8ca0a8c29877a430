"""``str_hash`` is CPython's ``hash(str)`` under a given ``PYTHONHASHSEED``, whatever the current process's seed."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.names import MAX_HASH_SEED, phonetic_similarity, str_hash
from norma.names._compat import name_part_weights, string_seed
from norma.names._pyhash import hash_key

SEEDS = (0, 1, 2, 42, 20261122, 2**31, MAX_HASH_SEED)


def _strings() -> list[str]:
    rng = random.Random(22)
    fixed = [
        "",
        "a",
        "John",
        "John Smith",
        "abcdefg",  # 7 bytes: tail only
        "abcdefgh",  # 8 bytes: one block, empty tail
        "abcdefghi",
        "x" * 255,
        "x" * 256,  # the length byte wraps
        "é",
        "José María",
        "Straße Groß",
        "\xff\x00\x7f",
        "Иван Петров",
        "李 小龙",
        "İstanbul Ağa",
        "\u0100",
        "\uffff",
        "😀",
        "a😀b",
        "Ж😀é",
        "\ud800",  # a lone surrogate is a BMP code point
        "\ud83d\ude00",  # two lone surrogates, not the pair's character
        "\U0010ffff",
        "A\x00B",
    ]
    alphabets = ["abcXYZ -.", "abcé\xe0\xff", "abЖ李\u0101", "a李😀\U00010000"]
    generated = [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40))) for alphabet in alphabets for _ in range(60)
    ]
    return fixed + generated


STRINGS = _strings()
# ascii() and literal_eval keep two lone surrogates as two code points (JSON would join them into one character).
PRINT_HASHES = "import ast, json, sys; print(json.dumps([hash(s) for s in ast.literal_eval(sys.stdin.read())]))"


def _interpreter_hashes(seed: int) -> list[int]:
    """``hash(s)`` of every string in an interpreter started with ``PYTHONHASHSEED=seed`` (one process)."""
    env = {**os.environ, "PYTHONHASHSEED": str(seed)}
    done = subprocess.run(
        [sys.executable, "-c", PRINT_HASHES],
        input=ascii(STRINGS),
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    hashes: list[int] = json.loads(done.stdout)
    return hashes


@pytest.mark.parametrize("seed", SEEDS)
def test_str_hash_is_the_interpreter_hash_under_that_seed(seed: int) -> None:
    expected = _interpreter_hashes(seed)
    got = [str_hash(text, seed) for text in STRINGS]
    mismatches = [(text, e, g) for text, e, g in zip(STRINGS, expected, got, strict=True) if e != g]
    assert not mismatches, mismatches[:5]


def test_the_strings_cover_every_buffer_width() -> None:
    widths = {1 if max(map(ord, s)) < 256 else 2 if max(map(ord, s)) < 65536 else 4 for s in STRINGS if s}
    assert widths == {1, 2, 4}
    assert "" in STRINGS
    assert any(not s.isascii() and max(map(ord, s)) < 256 for s in STRINGS)


def test_str_hash_is_the_own_hash_when_this_process_has_a_numeric_seed() -> None:
    own = os.environ.get("PYTHONHASHSEED", "")
    if not own.isdigit():
        pytest.skip("this process's PYTHONHASHSEED is random")
    assert [str_hash(text, int(own)) for text in STRINGS] == [hash(text) for text in STRINGS]


def test_seed_zero_is_an_all_zero_key_and_others_follow_the_lcg() -> None:
    assert hash_key(0) == (0, 0)
    x = 1
    secret = []
    for _ in range(16):
        x = (x * 214013 + 2531011) % 2**32
        secret.append((x >> 16) & 0xFF)
    assert hash_key(1) == (int.from_bytes(bytes(secret[:8]), "little"), int.from_bytes(bytes(secret[8:]), "little"))


def test_empty_string_hashes_to_zero_and_results_are_signed_64_bit() -> None:
    assert all(str_hash("", seed) == 0 for seed in SEEDS)
    values = [str_hash(text, 7) for text in STRINGS]
    assert all(-(2**63) <= v < 2**63 and v != -1 for v in values)
    assert any(v < 0 for v in values)
    assert any(v > 0 for v in values)


@pytest.mark.parametrize("bad", [-1, MAX_HASH_SEED + 1, 1.0, "0", True, None])
def test_bad_seeds_raise(bad: object) -> None:
    with pytest.raises(InvalidInputError, match="hash_seed"):
        str_hash("John", bad)  # type: ignore[arg-type]
    if bad is not None:
        with pytest.raises(InvalidInputError, match="hash_seed"):
            phonetic_similarity("John", "Jon", hash_seed=bad)  # type: ignore[arg-type]


def test_non_string_text_raises() -> None:
    with pytest.raises(InvalidInputError, match="text"):
        str_hash(b"John", 0)  # type: ignore[arg-type]


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=20), seed=st.integers(0, MAX_HASH_SEED))
def test_seeds_of_strings_follow_the_hash(text: str, seed: int) -> None:
    assert string_seed(text, "miid", seed) == str_hash(text, seed) % 10000
    assert string_seed(text, "stable", seed) == string_seed(text, "stable")  # no effect in stable
    assert name_part_weights(text, "stable", seed) == name_part_weights(text, "stable")


def test_none_is_this_process_hash() -> None:
    assert string_seed("John Smith", "miid", None) == hash("John Smith") % 10000
    assert phonetic_similarity("John", "Jon", hash_seed=None) == phonetic_similarity("John", "Jon")
