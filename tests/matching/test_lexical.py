from __future__ import annotations

import bm25s
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from norma.matching._lexical import LexicalIndex, tokenize

WORDS = ["refund", "card", "money", "lost", "stolen", "hello", "order", "delivery", "late", "fee"]


def bm25s_scores(docs: list[str], query: list[str]) -> np.ndarray:
    corpus = [tokenize(d) for d in docs]
    vocab = {t: i for i, t in enumerate(sorted({t for doc in corpus for t in doc}))}
    ids = [[vocab[t] for t in doc] for doc in corpus]
    known = [t for t in query if t in vocab]
    if not known:
        return np.zeros(len(docs))
    model = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    model.index(bm25s.tokenization.Tokenized(ids=ids, vocab=vocab), show_progress=False)
    return np.asarray(model.get_scores(known), dtype=np.float64)


def test_tokenize_drops_stop_words_and_single_letters() -> None:
    assert tokenize("I want a REFUND for the order, a b c") == ["want", "refund", "order"]


@settings(max_examples=40, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join), min_size=2, max_size=8),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
)
def test_scores_equal_bm25s(docs: list[str], query: list[str]) -> None:
    index = LexicalIndex()
    for slot, doc in enumerate(docs):
        index.set(slot, doc)
    terms = sorted(set(query))
    ours = index.scores(terms, len(docs), k1=1.5, b=0.75)
    np.testing.assert_allclose(ours, bm25s_scores(docs, terms), rtol=1e-5, atol=1e-6)


@settings(max_examples=30, deadline=None)
@given(
    docs=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join), min_size=3, max_size=8),
    removed=st.integers(min_value=0, max_value=2),
    replacement=st.lists(st.sampled_from(WORDS), min_size=1, max_size=5).map(" ".join),
)
def test_incremental_equals_rebuild(docs: list[str], removed: int, replacement: str) -> None:
    index = LexicalIndex()
    for slot, doc in enumerate(docs):
        index.set(slot, doc)
    index.remove(removed)
    index.set(len(docs) - 1, replacement)
    fresh = LexicalIndex()
    for slot, doc in enumerate(docs[:-1]):
        if slot != removed:
            fresh.set(slot, doc)
    fresh.set(len(docs) - 1, replacement)
    terms = sorted(WORDS)
    np.testing.assert_array_equal(
        index.scores(terms, len(docs), k1=1.5, b=0.75), fresh.scores(terms, len(docs), k1=1.5, b=0.75)
    )


def test_query_idf_counts_unknown_terms_as_rarest() -> None:
    index = LexicalIndex()
    index.set(0, "refund money")
    index.set(1, "card lost")
    # Lucene idf: ln(1 + (N - df + 0.5) / (df + 0.5)); N = 2
    assert abs(index.idf(["refund"]) - np.log(1 + 1.5 / 1.5)) < 1e-12
    assert abs(index.idf(["zebra"]) - np.log(1 + 2.5 / 0.5)) < 1e-12


def test_the_stop_words_and_weights_are_bm25s() -> None:
    from bm25s.scoring import _score_idf_lucene, _score_tfc_lucene  # type: ignore[import-untyped]
    from bm25s.stopwords import STOPWORDS_EN  # type: ignore[import-untyped]

    from norma.matching import _lexical

    assert frozenset(STOPWORDS_EN) == _lexical._STOP
    tf, dl = np.array([1.0, 2.0, 5.0]), np.array([3.0, 7.0, 11.0])
    assert np.array_equal(_lexical._score_tfc_lucene(tf, dl, 6.5, 1.2, 0.75), _score_tfc_lucene(tf, dl, 6.5, 1.2, 0.75))
    assert [_lexical._score_idf_lucene(df, 40) for df in range(41)] == [_score_idf_lucene(df, N=40) for df in range(41)]


def test_set_many_indexes_as_set_does() -> None:
    docs = [(slot, f"the customer asks about card {slot % 11} and the refund of loan {slot % 7}") for slot in range(60)]
    one, many = LexicalIndex(), LexicalIndex()
    for slot, text in docs:
        one.set(slot, text)
    many.set(3, "an older text of slot three")  # replaced by set_many
    many.set_many(docs)
    for terms in (["card", "refund"], ["loan", "customer", "older"], ["three"]):
        assert np.array_equal(one.scores(terms, 60, k1=1.5, b=0.75), many.scores(terms, 60, k1=1.5, b=0.75))
    assert [one.terms_of(slot) for slot in range(60)] == [many.terms_of(slot) for slot in range(60)]
