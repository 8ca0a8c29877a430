"""The lexical side: a BM25 index over rule texts that scores every rule for a message in one vectorised pass.

Scoring uses bm25s' Lucene variant of BM25 (``idf = ln(1 + (N - df + 0.5) / (df + 0.5))`` and
``tfc = tf / (tf + k1 * (1 - b + b * dl / avgdl))``, computed as bm25s' low-level functions compute them, without
importing bm25s: some 40 ms of a CLI run) on the posting lists of the message's terms, computed at query time from
term counts. Keeping counts rather than bm25s' precomputed score matrix makes the index exactly incremental: adding
or removing a rule updates its terms' postings, and idf / avgdl (which every rule's score depends on) are taken from
the current counts at each query, so an updated index scores exactly as a rebuilt one.
A differential test checks the scores against ``bm25s.BM25(method="lucene").get_scores``.

Tokens: lower-cased ``\\w\\w+`` runs (bm25s' default pattern) minus bm25s' English stop words (a copy of
``STOPWORDS_EN``; a test checks it); a message's repeated terms count once.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["LexicalIndex", "tokenize"]

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)  # bm25s.stopwords.STOPWORDS_EN


def _score_idf_lucene(df: int, N: int) -> float:
    """bm25s.scoring._score_idf_lucene."""
    return math.log(1 + (N - df + 0.5) / (df + 0.5))


def _score_tfc_lucene(tf_array: np.ndarray, l_d: np.ndarray, l_avg: float, k1: float, b: float) -> np.ndarray:
    """bm25s.scoring._score_tfc_lucene (bm25s' ``_score_tfc_robertson``)."""
    out: np.ndarray = tf_array / (k1 * ((1 - b) + b * l_d / l_avg) + tf_array)
    return out


def tokenize(text: str) -> list[str]:
    """The BM25 terms of ``text``, in order, repeats kept."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]


_DENSE_SHARE = 8  # a term in more than 1/8 of the rules keeps its weights as a dense row: one contiguous add


class _Postings:
    __slots__ = ("arrays", "dense", "tf", "weights")

    def __init__(self) -> None:
        self.tf: dict[int, int] = {}
        self.arrays: tuple[np.ndarray, np.ndarray] | None = None
        self.weights: tuple[tuple[float, float, int], np.ndarray] | None = None  # ((k1, b, generation), idf * tfc)
        self.dense: tuple[tuple[float, float, int, int], np.ndarray] | None = None  # (key + size, weight by slot)

    def slots_and_tf(self) -> tuple[np.ndarray, np.ndarray]:
        if self.arrays is None:
            slots = np.fromiter(self.tf.keys(), dtype=np.intp, count=len(self.tf))
            tf = np.fromiter(self.tf.values(), dtype=np.float64, count=len(self.tf))
            self.arrays = (slots, tf)
        return self.arrays


class LexicalIndex:
    """BM25 postings by rule slot (an integer the matcher assigns); not thread-safe (the matcher locks)."""

    def __init__(self) -> None:
        self._postings: dict[str, _Postings] = {}
        self._doc_terms: dict[int, Counter[str]] = {}
        self._doc_len: np.ndarray = np.zeros(0, dtype=np.float64)
        self._total_len = 0
        self._generation = 0  # bumped by every change: document count and average length feed every weight

    def __len__(self) -> int:
        return len(self._doc_terms)

    def set(self, slot: int, text: str) -> None:
        """Index (or re-index) ``text`` as the document of ``slot``."""
        self.remove(slot)
        self._generation += 1
        terms = Counter(tokenize(text))
        self._doc_terms[slot] = terms
        if slot >= len(self._doc_len):
            grown = np.zeros(max(slot + 1, 2 * len(self._doc_len), 16), dtype=np.float64)
            grown[: len(self._doc_len)] = self._doc_len
            self._doc_len = grown
        length = sum(terms.values())
        self._doc_len[slot] = length
        self._total_len += length
        for term, count in terms.items():
            postings = self._postings.get(term)
            if postings is None:
                postings = self._postings[term] = _Postings()
            postings.tf[slot] = count
            postings.arrays = postings.dense = None

    def set_many(self, documents: Iterable[tuple[int, str]]) -> None:
        """:meth:`set` for each ``(slot, text)`` (distinct slots), in one pass: a rulebook's index is built at once."""
        doc_terms, postings_of, stop, find = self._doc_terms, self._postings, _STOP, _TOKEN.findall
        lengths: list[tuple[int, int]] = []
        for slot, text in documents:
            if slot in doc_terms:
                self.remove(slot)
            terms = Counter([t for t in find(text.lower()) if t not in stop])
            doc_terms[slot] = terms
            lengths.append((slot, sum(terms.values())))
            for term, count in terms.items():
                postings = postings_of.get(term)
                if postings is None:
                    postings = postings_of[term] = _Postings()
                postings.tf[slot] = count
                postings.arrays = postings.dense = None
        if not lengths:
            return
        self._generation += 1
        top = max(slot for slot, _ in lengths)
        if top >= len(self._doc_len):
            grown = np.zeros(max(top + 1, 2 * len(self._doc_len), 16), dtype=np.float64)
            grown[: len(self._doc_len)] = self._doc_len
            self._doc_len = grown
        for slot, length in lengths:
            self._doc_len[slot] = length
            self._total_len += length

    def remove(self, slot: int) -> None:
        """Forget the document of ``slot`` (nothing if it has none)."""
        terms = self._doc_terms.pop(slot, None)
        if terms is None:
            return
        self._generation += 1
        self._total_len -= int(self._doc_len[slot])
        self._doc_len[slot] = 0
        for term in terms:
            postings = self._postings[term]
            del postings.tf[slot]
            postings.arrays = postings.dense = None
            if not postings.tf:
                del self._postings[term]

    def terms_of(self, slot: int) -> Counter[str]:
        """The term counts of ``slot``'s document."""
        return self._doc_terms.get(slot) or Counter()

    def query_terms(self, text: str) -> list[str]:
        """The distinct terms of a message, sorted (the order scores are summed in, so results are stable)."""
        return sorted(set(tokenize(text)))

    def idf(self, terms: Iterable[str]) -> float:
        """Sum of the idf of ``terms``; a term no rule has counts with df = 0 (the highest idf)."""
        n = len(self._doc_terms)
        total = 0.0
        for term in terms:
            postings = self._postings.get(term)
            total += _score_idf_lucene(len(postings.tf) if postings else 0, N=n)
        return total

    def scores(self, terms: Sequence[str], size: int, *, k1: float, b: float) -> np.ndarray:
        """Raw BM25 of every slot ``< size`` for a message of ``terms`` (distinct); 0 where no term occurs."""
        out = np.zeros(size, dtype=np.float64)
        n = len(self._doc_terms)
        if n == 0:
            return out
        avg = self._total_len / n if self._total_len else 1.0
        key = (k1, b, self._generation)
        for term in terms:
            postings = self._postings.get(term)
            if postings is None:
                continue
            slots, tf = postings.slots_and_tf()
            cached = postings.weights
            if cached is not None and cached[0] == key:
                weights = cached[1]
            else:  # idf * tfc of each posting, kept until the index or (k1, b) change
                idf = _score_idf_lucene(len(slots), N=n)
                weights = idf * _score_tfc_lucene(tf, l_d=self._doc_len[slots], l_avg=avg, k1=k1, b=b)
                postings.weights = (key, weights)
            if len(slots) * _DENSE_SHARE > size:  # a common term: add its dense row (cached with the weights)
                dense = postings.dense
                if dense is None or dense[0] != (*key, size):
                    row = np.zeros(size, dtype=np.float64)
                    live = slots < size
                    row[slots[live]] = weights[live]
                    dense = postings.dense = ((*key, size), row)
                out += dense[1]
                continue
            live = slots < size
            if live.all():  # a term's postings name each slot once: a plain scatter-add, no size-long temporary
                out[slots] += weights
            else:
                out[slots[live]] += weights[live]
        return out
