"""Probe similarities: the one measurement the matcher's rulebook gate and adapting's held-out examples both take.
Hand-computed on unit vectors along axes; no model."""

from __future__ import annotations

import math
import random
import zlib

import numpy as np
import pytest

from norma.embeddings import MAX_PROBES, pick_probes, probe_similarities, text_key
from norma.errors import InvalidInputError

X, Y, Z = np.eye(3, dtype=np.float32)
DIAGONAL = (X + Y) / np.float32(math.sqrt(2))


def test_a_probe_is_measured_against_every_other_text_never_its_own() -> None:
    # rows: "a" along x twice (one text written twice), "b" on the diagonal, "c" along z, a free row along x
    matrix = np.stack([X, X, DIAGONAL, Z, X])
    texts = ["a", "a", "b", "c", None]
    found = probe_similarities(matrix, texts, [0, 2, 3])
    # "a": both of its rows left out, the free row never compared: "b" at 1/sqrt(2); "b": "a" at 1/sqrt(2);
    # "c": nothing else shares an axis with it: 0 (the best of the others, not "no value")
    assert found.dtype == np.float64
    assert found.tolist() == pytest.approx([1 / math.sqrt(2), 1 / math.sqrt(2), 0.0], abs=1e-7)
    alone = probe_similarities(np.stack([X, X]), ["a", "a"], [1])
    assert alone.tolist() == [0.0]  # no other text at all


def test_the_blocks_do_not_change_the_result(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((300, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    texts: list[str | None] = [f"t{i % 290}" for i in range(300)]  # ten texts written twice
    texts[7] = None
    probes = list(range(0, 300, 3))
    whole = probe_similarities(matrix, texts, probes)
    monkeypatch.setattr("norma.embeddings._probes._PROBE_BLOCK", 7)
    monkeypatch.setattr("norma.embeddings._probes._ROW_BLOCK", 11)
    assert np.array_equal(probe_similarities(matrix, texts, probes), whole)
    # and what it is: the best dot product with a row of another text
    scores = matrix @ matrix.T
    expected = [max(float(scores[p, r]) for r in range(300) if texts[r] not in (None, texts[p])) for p in probes]
    assert whole.tolist() == pytest.approx(expected, abs=1e-6)


def test_texts_and_rows_must_agree() -> None:
    with pytest.raises(InvalidInputError, match="2 texts for 3 rows"):
        probe_similarities(np.stack([X, Y, Z]), ["a", "b"], [0])


def test_probes_are_the_smallest_crc32_keys_whatever_the_order() -> None:
    texts = [f"example {k}" for k in range(50)]
    picked = pick_probes(((t, t) for t in texts), 10)
    assert picked == sorted(texts, key=lambda t: zlib.crc32(t.encode("utf-8")))[:10]
    shuffled = list(texts)
    random.Random(3).shuffle(shuffled)
    assert pick_probes(((t, t) for t in shuffled), 10) == picked
    assert len(texts) < MAX_PROBES
    assert pick_probes((t, t) for t in texts) == sorted(texts, key=text_key)  # fewer than MAX_PROBES: every one
    assert text_key("é") == zlib.crc32("é".encode())
    # any item, keyed by a text: (slot, text number) pairs keyed by rule id + text, as the matcher keys them; items
    # of one key text come in the order given (and are never compared: a dict is not orderable)
    keyed = [("r1\x00a", {"slot": 0}), ("r1\x00b", {"slot": 1}), ("r2\x00a", {"slot": 2}), ("r1\x00a", {"slot": 3})]
    expected = [item for _, item in sorted(keyed, key=lambda pair: (text_key(pair[0]), pair[0]))]
    assert pick_probes(keyed, 4) == expected
    assert [i["slot"] for i in expected if i["slot"] in (0, 3)] == [0, 3]
