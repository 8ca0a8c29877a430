"""The real model of the test suite: ``norma llm local``'s server (norma.llm._local: llama.cpp's server with
SmolLM2-135M-Instruct, in a subprocess), started once a session by the ``real_llm_url`` fixture of
tests/llm/conftest.py.

When it cannot start (xllamacpp not installed, no network for the first download, a checksum mismatch), every test
that asks for it is skipped with one reason: ``real model unavailable: ...``. Tests that use it are marked
``real_llm``; they test plumbing and format (a reply, a parsed verdict, determinism), never judgement: so small a
model judges poorly.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator

import pytest

__all__ = ["serve_or_skip"]


@contextlib.contextmanager
def serve_or_skip() -> Iterator[str]:
    """The real model's OpenAI base URL while the block runs; ``pytest.skip`` with the reason when it cannot start.

    The server runs as a user runs it, ``norma llm local --port 0`` in a subprocess, killed at the end: dropping the
    native server in process can hang (its destructor joins a loop that missed the stop; see cli/_llm.py)."""
    command = [sys.executable, "-m", "norma", "llm", "local", "--port", "0", "--format", "json"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()  # flushed once the model answers /health; empty when it could not start
        if not banner:
            proc.wait(timeout=60)
            assert proc.stderr is not None
            pytest.skip(f"real model unavailable: {proc.stderr.read().strip()}")
        yield str(json.loads(banner)["url"])
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)
