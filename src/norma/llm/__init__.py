"""Chat LLM backends: Ollama (``/api/chat``) and OpenAI-compatible servers (``/v1/chat/completions``).

* :class:`LLMClient` — the protocol every chat model follows (``model``, ``complete``/``acomplete`` returning a
  :class:`ChatReply`: the text, the raw answer, usage and finish reason; ``stream``/``astream``).
* :func:`get_llm` — the client configured by arguments or ``$NORMA_LLM_URL``/``$NORMA_LLM_MODEL``/
  ``$NORMA_LLM_API_KEY``/``$NORMA_LLM_KIND``; None when no URL is set.
* :class:`OllamaClient`, :class:`OpenAIClient` — the two HTTP backends (sync and async, retries with backoff and
  jitter, fallback models, pooled connections shared through an ``HttpPool``, streamed replies).
* :class:`LLMBackendError` — a :class:`norma.errors.BackendError` naming the endpoint, the last status and the last
  fault (what a gateway answers for it: 502 or 504, ``Retry-After``).
* :func:`ping_llm` — send a tiny prompt and time the reply (``norma llm check``).
* :func:`serve_local` — a 135M-parameter model behind llama.cpp's OpenAI-compatible server on this machine, for
  trying the plumbing, never for judging (``norma llm local``, the ``local`` extra; internal).
* :class:`Judge` — an LLM as a judge: does a text satisfy a criterion? A strict JSON :class:`JudgeVerdict` over one or
  more :class:`Vote` objects (majority, mean score, spread), the data between tags it is told never to obey, votes
  cached in a :class:`JudgeCache` (in memory or a SQLite file); a reply that is not a verdict is a
  :class:`JudgeError`, never a pass. :func:`make_judge` builds the judge of every part of norma, with its cache
  policy (:data:`JudgeCachePolicy`).

See docs/llm.md.
"""

from __future__ import annotations

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.llm._config import API_KEY_ENV as API_KEY_ENV
    from norma.llm._config import KIND_ENV as KIND_ENV
    from norma.llm._config import MODEL_ENV as MODEL_ENV
    from norma.llm._config import TIMEOUT_ENV as TIMEOUT_ENV
    from norma.llm._config import URL_ENV as URL_ENV
    from norma.llm._config import BackendKind as BackendKind
    from norma.llm._config import LLMSettings as LLMSettings
    from norma.llm._config import RetryPolicy as RetryPolicy
    from norma.llm._config import detect_kind as detect_kind
    from norma.llm._config import redact_url as redact_url
    from norma.llm._factory import client_from_settings as client_from_settings
    from norma.llm._factory import get_llm as get_llm
    from norma.llm._faults import Fault as Fault
    from norma.llm._faults import LLMBackendError as LLMBackendError
    from norma.llm._http import ChatClient as ChatClient
    from norma.llm._judge import JUDGE_PROMPT_VERSION as JUDGE_PROMPT_VERSION
    from norma.llm._judge import Judge as Judge
    from norma.llm._judge import JudgeCachePolicy as JudgeCachePolicy
    from norma.llm._judge import make_judge as make_judge
    from norma.llm._judge import neutralise as neutralise
    from norma.llm._judge_cache import JudgeCache as JudgeCache
    from norma.llm._judge_cache import judge_cache_path as judge_cache_path
    from norma.llm._local import LOCAL_MODEL_NAME as LOCAL_MODEL_NAME
    from norma.llm._local import LOCAL_MODEL_NOTE as LOCAL_MODEL_NOTE
    from norma.llm._local import LocalModel as LocalModel
    from norma.llm._local import local_model_file as local_model_file
    from norma.llm._local import local_model_path as local_model_path
    from norma.llm._local import serve_local as serve_local
    from norma.llm._messages import to_messages as to_messages
    from norma.llm._ollama import OllamaClient as OllamaClient
    from norma.llm._openai import OpenAIClient as OpenAIClient
    from norma.llm._ping import LLMPing as LLMPing
    from norma.llm._ping import ping_llm as ping_llm
    from norma.llm._pool import HttpPool as HttpPool
    from norma.llm._protocol import ChatDelta as ChatDelta
    from norma.llm._protocol import ChatReply as ChatReply
    from norma.llm._protocol import LLMClient as LLMClient
    from norma.llm._protocol import Messages as Messages
    from norma.llm._protocol import Prompt as Prompt
    from norma.llm._protocol import ReplySchema as ReplySchema
    from norma.llm._protocol import Usage as Usage
    from norma.llm._protocol import accepts_schema as accepts_schema
    from norma.llm._protocol import reply_text as reply_text
    from norma.llm._verdict import VERDICT_SCHEMA as VERDICT_SCHEMA
    from norma.llm._verdict import JudgeError as JudgeError
    from norma.llm._verdict import JudgeVerdict as JudgeVerdict
    from norma.llm._verdict import Vote as Vote
    from norma.llm._verdict import parse_vote as parse_vote

_PUBLIC: dict[str, str] = {
    "ChatReply": "_protocol",
    "ping_llm": "_ping",
    "get_llm": "_factory",
    "Judge": "_judge",
    "JudgeCache": "_judge_cache",
    "JudgeCachePolicy": "_judge",
    "JudgeError": "_verdict",
    "LLMBackendError": "_faults",
    "LLMClient": "_protocol",
    "make_judge": "_judge",
    "neutralise": "_judge",
    "OllamaClient": "_ollama",
    "OpenAIClient": "_openai",
    "ReplySchema": "_protocol",
    "RetryPolicy": "_config",
    "JudgeVerdict": "_verdict",
    "Vote": "_verdict",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "accepts_schema": "_protocol",
    "API_KEY_ENV": "_config",
    "BackendKind": "_config",
    "ChatClient": "_http",
    "ChatDelta": "_protocol",
    "client_from_settings": "_factory",
    "detect_kind": "_config",
    "Fault": "_faults",
    "HttpPool": "_pool",
    "judge_cache_path": "_judge_cache",
    "JUDGE_PROMPT_VERSION": "_judge",
    "KIND_ENV": "_config",
    "LLMPing": "_ping",
    "LLMSettings": "_config",
    "local_model_file": "_local",
    "local_model_path": "_local",
    "LOCAL_MODEL_NAME": "_local",
    "LOCAL_MODEL_NOTE": "_local",
    "LocalModel": "_local",
    "Messages": "_protocol",
    "MODEL_ENV": "_config",
    "parse_vote": "_verdict",
    "Prompt": "_protocol",
    "redact_url": "_config",
    "reply_text": "_protocol",
    "serve_local": "_local",
    "TIMEOUT_ENV": "_config",
    "to_messages": "_messages",
    "URL_ENV": "_config",
    "Usage": "_protocol",
    "VERDICT_SCHEMA": "_verdict",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
