"""The real model of the test suite: ``scripts/llm_server.py`` (llama.cpp's server with SmolLM2-135M-Instruct),
loaded by path and started once a session by the ``real_llm_url`` fixture of tests/llm/conftest.py.

When it cannot start (xllamacpp not installed, no network for the first download, a checksum mismatch), every test
that asks for it is skipped with one reason: ``real model unavailable: ...``. Tests that use it are marked
``real_llm``; they test plumbing and format (a reply, a parsed verdict, determinism), never judgement: so small a
model judges poorly.
"""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

__all__ = ["SCRIPT", "llm_server_script", "serve_or_skip"]

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "llm_server.py"
_NAME = "norma_tests_llm_server_script"


def llm_server_script() -> ModuleType:
    """``scripts/llm_server.py`` as a module (loaded once)."""
    module = sys.modules.get(_NAME)
    if module is None:
        spec = importlib.util.spec_from_file_location(_NAME, SCRIPT)
        if spec is None or spec.loader is None:
            raise RuntimeError(f"cannot load {SCRIPT}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[_NAME] = module
        spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def serve_or_skip() -> Iterator[str]:
    """The real model's OpenAI base URL while the block runs; ``pytest.skip`` with the reason when it cannot start."""
    script = llm_server_script()
    stack = contextlib.ExitStack()
    try:
        url: str = stack.enter_context(script.serve())
    except script.Unavailable as exc:
        pytest.skip(f"real model unavailable: {exc}")
    with stack:
        yield url
