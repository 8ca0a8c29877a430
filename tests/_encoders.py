"""The int8 encoder as norma ran it before issue #58 (encoder version 1, model id ``...#int8``), for the tests that
show its vectors are never read as today's: the same int8 model, fed padded batches of up to 32 texts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from norma.embeddings import DEFAULT_MODEL_ID, BertEmbedder

OLD_INT8_ID = f"{DEFAULT_MODEL_ID}#int8"
"""The id the batch-dependent int8 encoder (version 1) filed its vectors under."""


def batched_int8(int8: BertEmbedder, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
    """``texts`` embedded as int8 version 1 embedded them: length-sorted padded batches through the int8 session of
    ``int8`` (a :class:`BertEmbedder` with ``quantize=True``), each vector moved by its batch companions."""
    assert int8.quantized
    out = np.empty((len(texts), int8.dim), dtype=np.float32)
    for batch in int8._tokens.batches(list(texts), batch_size):
        out[batch.positions] = int8._session.run(batch.input_ids, batch.attention_mask)
    return out
