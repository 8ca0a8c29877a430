"""norma: a rules engine for AI behaviour.

Four capabilities share one idea of a rule (a named, versioned statement of expected behaviour):
``norma.rubrics`` turns per-criterion judgements into a reward, ``norma.names`` scores MIID name variations,
``norma.embeddings`` embeds text offline, and the matching and audit capabilities build on them.
"""

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
)

__all__ = [
    "AuthenticationError",
    "BackendError",
    "ConfigError",
    "ConflictError",
    "ForbiddenError",
    "InvalidInputError",
    "LimitExceededError",
    "MissingDependencyError",
    "NormaError",
    "NotFoundError",
    "RateLimitedError",
    "RubricError",
    "StoreError",
    "__version__",
]
