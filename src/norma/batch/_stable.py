"""Vectors that do not depend on which other texts share the batch, so every engine and shard gives the same bits.

The embedding model pads each batch to its longest text and onnxruntime picks its kernels by the batch's shape:
a text embedded alone, or beside longer texts, gets vectors that differ in the last bits. Texts of the same
token count embedded in batches of two or more get the same bits whatever the batch (checked on the model's
reference sentences), so :func:`embed_stable` embeds each group of equal token counts in pieces of 2 to 32 texts
(a lone text is embedded twice beside itself).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from norma.embeddings import BertEmbedder

__all__ = ["embed_stable"]

_PIECE = 32  # at most the embedder's own batch size (norma's default is 32), so it never splits a piece


def embed_stable(embedder: BertEmbedder, texts: Sequence[str]) -> np.ndarray:
    """``embedder.embed(texts)``, computed so that each row depends on its text only (see the module docstring)."""
    token_counts = embedder.token_counts(texts) if texts else []
    out = np.empty((len(texts), embedder.dim), dtype=np.float32)
    groups: dict[int, list[int]] = {}
    for index, count in enumerate(token_counts):
        groups.setdefault(count, []).append(index)
    for members in groups.values():
        for start in range(0, len(members), _PIECE):
            piece = members[start : start + _PIECE]
            batch = [texts[i] for i in piece]
            vectors = embedder.embed(batch if len(batch) > 1 else batch * 2)
            out[piece] = vectors[: len(piece)]
    return out
