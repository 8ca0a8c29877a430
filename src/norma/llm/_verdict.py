"""What a judge answers: one :class:`Vote` per model call, a :class:`JudgeVerdict` over the votes, and the strict
reading of a reply (:func:`parse_vote`), whose failures are :class:`JudgeError`\\ s, never a pass."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from norma.errors import BackendError
from norma.llm._protocol import ReplySchema

__all__ = ["REASON_CHARS", "VERDICT_SCHEMA", "JudgeError", "JudgeVerdict", "Vote", "parse_vote"]

REASON_CHARS = 500
"""Longest reason kept from a reply (a longer one is cut, with ``...``)."""
_SNIPPET = 120

VERDICT_SCHEMA = ReplySchema(
    "norma_verdict",
    {
        "type": "object",
        "properties": {
            "pass": {"type": "boolean"},
            "score": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string"},
        },
        "required": ["pass", "score", "reason"],
        "additionalProperties": False,
    },
)
"""The structured output a judge asks for: what :func:`parse_vote` reads (which still checks every field: a server
may ignore a schema, or part of it)."""
_FENCE = re.compile(r"\A```[ \t]*(?:json)?[ \t]*\r?\n(.*?)\r?\n?```\Z", flags=re.DOTALL | re.IGNORECASE)


class JudgeError(BackendError):
    """A judge's reply that is not a verdict: not JSON, not an object, or without a boolean ``pass``, a ``score``
    in [0, 1] and a string ``reason``. Never read as a pass.

    ``model`` is the model that answered, ``reply`` the start of what it said (at most 120 characters).
    """

    def __init__(self, message: str, *, model: str, reply: str) -> None:
        snippet = reply if len(reply) <= _SNIPPET else reply[: _SNIPPET - 3] + "..."
        super().__init__(
            f"the judge's reply is not a verdict: {message}; it began {snippet!r}",
            source=f"model {model}",
            hint='the model must answer {"pass": true|false, "score": 0..1, "reason": "..."}; try a stronger model',
        )
        self.model = model
        self.reply = snippet


@dataclass(frozen=True)
class Vote:
    """One model call's answer."""

    passed: bool
    """Whether the text satisfies the criterion (the reply's ``pass``)."""
    score: float
    """How well, from 0 to 1."""
    reason: str
    """Why, in the model's words (one line, at most :data:`REASON_CHARS` characters)."""

    def to_dict(self) -> dict[str, Any]:
        """``{"pass", "score", "reason"}``, the reply's own keys."""
        return {"pass": self.passed, "score": self.score, "reason": self.reason}


@dataclass(frozen=True)
class JudgeVerdict:
    """The votes on one text and criterion: the majority decides ``passed``, ``score`` is their mean."""

    passed: bool
    """True when more than half of the votes pass."""
    score: float
    """Mean of the votes' scores."""
    reason: str
    """The reason of the first vote on the winning side."""
    votes: tuple[Vote, ...]
    """Every vote, in the order asked (vote ``i`` was sent with ``seed=i``)."""
    model: str
    """The model asked (the client's first model)."""
    cached: int = field(default=0, compare=False)
    """How many votes came from the cache (0 to ``len(votes)``); not part of equality, so a cached re-run gives an
    equal verdict."""

    @classmethod
    def of(cls, votes: tuple[Vote, ...], model: str, *, cached: int = 0) -> JudgeVerdict:
        """The verdict of ``votes`` (at least one)."""
        if not votes:
            raise ValueError("a verdict needs at least one vote")
        ayes = sum(vote.passed for vote in votes)
        passed = ayes * 2 > len(votes)
        reason = next(vote.reason for vote in votes if vote.passed is passed)
        return cls(passed, sum(vote.score for vote in votes) / len(votes), reason, votes, model, cached)

    @property
    def votes_for(self) -> int:
        """Votes that pass."""
        return sum(vote.passed for vote in self.votes)

    @property
    def votes_against(self) -> int:
        """Votes that fail."""
        return len(self.votes) - self.votes_for

    @property
    def min_score(self) -> float:
        """Lowest score of a vote."""
        return min(vote.score for vote in self.votes)

    @property
    def max_score(self) -> float:
        """Highest score of a vote."""
        return max(vote.score for vote in self.votes)

    def spread(self) -> str:
        """The votes in a few words: ``1 vote`` or ``votes 2 for, 1 against, scores 0.20-0.90``."""
        if len(self.votes) == 1:
            return "1 vote"
        return (
            f"votes {self.votes_for} for, {self.votes_against} against, "
            f"scores {self.min_score:.2f}-{self.max_score:.2f}"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready mapping: ``pass``, ``score``, ``reason``, ``model``, the spread, each vote, ``cached``."""
        return {
            "pass": self.passed,
            "score": self.score,
            "reason": self.reason,
            "model": self.model,
            "votes_for": self.votes_for,
            "votes_against": self.votes_against,
            "min_score": self.min_score,
            "max_score": self.max_score,
            "votes": [vote.to_dict() for vote in self.votes],
            "cached": self.cached,
        }


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def parse_vote(reply: str, *, model: str) -> Vote:
    """The vote in ``reply``: a JSON object (optionally in one fenced block marked ``json`` or unmarked) with a
    boolean ``pass``, a number ``score`` in [0, 1] and a string ``reason``; other keys are ignored.

    Raises:
        JudgeError: anything else (the reply is never taken as a pass).
    """
    text = reply.strip()
    fenced = _FENCE.match(text)
    if fenced is not None:
        text = fenced.group(1).strip()
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise JudgeError("it is not JSON", model=model, reply=reply) from None
    if not isinstance(data, dict):
        raise JudgeError(f"it is JSON but not an object ({type(data).__name__})", model=model, reply=reply)
    missing = [key for key in ("pass", "score", "reason") if key not in data]
    if missing:
        raise JudgeError(f"it has no {', '.join(repr(key) for key in missing)}", model=model, reply=reply)
    passed, score, reason = data["pass"], data["score"], data["reason"]
    if not isinstance(passed, bool):
        raise JudgeError(f"'pass' is {passed!r}, not true or false", model=model, reply=reply)
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        raise JudgeError(f"'score' is {score!r}, not a number", model=model, reply=reply)
    if not 0.0 <= score <= 1.0:
        raise JudgeError(f"'score' is {score!r}, outside [0, 1]", model=model, reply=reply)
    if not isinstance(reason, str):
        raise JudgeError(f"'reason' is {reason!r}, not a string", model=model, reply=reply)
    line = " ".join(reason.split())
    if len(line) > REASON_CHARS:
        line = line[: REASON_CHARS - 3] + "..."
    return Vote(passed, float(score), line)
