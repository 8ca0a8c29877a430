"""Chat LLM backends: Ollama (``/api/chat``) and OpenAI-compatible servers (``/v1/chat/completions``).

* :class:`LLMClient` — the protocol every backend follows (``model``, ``complete``, ``acomplete``).
* :func:`get_llm` — the client configured by arguments or ``$NORMA_LLM_URL``/``$NORMA_LLM_MODEL``/
  ``$NORMA_LLM_API_KEY``/``$NORMA_LLM_KIND``; None when no URL is set.
* :class:`OllamaClient`, :class:`OpenAIClient` — the two HTTP backends (sync and async, retries with backoff and
  jitter, fallback models); :class:`ChatReply` is what their ``chat``/``achat`` return.
* :class:`LLMBackendError` — a :class:`norma.errors.BackendError` naming the endpoint and the last status.
* :func:`check_llm` — send a tiny prompt and time the reply (``norma llm check``).
* :class:`Judge` — an LLM as a judge: does a text satisfy a criterion? A strict JSON :class:`Verdict` over one or
  more :class:`Vote` objects (majority, mean score, spread), the data between tags it is told never to obey, votes
  cached in a :class:`JudgeCache` (in memory or a SQLite file); a reply that is not a verdict is a
  :class:`JudgeError`, never a pass. :func:`make_judge` builds the judge of every part of norma, with its cache
  policy (:data:`JudgeCachePolicy`).

Replies are not streamed. See docs/llm.md.
"""

from __future__ import annotations

from norma.llm._check import LLMCheck, check_llm
from norma.llm._config import (
    API_KEY_ENV,
    KIND_ENV,
    MODEL_ENV,
    TIMEOUT_ENV,
    URL_ENV,
    BackendKind,
    LLMSettings,
    RetryPolicy,
    detect_kind,
    redact_url,
)
from norma.llm._factory import client_from_settings, get_llm
from norma.llm._http import ChatClient, ChatReply, LLMBackendError
from norma.llm._judge import JUDGE_PROMPT_VERSION, Judge, JudgeCachePolicy, make_judge, neutralise
from norma.llm._judge_cache import JudgeCache, judge_cache_path
from norma.llm._messages import to_messages
from norma.llm._ollama import OllamaClient
from norma.llm._openai import OpenAIClient
from norma.llm._protocol import LLMClient, Messages, Prompt
from norma.llm._verdict import JudgeError, Verdict, Vote, parse_vote

__all__ = [
    "API_KEY_ENV",
    "BackendKind",
    "ChatClient",
    "ChatReply",
    "JUDGE_PROMPT_VERSION",
    "Judge",
    "JudgeCache",
    "JudgeCachePolicy",
    "JudgeError",
    "KIND_ENV",
    "LLMBackendError",
    "LLMCheck",
    "LLMClient",
    "LLMSettings",
    "MODEL_ENV",
    "Messages",
    "OllamaClient",
    "OpenAIClient",
    "Prompt",
    "RetryPolicy",
    "TIMEOUT_ENV",
    "URL_ENV",
    "Verdict",
    "Vote",
    "check_llm",
    "client_from_settings",
    "detect_kind",
    "get_llm",
    "judge_cache_path",
    "make_judge",
    "neutralise",
    "parse_vote",
    "redact_url",
    "to_messages",
]
