"""The real model of the test suite: ``norma llm local``'s server (norma.llm._local: llama.cpp's server with
SmolLM2-135M-Instruct, in process), started once a session by the ``real_llm_url`` fixture of tests/llm/conftest.py.

When it cannot start (xllamacpp not installed, no network for the first download, a checksum mismatch), every test
that asks for it is skipped with one reason: ``real model unavailable: ...``. Tests that use it are marked
``real_llm``; they test plumbing and format (a reply, a parsed verdict, determinism), never judgement: so small a
model judges poorly.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from norma.errors import NormaError
from norma.llm import serve_local

__all__ = ["serve_or_skip"]


@contextlib.contextmanager
def serve_or_skip() -> Iterator[str]:
    """The real model's OpenAI base URL while the block runs; ``pytest.skip`` with the reason when it cannot start."""
    stack = contextlib.ExitStack()
    try:
        url = stack.enter_context(serve_local(port=0)).url
    except NormaError as exc:
        pytest.skip(f"real model unavailable: {exc}")
    with stack:
        yield url
