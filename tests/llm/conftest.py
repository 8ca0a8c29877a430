"""Fixtures: a fake LLM server on a loopback port, a retry policy fast enough for tests, and the real local model."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from norma.llm import RetryPolicy
from tests._llm_server import FakeLLMServer
from tests._real_llm import serve_or_skip

FAST = RetryPolicy(max_retries=2, backoff_base=0.01, backoff_max=0.02, max_retry_after=1.0)
"""Two retries, 5-20 ms apart: enough to exercise the policy without slowing the suite."""


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NORMA_LLM_URL", "NORMA_LLM_MODEL", "NORMA_LLM_API_KEY", "NORMA_LLM_KIND", "NORMA_LLM_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def real_llm_url() -> Iterator[str]:
    """The OpenAI base URL of the real local model (tests/_real_llm.py), started once a session; tests that use
    it are skipped with one reason when it cannot start."""
    with serve_or_skip() as url:
        yield url
