"""norma: a rules engine for AI behaviour.

One idea of a *rule* (a named, versioned statement of expected behaviour, :class:`Rule`) matched to a conversation,
checked against an output, and scored into a number:

* **rubrics** (``norma.rubrics``) — weighted criteria turned into a reward, synth-ai compatible:
  :class:`Rubric`, :class:`Criterion`, :func:`load_rubric`, :func:`evaluate_events_against_rubric`.
* **matching** (``norma.matching``) — which of a tenant's rules apply to a user message, and which of them govern
  the turn: :class:`RuleMatcher`, :class:`MatchConfig`, :class:`SessionState`, :func:`load_rules`, and
  :func:`tenant_matcher` over a store.
* **checks and the turn check** (``norma.turns``) — a turn (message, output) checked against the rules that govern
  it, with a verdict, evidence and a reward: :class:`TurnChecker`, :func:`check_turn`, :class:`TurnReport`.
* **audit** (``norma.audit``) — an AI output checked against executable rules IR.x.y: :func:`analyze`,
  :func:`load_documents`.
* **names** (``norma.names``) — the MIID validator's name-variation scoring: :func:`build_query`,
  :func:`quality_from_labels`, :func:`generate_from_labels`, :func:`variation_quality`.

Under them: the rule model and rulebooks (``norma.rules``: :class:`Rule`, :class:`Scope`, :func:`load_rulebook`),
the checks a rule carries (``norma.checks``), the rule store (``norma.store``: :func:`open_store`,
:func:`import_rulebook`), offline embeddings (``norma.embeddings``: :func:`get_embedder`), LLM backends
(``norma.llm``: :func:`get_llm`) and the errors (``norma.errors``: :class:`NormaError` and its tree). On top: the
``norma`` command, the batch engines, the HTTP service (``norma.service``), the MCP server and the pytest plugin.

The entry points above are loaded on first use, so ``import norma`` stays cheap; each subpackage has the rest.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from norma._version import __version__
from norma.errors import (
    AuthenticationError,
    BackendError,
    ConfigError,
    ConflictError,
    ForbiddenError,
    InvalidInputError,
    LimitExceededError,
    MissingDependencyError,
    NormaError,
    NotFoundError,
    RateLimitedError,
    RubricError,
    StoreError,
    StoreUnavailableError,
)

if _typing.TYPE_CHECKING:
    from norma.audit import analyze, load_documents
    from norma.embeddings import get_embedder
    from norma.llm import get_llm
    from norma.matching import MatchConfig, RuleMatcher, SessionState, load_rules, tenant_matcher
    from norma.names import build_query, generate_from_labels, quality_from_labels, variation_quality
    from norma.rubrics import Criterion, Rubric, evaluate_events_against_rubric, load_rubric
    from norma.rules import Rule, Scope, load_rulebook
    from norma.store import import_rulebook, open_store
    from norma.turns import Norma, TurnChecker, TurnReport, check_turn, open

_ENTRY_POINTS: dict[str, str] = {
    "Criterion": "norma.rubrics",
    "MatchConfig": "norma.matching",
    "Norma": "norma.turns",
    "Rubric": "norma.rubrics",
    "Rule": "norma.rules",
    "RuleMatcher": "norma.matching",
    "Scope": "norma.rules",
    "SessionState": "norma.matching",
    "TurnChecker": "norma.turns",
    "TurnReport": "norma.turns",
    "analyze": "norma.audit",
    "build_query": "norma.names",
    "check_turn": "norma.turns",
    "evaluate_events_against_rubric": "norma.rubrics",
    "generate_from_labels": "norma.names",
    "get_embedder": "norma.embeddings",
    "get_llm": "norma.llm",
    "import_rulebook": "norma.store",
    "load_documents": "norma.audit",
    "load_rubric": "norma.rubrics",
    "load_rulebook": "norma.rules",
    "load_rules": "norma.matching",
    "open": "norma.turns",
    "open_store": "norma.store",
    "quality_from_labels": "norma.names",
    "tenant_matcher": "norma.matching",
    "variation_quality": "norma.names",
}

__all__ = [
    "AuthenticationError",
    "BackendError",
    "ConfigError",
    "ConflictError",
    "Criterion",
    "ForbiddenError",
    "InvalidInputError",
    "LimitExceededError",
    "MatchConfig",
    "MissingDependencyError",
    "Norma",
    "NormaError",
    "NotFoundError",
    "RateLimitedError",
    "Rubric",
    "RubricError",
    "Rule",
    "RuleMatcher",
    "Scope",
    "SessionState",
    "StoreError",
    "StoreUnavailableError",
    "TurnChecker",
    "TurnReport",
    "__version__",
    "analyze",
    "build_query",
    "check_turn",
    "evaluate_events_against_rubric",
    "generate_from_labels",
    "get_embedder",
    "get_llm",
    "import_rulebook",
    "load_documents",
    "load_rubric",
    "load_rulebook",
    "load_rules",
    "open",
    "open_store",
    "quality_from_labels",
    "tenant_matcher",
    "variation_quality",
]


def __getattr__(name: str) -> _typing.Any:
    """The capabilities' entry points, imported on first use (PEP 562)."""
    module = _ENTRY_POINTS.get(name)
    if module is None:
        raise AttributeError(f"module 'norma' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
