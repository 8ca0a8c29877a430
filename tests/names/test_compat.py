"""compat="miid" is bit-for-bit with the MIID validator (golden values made by its own code); compat="stable" is
deterministic, gap-free and never overshoots."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma.errors import InvalidInputError
from norma.names import (
    COMPATS,
    SIMILARITY_LEVELS,
    evaluate_rule,
    evaluate_rule_compliance,
    format_rules_for_query,
    phonetic_similarity,
    rule_compliance_score,
    variation_quality,
)
from norma.names._compat import check_compat, name_part_weights, string_seed

DATA = Path(__file__).parent / "data"
GOLDEN = DATA / "golden_miid.json"
FIXES = DATA / "golden_fixes.json"


@functools.cache  # the same code under the same PYTHONHASHSEED, asked for by two tests: one process
def run_python(code: str, hashseed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return done.stdout


def test_golden_values_from_the_validator_match_bit_for_bit() -> None:
    hashseed = json.loads(GOLDEN.read_text(encoding="utf-8"))["pythonhashseed"]
    env = {**os.environ, "PYTHONHASHSEED": hashseed}
    done = subprocess.run(
        [sys.executable, str(DATA / "check_golden.py"), str(GOLDEN)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["checked"] > 8000
    assert report["mismatch_count"] == 0, report["mismatches"][:5]


def _check_golden_module() -> Any:
    spec = importlib.util.spec_from_file_location("check_golden", DATA / "check_golden.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_golden_values_match_in_this_process_under_their_hash_seed() -> None:
    # hash_seed makes the validator's PYTHONHASHSEED an argument: the same 9,000 checks pass in this process,
    # whatever its own PYTHONHASHSEED.
    data = json.loads(GOLDEN.read_text(encoding="utf-8"))
    report = _check_golden_module().replay(data, hash_seed=int(data["pythonhashseed"]))
    assert report["checked"] > 8000
    assert report["mismatch_count"] == 0, report["mismatches"][:5]


def test_golden_values_of_the_fixed_cases() -> None:
    # duplicate_random_letter_as_double_letter in mixed case and the rule descriptions (README in data/).
    fixes = json.loads(FIXES.read_text(encoding="utf-8"))
    for rule, original, variation, expected in fixes["evaluators"]:
        assert evaluate_rule(rule, original, variation) is expected, (rule, original, variation)
    for rules, text in fixes["descriptions"]:
        assert format_rules_for_query(rules) == text
    for original, variations, rules, target, by_rule, ratio, score in fixes["compliance"]:
        got_by_rule, got_ratio = evaluate_rule_compliance(original, variations, rules)
        assert (got_by_rule, got_ratio.hex()) == (by_rule, ratio)
        assert rule_compliance_score(original, variations, rules, float.fromhex(target))[0].hex() == score
    for name, variations, phonetic, orthographic, count, rule_based, hash_seed, expected in fixes["quality"]:
        final, base, _ = variation_quality(
            name, variations, phonetic, orthographic, count, rule_based, hash_seed=hash_seed
        )
        assert [final.hex(), base.hex()] == expected, (name, hash_seed)
    assert {row[0] for row in fixes["quality"]} == {"austin cho duncan", "kathryn", "Victoria Foster"}


def test_golden_file_covers_the_tricky_cases() -> None:
    data = json.loads(GOLDEN.read_text(encoding="utf-8"))
    phonetic = [float.fromhex(row[2]) for row in data["similarity"]]
    assert any(value == 1.0000000000000002 for value in phonetic)
    assert any(row[-1][0] == "error" for row in data["quality"])
    assert any(row[-1][0] == "error" for row in data["part_score"])
    assert {rule for rule, *_ in data["evaluators"]} >= {"remove_title", "name_parts_permutations"}
    assert sum(1 for row in data["evaluators"] if row[3]) > 500


SCORE = (
    "from norma.names import variation_quality, phonetic_similarity;"
    "r = variation_quality('John Paul Smith', ['Jon Paul Smith', 'John Smyth', 'Jhon P. Smith', 'J. Smith'],"
    " {'Light': 0.2, 'Medium': 0.6, 'Far': 0.2}, {'Light': 0.3, 'Medium': 0.4, 'Far': 0.3}, 4,"
    " {'selected_rules': ['delete_random_letter'], 'rule_percentage': 30}, compat='%s');"
    "print(r[0].hex(), r[1].hex(),"
    " [phonetic_similarity(n, 'Jon', compat='%s').hex() for n in ('John', 'Anna', 'Bo', 'Li')])"
)


def test_stable_is_the_same_in_every_process() -> None:
    outputs = {run_python(SCORE % ("stable", "stable"), seed) for seed in ("0", "1", "12345")}
    assert len(outputs) == 1


def test_miid_depends_on_the_hash_seed_like_the_validator() -> None:
    outputs = {run_python(SCORE % ("miid", "miid"), seed) for seed in ("0", "1", "12345")}
    assert len(outputs) > 1


SEEDED = SCORE.replace("compat='%s')", "compat='%s', hash_seed=%s)")


def test_hash_seed_is_the_same_in_every_process_and_equals_that_pythonhashseed() -> None:
    for hash_seed in ("0", "12345"):
        given_seed = {run_python(SEEDED % ("miid", hash_seed, "miid", hash_seed), env) for env in ("0", "1", "777")}
        assert len(given_seed) == 1
        assert given_seed == {run_python(SCORE % ("miid", "miid"), hash_seed)}  # hash_seed=None under that seed
    assert run_python(SEEDED % ("miid", "0", "miid", "0"), "1") != run_python(SEEDED % ("miid", "1", "miid", "1"), "1")


def test_stable_seed_is_a_fixed_digest() -> None:
    assert string_seed("John", "stable") == string_seed("John", "stable")
    assert 0 <= string_seed("John", "stable") < 10000
    assert string_seed("\ud800", "stable") >= 0  # lone surrogates do not crash


@pytest.mark.parametrize("kind", ["phonetic", "orthographic"])
def test_level_tables(kind: str) -> None:
    miid = SIMILARITY_LEVELS["miid"][kind]
    stable = SIMILARITY_LEVELS["stable"][kind]
    assert list(miid) == list(stable) == ["Light", "Medium", "Far"]
    # miid has gaps between levels, stable does not
    assert miid["Medium"].upper < miid["Light"].lower
    assert stable["Medium"].upper == stable["Light"].lower
    assert stable["Far"].upper == stable["Medium"].lower


@given(st.floats(0.0, 1.0))
def test_stable_levels_are_gap_free(score: float) -> None:
    for kind, floor in (("phonetic", 0.3), ("orthographic", 0.2)):
        hits = [level for level, r in SIMILARITY_LEVELS["stable"][kind].items() if r.contains(score)]
        assert len(hits) == (1 if score >= floor else 0)
        miid_hits = [level for level, r in SIMILARITY_LEVELS["miid"][kind].items() if r.contains(score)]
        assert len(miid_hits) <= 1


def test_miid_gap_scores_match_nothing() -> None:
    for kind, gap in (("phonetic", 0.795), ("orthographic", 0.695)):
        assert not any(r.contains(gap) for r in SIMILARITY_LEVELS["miid"][kind].values())
        assert SIMILARITY_LEVELS["stable"][kind]["Medium"].contains(gap)


@given(st.text(alphabet="abcdefghijklmnop ", min_size=1, max_size=30))
def test_stable_never_overshoots(name: str) -> None:
    assert phonetic_similarity(name, name, compat="stable") == 1.0
    first, last = name_part_weights(name, "stable")
    assert first + last == 1.0


def test_stable_three_part_weights_use_first_and_last() -> None:
    first, last = name_part_weights("Anna Maria Bartholomew", "stable")
    assert last > first  # the longer last part weighs more (weights are length-based, +-20 %)
    final, base, _ = variation_quality(
        "Anna Maria Bartholomew", ["Anna Maria Bartholomew"], None, None, 1, compat="stable"
    )
    assert 0.0 <= final <= base <= 1.0


def test_compats_and_errors() -> None:
    assert COMPATS == ("miid", "stable")
    assert check_compat("stable") == "stable"
    with pytest.raises(InvalidInputError, match="compat"):
        check_compat("MIID")
    with pytest.raises(InvalidInputError, match="compat"):
        variation_quality("John", ["Jon"], None, None, 1, compat="v2")
