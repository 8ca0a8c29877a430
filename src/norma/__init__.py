"""norma: a rules engine for AI behaviour.

One idea of a *rule* (a named, versioned statement of expected behaviour, :class:`Rule`) matched to a conversation,
checked against an output, and scored into a number. The one way in is :func:`open`: ``norma.open("rules.yaml")``
(or ``norma.open(tenant="acme", store=URL)``) returns a :class:`Norma` that matches, checks and audits with
everything derived from those rules built once. Under it:

* **rubrics** (``norma.rubrics``) — weighted criteria turned into a reward, synth-ai compatible:
  :class:`Rubric`, :class:`Criterion`, :func:`load_rubric`, :func:`evaluate_events_against_rubric`.
* **matching** (``norma.matching``) — which of a tenant's rules apply to a user message, and which of them govern
  the turn: :class:`RuleMatcher`, :class:`MatchConfig`, :class:`SessionState`, :func:`load_rules`, and
  :func:`tenant_matcher` over a store.
* **checks and the turn check** (``norma.turns``) — a turn (message, output) checked against the rules that govern
  it, with a verdict, evidence and a reward: ``open(rules).check(message, output)``, a :class:`TurnReport`;
  :class:`Tenants` in a server.
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

import typing as _typing

from norma._lazy import exports as _exports
from norma._version import __version__ as __version__
from norma.errors import AuthenticationError as AuthenticationError
from norma.errors import BackendError as BackendError
from norma.errors import ConfigError as ConfigError
from norma.errors import ConflictError as ConflictError
from norma.errors import ForbiddenError as ForbiddenError
from norma.errors import InvalidInputError as InvalidInputError
from norma.errors import LimitExceededError as LimitExceededError
from norma.errors import MissingDependencyError as MissingDependencyError
from norma.errors import NormaError as NormaError
from norma.errors import NotFoundError as NotFoundError
from norma.errors import RateLimitedError as RateLimitedError
from norma.errors import RubricError as RubricError
from norma.errors import StoreError as StoreError
from norma.errors import StoreUnavailableError as StoreUnavailableError

if _typing.TYPE_CHECKING:
    from norma.audit import analyze as analyze
    from norma.audit import load_documents as load_documents
    from norma.embeddings import get_embedder as get_embedder
    from norma.llm import get_llm as get_llm
    from norma.matching import MatchConfig as MatchConfig
    from norma.matching import RuleMatcher as RuleMatcher
    from norma.matching import SessionState as SessionState
    from norma.matching import load_rules as load_rules
    from norma.matching import tenant_matcher as tenant_matcher
    from norma.names import build_query as build_query
    from norma.names import generate_from_labels as generate_from_labels
    from norma.names import quality_from_labels as quality_from_labels
    from norma.names import variation_quality as variation_quality
    from norma.rubrics import Criterion as Criterion
    from norma.rubrics import Rubric as Rubric
    from norma.rubrics import evaluate_events_against_rubric as evaluate_events_against_rubric
    from norma.rubrics import load_rubric as load_rubric
    from norma.rules import Rule as Rule
    from norma.rules import Scope as Scope
    from norma.rules import load_rulebook as load_rulebook
    from norma.store import import_rulebook as import_rulebook
    from norma.store import open_store as open_store
    from norma.turns import Norma as Norma
    from norma.turns import Tenants as Tenants
    from norma.turns import TurnReport as TurnReport
    from norma.turns import open as open

_PUBLIC: dict[str, str] = {
    "__version__": "norma._version",
    "analyze": "norma.audit",
    "AuthenticationError": "norma.errors",
    "BackendError": "norma.errors",
    "build_query": "norma.names",
    "ConfigError": "norma.errors",
    "ConflictError": "norma.errors",
    "Criterion": "norma.rubrics",
    "evaluate_events_against_rubric": "norma.rubrics",
    "ForbiddenError": "norma.errors",
    "generate_from_labels": "norma.names",
    "get_embedder": "norma.embeddings",
    "get_llm": "norma.llm",
    "import_rulebook": "norma.store",
    "InvalidInputError": "norma.errors",
    "LimitExceededError": "norma.errors",
    "load_documents": "norma.audit",
    "load_rubric": "norma.rubrics",
    "load_rulebook": "norma.rules",
    "load_rules": "norma.matching",
    "MatchConfig": "norma.matching",
    "MissingDependencyError": "norma.errors",
    "Norma": "norma.turns",
    "NormaError": "norma.errors",
    "NotFoundError": "norma.errors",
    "open": "norma.turns",
    "open_store": "norma.store",
    "quality_from_labels": "norma.names",
    "RateLimitedError": "norma.errors",
    "Rubric": "norma.rubrics",
    "RubricError": "norma.errors",
    "Rule": "norma.rules",
    "RuleMatcher": "norma.matching",
    "Scope": "norma.rules",
    "SessionState": "norma.matching",
    "StoreError": "norma.errors",
    "StoreUnavailableError": "norma.errors",
    "tenant_matcher": "norma.matching",
    "Tenants": "norma.turns",
    "TurnReport": "norma.turns",
    "variation_quality": "norma.names",
}
"""What a user calls: ``__all__``. The errors and ``__version__`` are imported with the package (they are cheap);
the capabilities' entry points on first use."""

_INTERNAL: dict[str, str] = {}
"""Nothing beyond ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
