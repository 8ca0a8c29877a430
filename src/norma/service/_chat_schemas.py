"""The guarded endpoint's request body: an OpenAI chat completion request (every field passed on to the upstream
as sent) and norma's own options in its ``norma`` object (never passed on)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from norma.guard import GuardPolicy, GuardResult
from norma.matching import SessionState

__all__ = ["ChatCompletionRequest", "GuardedChatCompletion", "NormaChatOptions"]


class NormaChatOptions(BaseModel):
    """What the ``norma`` object of a guarded request may say (it is not sent to the upstream)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    policy: GuardPolicy | None = None
    """This turn's policy (default: the server's ``--guard-policy``)."""
    session: SessionState | None = None
    """Where the conversation is, for matching (as ``/match`` takes it); None: a fresh session."""


class ChatCompletionRequest(BaseModel):
    """An OpenAI chat completion request. ``model``, ``messages``, ``temperature``, ``max_tokens`` and any other
    field are sent to the upstream unchanged, except the system message, where the rules that govern the turn are
    added; ``norma`` is norma's and stays here."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    model: str = Field(min_length=1, max_length=500)
    """The upstream's model."""
    messages: list[dict[str, Any]] = Field(min_length=1)
    """The conversation; text content only (``{"role": ..., "content": "..."}``), its last user message matched."""
    stream: bool = False
    """Answer as server-sent ``chat.completion.chunk`` events (see docs/service.md for how a stream is checked)."""
    n: int | None = Field(default=None, ge=1, le=1)
    """One answer per request (a guarded turn has one answer to check)."""
    norma: NormaChatOptions | None = None
    """norma's options for this turn (not sent to the upstream)."""


if TYPE_CHECKING:
    GuardedTurn = BaseModel
else:
    GuardedTurn = GuardResult.json_model("GuardedTurn", module=__name__)
    """The ``norma`` field of a guarded answer, generated from :class:`~norma.guard.GuardResult`."""


class GuardedChatCompletion(BaseModel):
    """The answer of a guarded chat completion (documentation only: the upstream's own object is sent, with its
    answer replaced by the guard's): OpenAI's ``chat.completion`` fields as the upstream wrote them, plus ``norma``."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    id: str | None = None
    """The upstream's completion id."""
    object: str = "chat.completion"
    model: str | None = None
    """The model that answered (as the upstream names it)."""
    choices: list[dict[str, Any]]
    """One choice: ``message.content`` is the guard's answer (``finish_reason: content_filter`` when blocked)."""
    usage: dict[str, Any] | None = None
    """The upstream's token usage, summed over every call of the turn (a repair is a second call)."""
    norma: GuardedTurn
    """The guarded turn (``norma.guard.GuardResult.to_dict(answers=False)``): ``passed``, ``action``, ``policy``,
    ``rules`` injected, timings, ``report`` (the turn check of the last answer), ``attempts`` (verdicts and
    timings)."""


class UpstreamModels(BaseModel):
    """The upstream's models, as its ``GET /models`` lists them (documentation only: the upstream's own object is
    sent): OpenAI's ``list`` of ``model`` objects."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)

    object: str = "list"
    data: list[dict[str, Any]]
    """One object per model: ``id`` (the name to put in a request's ``model``), ``object``, ``owned_by``, ..."""
