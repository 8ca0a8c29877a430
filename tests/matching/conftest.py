"""Fixtures for the matcher tests: a tiny deterministic embedder (a test double of the Embedder protocol, for
arithmetic fixtures whose expected values are computed by hand) and rule factories."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

AXES = ("refund", "card", "hello", "weather", "delivery")


class AxisEmbedder:
    """Maps a text to a fixed vector: one axis per keyword of AXES it contains (+ a 6th "other" axis), normalised.

    A text with exactly one keyword gets that axis' unit vector, so cosines are 0 or 1 or simple fractions that
    can be computed by hand (two keywords: 1/sqrt(2)).
    """

    model_id = "test/axis"
    dim = len(AXES) + 1

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            words = text.lower()
            for j, axis in enumerate(AXES):
                if axis in words:
                    out[i, j] = 1.0
            if not out[i].any():
                out[i, -1] = 1.0
        return out / np.linalg.norm(out, axis=1, keepdims=True)


@pytest.fixture
def axis() -> AxisEmbedder:
    return AxisEmbedder()
