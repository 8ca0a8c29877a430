"""The one interface every embedding backend has."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["Embedder"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length vectors.

    Implementations are safe to call from several threads at once, and give the same vector for the same text
    whatever else is in the call (batching never changes a result beyond float rounding).
    """

    @property
    def model_id(self) -> str:
        """Names the model and any variant (``"sentence-transformers/all-MiniLM-L6-v2"``, ``"...#int8"``).

        Two embedders with the same ``model_id`` give the same vectors, so caches key on it.
        """
        ...

    @property
    def dim(self) -> int:
        """Length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A float32 array of shape ``(len(texts), dim)``, each row L2-normalised, in the order of ``texts``."""
        ...
