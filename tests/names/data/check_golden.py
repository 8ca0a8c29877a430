"""Replay ``golden_miid.json`` against norma.names (compat="miid") and print the mismatches as JSON.

Run by ``tests/names/test_compat.py`` in a subprocess whose ``PYTHONHASHSEED`` is the one the golden values were
made with (``hash_seed=None``: the process's own ``hash()``), and in-process through :func:`replay` with
``hash_seed`` set to that value (norma computes the hash itself). Prints ``{"checked": N, "mismatches": [...]}``;
every float is compared bit for bit (``float.hex``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from norma.errors import InvalidInputError
from norma.names import (
    evaluate_rule,
    evaluate_rule_compliance,
    orthographic_similarity,
    part_score,
    phonetic_similarity,
    rule_compliance_score,
    variation_quality,
)
from norma.names._compat import name_part_weights


def replay(data: dict[str, Any], hash_seed: int | None = None) -> dict[str, Any]:
    """Check every case of ``data``; ``{"checked", "mismatches" (the first 50), "mismatch_count"}``."""
    seed = hash_seed
    bad: list[Any] = []
    checked = 0
    for a, b, phon, orth in data["similarity"]:
        checked += 2
        if phonetic_similarity(a, b, hash_seed=seed).hex() != phon:
            bad.append(["phonetic", a, b, phon, phonetic_similarity(a, b, hash_seed=seed).hex()])
        if orthographic_similarity(a, b).hex() != orth:
            bad.append(["orthographic", a, b, orth, orthographic_similarity(a, b).hex()])
    for rule, original, variation, expected in data["evaluators"]:
        checked += 1
        if evaluate_rule(rule, original, variation) is not expected:
            bad.append(["evaluator", rule, original, variation, expected])
    for original, variations, rules, target, by_rule, ratio, score in data["compliance"]:
        checked += 2
        got_by_rule, got_ratio = evaluate_rule_compliance(original, variations, rules)
        if got_by_rule != by_rule or got_ratio.hex() != ratio:
            bad.append(["compliance", original, variations, rules, by_rule, got_by_rule])
        got_score, _ = rule_compliance_score(original, variations, rules, float.fromhex(target))
        if got_score.hex() != score:
            bad.append(["rule_score", original, variations, rules, target, score, got_score.hex()])
    for name, first, last in data["part_weights"]:
        checked += 1
        got = name_part_weights(name, "miid", seed)
        if [got[0].hex(), got[1].hex()] != [first, last]:
            bad.append(["part_weights", name, [first, last], [got[0].hex(), got[1].hex()]])
    for part, variations, phonetic, orthographic, expected, result in data["part_score"]:
        checked += 1
        try:
            got_result = [part_score(part, variations, phonetic, orthographic, expected, hash_seed=seed)[0].hex()]
        except InvalidInputError:
            got_result = ["error"]
        if got_result != result[:1]:
            bad.append(["part_score", part, variations, phonetic, orthographic, expected, result, got_result])
    for name, variations, phonetic, orthographic, expected, rule_based, result in data["quality"]:
        checked += 1
        try:
            final, base, _ = variation_quality(
                name, variations, phonetic, orthographic, expected, rule_based, hash_seed=seed
            )
            got_quality = [final.hex(), base.hex()]
        except InvalidInputError:
            got_quality = ["error"]
        if got_quality != (["error"] if result[0] == "error" else result):
            bad.append(["quality", name, variations, phonetic, orthographic, expected, rule_based, result, got_quality])
    return {"checked": checked, "mismatches": bad[:50], "mismatch_count": len(bad)}


def main(path: str) -> None:
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    if os.environ.get("PYTHONHASHSEED") != data["pythonhashseed"]:
        raise SystemExit(f"run with PYTHONHASHSEED={data['pythonhashseed']}")
    json.dump(replay(data), sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
