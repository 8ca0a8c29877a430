"""Every error norma raises on purpose.

The tree (a class that lives outside this module names, in parentheses, the package that exports it)::

    NormaError                      root: catch this to catch anything norma raises on purpose
    ├── InvalidInputError           bad user input (file, text, record, argument); ValueError too
    │   ├── RubricError             a rubric that cannot be loaded or fails validation
    │   │   ├── RubricFileError (norma.rubrics)           a rubric file that cannot be read; OSError too
    │   │   │   ├── RubricFileMissingError (norma.rubrics)    no such file; FileNotFoundError too
    │   │   │   ├── RubricIsADirectoryError (norma.rubrics)   a directory; IsADirectoryError too
    │   │   │   └── RubricPermissionError (norma.rubrics)     not readable; PermissionError too
    │   │   ├── RubricJSONError (norma.rubrics)           malformed JSON; json.JSONDecodeError too
    │   │   ├── RubricYAMLError (norma.rubrics)           malformed YAML; yaml.YAMLError too
    │   │   └── BackendJudgeFormatError (norma.rubrics)   a backend judge rubric where a task rubric is expected
    │   ├── RulebookError (norma.rules)   a rulebook with problems; ``problems`` lists every one
    │   ├── LabelledMessagesError (norma.matching)   a labelled-messages file with a bad line or rule id
    │   └── LimitExceededError      input larger than a configured limit (size, count, depth)
    ├── NotFoundError               a tenant, rule, key or document that does not exist; LookupError too
    ├── ConflictError               a write that conflicts with what is stored (duplicate id, stale version)
    ├── RateLimitedError            too many requests for a key; carries ``retry_after`` seconds
    ├── AuthenticationError         no credentials, or ones that are unknown, malformed or revoked
    │   └── UnauthorizedError (norma.service)   no valid API key on a request (HTTP 401)
    ├── ForbiddenError              a known caller asking for something it may not do
    ├── ConfigError                 a setting, environment variable or config file that makes no sense
    ├── MissingDependencyError      an optional package or model is not installed; ImportError too
    ├── StoreError                  the rule store could not read or write; nothing half-written is kept
    │   └── StoreUnavailableError   the store could not be reached or did not answer in time (retry later)
    ├── BackendError                a model, LLM or HTTP backend failed or answered nonsense
    │   ├── LLMBackendError (norma.llm)   a chat model's server that failed after every retry and fallback model
    │   │                                 (the guarded endpoint answers its fault as HTTP 502 / 504)
    │   └── JudgeError (norma.llm)        a judge's reply that is not a verdict (never read as a pass)
    └── RequestTimeoutError (norma.service)   a request that ran past the service's ``request_timeout``

Each error carries *what* went wrong (the message), *where* (``source``: a file, a record, a rule id;
``line`` and ``column``: 1-based, when the error sits at a place in a text; ``location``: a field path) and *what to
do* (``hint``). ``str(error)`` renders all of them on one line, which is what the CLI prints before exiting with
status 2; an error with a line starts as editors and CI problem matchers read it, ``FILE:LINE:COL: field: message``
(``FILE:LINE: message`` without a column).

Where a compatibility format promises a builtin exception (the synth-ai rubric loaders raise
``ValueError``), the matching subclass derives from that builtin too, so existing ``except ValueError`` blocks keep
working.
"""

from __future__ import annotations

import re

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
    "StoreUnavailableError",
]


