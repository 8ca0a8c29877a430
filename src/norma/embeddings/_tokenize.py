"""Word-piece tokenisation and length-sorted batching, exactly as sentence-transformers feeds a BERT model.

The truncation rule (sentence-transformers' ``Transformer.tokenize``): each text is stripped of leading and
trailing whitespace, tokenised with the model's ``tokenizer.json`` and truncated to ``max_seq_length`` tokens
*including* ``[CLS]`` and ``[SEP]`` (256 for all-MiniLM-L6-v2: the first 254 word pieces of the text, then
``[SEP]``); everything after is ignored. The tokenizer's own padding and truncation settings in ``tokenizer.json``
(fixed padding to 128 for this model) are replaced: no padding, and padding per batch only to the longest text
in that batch, which does not change the result because padded positions are masked out of attention and pooling.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from norma.errors import BackendError, InvalidInputError

__all__ = ["Batch", "WordPieces", "check_texts"]


@dataclass(frozen=True)
class Batch:
    """Some texts of one call, padded to the longest of them, with their positions in the call."""

    positions: np.ndarray
    input_ids: np.ndarray
    attention_mask: np.ndarray


def check_texts(texts: Sequence[str]) -> list[str]:
    """``texts`` as a list of strings, or an :class:`InvalidInputError` naming the first bad item."""
    if isinstance(texts, str | bytes):
        raise InvalidInputError(
            "embed() takes a sequence of texts, not a single string", hint="wrap the text in a list: embed([text])"
        )
    items = list(texts)
    for index, text in enumerate(items):
        if not isinstance(text, str):
            raise InvalidInputError(
                f"text {index} is a {type(text).__name__}, not a str", location=f"texts[{index}]", hint="pass strings"
            )
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidInputError(
                    f"text {index} is not valid Unicode (it holds a lone surrogate)", location=f"texts[{index}]"
                ) from None
    return items


class WordPieces:
    """A fast (Rust) word-piece tokenizer set up for one model's window; safe to share between threads."""

    def __init__(self, tokenizer_path: Path, max_seq_length: int) -> None:
        from tokenizers import Tokenizer

        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:  # tokenizers raises a bare Exception for malformed files
            raise BackendError(
                f"cannot load the tokenizer: {exc}", source=str(tokenizer_path), hint="restore or reinstall the model"
            ) from exc
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_seq_length, strategy="longest_first")
        self._tokenizer = tokenizer
        self.max_seq_length = max_seq_length

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids of each text, ``[CLS]`` and ``[SEP]`` included, truncated to the window."""
        stripped = [text.strip() for text in texts]
        return [encoding.ids for encoding in self._tokenizer.encode_batch(stripped, add_special_tokens=True)]

    def batches(self, texts: Sequence[str], batch_size: int) -> Iterator[Batch]:
        """Batches of at most ``batch_size`` texts of similar length (sorted by token count), padded per batch."""
        ids = self.encode(texts)
        lengths = np.fromiter((len(row) for row in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(order), batch_size):
            chosen = order[start : start + batch_size]
            width = int(lengths[chosen].max())
            input_ids = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros((len(chosen), width), dtype=np.int64)
            for row, index in enumerate(chosen):
                n = int(lengths[index])
                input_ids[row, :n] = ids[index]
                mask[row, :n] = 1
            yield Batch(positions=chosen, input_ids=input_ids, attention_mask=mask)
