"""``norma embed``: sentence vectors from the command line, and the embeddings section of ``norma demo``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from norma.cli._demo import SECTIONS
from norma.cli._output import emit, format_option, print_table, resolve_format
from norma.errors import InvalidInputError

__all__ = ["embed"]

_PREVIEW = 6


@click.command()
@click.argument("texts", nargs=-1, required=True)
@click.option("--full", is_flag=True, help="Print every component of each vector, not a preview.")
@click.option(
    "--int8/--fp32",
    "int8",
    default=None,
    help="The int8 or the fp32 encoder (default: $NORMA_EMBEDDINGS_INT8, else fp32).",
)
@click.option(
    "--model-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="A sentence-transformers BERT model directory (default: $NORMA_MODEL_DIR, else all-MiniLM-L6-v2).",
)
@format_option
@click.pass_context
def embed(
    ctx: click.Context,
    texts: tuple[str, ...],
    full: bool,
    int8: bool | None,
    model_dir: Path | None,
    output_format: str | None,
) -> int:
    """Embed each TEXT and print the model, the dimension and the vectors (a preview unless --full)."""
    from norma.embeddings import get_embedder

    fmt = resolve_format(ctx, output_format)
    embedder = get_embedder(model_dir, quantize=int8)
    vectors = embedder.embed(list(texts))
    shown = vectors if full else vectors[:, :_PREVIEW]
    payload = {
        "model_id": embedder.model_id,
        "dim": embedder.dim,
        "full": full,
        "vectors": [
            {"text": text, "vector": [round(float(x), 7) for x in row]} for text, row in zip(texts, shown, strict=True)
        ],
    }

    def table(con: Console) -> None:
        con.print(f"model [bold]{embedder.model_id}[/bold], dim {embedder.dim}")
        out = Table("text", "vector" if full else f"first {_PREVIEW} of {embedder.dim}")
        for text, row in zip(texts, shown, strict=True):
            values = ", ".join(f"{x:+.4f}" for x in row)
            out.add_row(text if len(text) <= 60 else text[:57] + "...", f"[{values}{'' if full else ', ...'}]")
        print_table(con, out)

    emit(fmt, payload, table)
    return 0


def _demo_section(examples: Path) -> tuple[dict[str, Any], Callable[[Console], None]]:
    import numpy as np

    from norma.embeddings import get_embedder

    path = examples / "embeddings" / "sentences.txt"
    try:
        sentences = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except OSError as exc:
        raise InvalidInputError(f"cannot read the demo sentences: {exc}", source=str(path)) from exc
    embedder = get_embedder()
    vectors = embedder.embed(sentences)
    similarity = vectors @ vectors.T
    upper = np.triu_indices(len(sentences), k=1)
    order = np.argsort(-similarity[upper], kind="stable")[:5]
    pairs = [
        {
            "a": sentences[int(upper[0][i])],
            "b": sentences[int(upper[1][i])],
            "cosine": round(float(similarity[upper][i]), 4),
        }
        for i in order
    ]
    summary = {"model_id": embedder.model_id, "dim": embedder.dim, "sentences": len(sentences), "nearest_pairs": pairs}

    def render(con: Console) -> None:
        con.print(f"{len(sentences)} sentences from {path.name} embedded with {embedder.model_id} (dim {embedder.dim})")
        out = Table("cosine", "sentence", "and sentence", title="the five most similar pairs")
        for pair in pairs:
            out.add_row(f"{pair['cosine']:.3f}", str(pair["a"]), str(pair["b"]))
        print_table(con, out)

    return summary, render


SECTIONS["embeddings"] = _demo_section