class NormaError(Exception):
    """Root of every error norma raises on purpose.

    Args:
        message: what went wrong, in one sentence.
        source: the input it came from (a file path, URL, ``"<dict>"``, a record id), if any.
        location: the field path in that input (``"criteria[1].weight"``), if known. A location written as a place
            in a text, ``"line 12"`` or ``"line 12, column 7"`` (and maybe ``", field"`` after it), is read into
            ``line`` and ``column`` (the field stays the location).
        line: the 1-based line of ``source`` the error is at, if known.
        column: the 1-based column (in characters) on that line, if known.
        hint: what the user can do about it, if anything useful can be said.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        location: str | None = None,
        line: int | None = None,
        column: int | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        if line is None and location is not None and (written := _PLACE.fullmatch(location)) is not None:
            line, column = int(written["line"]), int(written["column"]) if written["column"] else None
            location = written["field"]
        self.message = message
        self.source = source
        self.location = location
        self.line = line
        self.column = column
        self.hint = hint

    @property
    def position(self) -> str | None:
        """``source:line:column`` (``source:line`` without a column), as editors and CI problem matchers read it,
        when the error has a line; ``line L, column C`` when it has a line but no source; else None."""
        if self.line is None:
            return None
        if self.source is None:
            return f"line {self.line}" + (f", column {self.column}" if self.column is not None else "")
        return ":".join(str(part) for part in (self.source, self.line, self.column) if part is not None)

    def __str__(self) -> str:
        if self.line is not None:
            where = ": ".join(part for part in (self.position, self.location) if part)
        else:
            where = ":".join(part for part in (self.source, self.location) if part)
        text = f"{where}: {self.message}" if where else self.message
        if self.hint:
            text = f"{text} ({self.hint})"
        return " ".join(text.split("\n"))


_PLACE = re.compile(r"line (?P<line>\d+)(?:, column (?P<column>\d+))?(?:, (?P<field>.+))?", re.DOTALL)
"""A location written as a place in a text (``line 12, column 7``), which :class:`NormaError` reads into ``line``
and ``column``."""


class InvalidInputError(NormaError, ValueError):
    """Bad user input: a file, text, record or argument norma cannot accept as given."""


class RubricError(InvalidInputError):
    """A rubric that cannot be loaded, or that fails (strict) validation."""


class LimitExceededError(InvalidInputError):
    """Input larger than a configured limit (bytes, items, nesting depth); rejected before any work starts."""


class NotFoundError(NormaError, LookupError):
    """A tenant, rule, API key or document that does not exist (or that the caller may not see)."""


class ConflictError(NormaError):
    """A write that conflicts with what is stored: a duplicate id, or a change based on a stale version."""


class RateLimitedError(NormaError):
    """Too many requests for one key; ``retry_after`` says how many seconds to wait."""

    def __init__(self, message: str, *, retry_after: float, source: str | None = None) -> None:
        super().__init__(message, source=source, hint=f"retry after {retry_after:.0f} s")
        self.retry_after = retry_after


class AuthenticationError(NormaError):
    """No credentials, or credentials that are unknown, malformed or revoked (the service answers 401)."""


class ForbiddenError(NormaError):
    """A known caller asking for something it may not do (the service answers 403)."""


class ConfigError(NormaError):
    """A setting, environment variable or configuration file that is missing or makes no sense."""


class MissingDependencyError(NormaError, ImportError):
    """An optional package, or a model shipped as a package, is not installed.

    Args:
        feature: what needs it (``"PostgreSQL rule store"``).
        extra: the norma extra that provides it (``"postgres"``), if there is one.
        install: the exact command that installs it.
    """

    def __init__(self, feature: str, *, install: str, extra: str | None = None, source: str | None = None) -> None:
        super().__init__(
            f"{feature} needs a package that is not installed",
            source=source,
            hint=f"install it with: {install}",
        )
        self.feature = feature
        self.extra = extra
        self.install = install


class StoreError(NormaError):
    """The rule store could not read or write; a failed write leaves what was stored unchanged."""


class StoreUnavailableError(StoreError):
    """The rule store could not be reached, or did not answer within its deadline: a failed write was not written
    (it is rolled back, or never committed; :attr:`in_doubt` is the exception), and retrying later may succeed."""

    retry_after: float = 1.0
    """Seconds after which a retry may find the store again (a service sends it as ``Retry-After``)."""
    in_doubt: bool = False
    """True for the one failed write that may be stored: the connection to PostgreSQL was lost while it committed
    the write, and the server did not come back before the write's deadline to say whether the commit happened.
    Read it back once the store answers again, or repeat it (importing the same rules again changes nothing)."""


class BackendError(NormaError):
    """A model, LLM or HTTP backend failed, timed out or answered something norma cannot use."""
