"""The graph built in code: the contrib-Attention and the standard-operator variants agree; weights stay in memory."""

from __future__ import annotations

import numpy as np
import pytest

from norma.embeddings._graph import INPUT_NAMES, OUTPUT_NAME, build_graph
from norma.embeddings._model_files import load_model_files, read_weights
from norma.embeddings._session import create_session
from norma.embeddings._tokenize import WordPieces

pytestmark = pytest.mark.model


def test_fused_and_standard_attention_give_the_same_vectors(reference: tuple[list[str], np.ndarray]) -> None:
    sentences, expected = reference
    files = load_model_files()
    weights = read_weights(files)
    tokens = WordPieces(files.tokenizer_path, files.max_seq_length)
    outputs = []
    for fused in (True, False):
        graph = build_graph(files.config, weights, fused=fused)
        session = create_session(graph.model.SerializeToString(), external=graph.external, source="test")
        vectors = np.empty((len(sentences), files.config.hidden_size), dtype=np.float32)
        for batch in tokens.batches(sentences, 8):
            vectors[batch.positions] = session.run(batch.input_ids, batch.attention_mask)
        outputs.append(vectors)
    assert np.abs(outputs[0] - outputs[1]).max() < 1e-5
    assert (outputs[1] * expected).sum(axis=1).min() >= 0.9999


def test_the_protobuf_holds_no_weights() -> None:
    files = load_model_files()
    graph = build_graph(files.config, read_weights(files))
    assert graph.model.ByteSize() < 1_000_000
    assert sum(array.nbytes for array in graph.external.values()) > 80_000_000
    assert [i.name for i in graph.model.graph.input] == list(INPUT_NAMES)
    assert [o.name for o in graph.model.graph.output] == [OUTPUT_NAME]
    assert len(graph.inlined().SerializeToString()) > 80_000_000
