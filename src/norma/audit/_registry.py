"""The rule registry: every rule declares its id, condition, detection, thresholds, exceptions, severity and
version (§9.01), and a check function. Built-in rules are registered by their modules; third-party packages add
rules through the entry-point group ``norma.audit_rules`` (an :class:`AuditRule`, a list of them, or a
zero-argument callable returning either).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any

from norma.audit._models import ContextType, Severity
from norma.errors import ConfigError

if TYPE_CHECKING:
    from norma.audit._context import AuditContext

__all__ = [
    "ENTRY_POINT_GROUP",
    "AuditRule",
    "Finding",
    "NotEvaluated",
    "RuleCheck",
    "builtin_rules",
    "register_builtin",
    "rule_registry",
]

ENTRY_POINT_GROUP = "norma.audit_rules"
RULE_ID = re.compile(r"^IR\.\d+\.\d+$")
TECHNICAL_ONLY = frozenset({ContextType.TECHNICAL})
ANY_CONTEXT = frozenset({ContextType.TECHNICAL, ContextType.CONVERSATIONAL})


@dataclass(frozen=True)
class Finding:
    """One violation a check found, before severity and location are filled in."""

    description: str
    line: int | None = None
    evidence: str = ""
    location: str | None = None
    """Override for the location text (``"documents"``, ``"input"``); default ``"output line N"``."""


@dataclass(frozen=True)
class NotEvaluated:
    """A check that could not run: what it needs is missing (documents, re-runs, embeddings)."""

    reason: str


RuleCheck = Callable[["AuditContext"], "Sequence[Finding] | NotEvaluated"]


@dataclass(frozen=True)
class AuditRule:
    """One executable rule ``IR.x.y``."""

    id: str
    title: str
    severity: Severity
    check: RuleCheck = field(repr=False, compare=False)
    condition: str
    detection: str
    exceptions: tuple[str, ...] = ()
    thresholds: tuple[str, ...] = ()
    """Names of the :class:`~norma.audit.AuditConfig` fields the rule reads (their values go in snapshots)."""
    contexts: frozenset[ContextType] = TECHNICAL_ONLY
    """Contexts the rule applies in (TECHNICAL: technical turns and technical segments of mixed ones)."""
    version: str = "1.0"
    """Bumped when the detection algorithm changes."""
    needs: tuple[str, ...] = ()
    """What it cannot run without: ``"documents"``, ``"embeddings"``, ``"reruns"``."""
    meta: bool = False
    """Runs after the others and sees their findings (IR.8.01)."""
    overrides: tuple[str, ...] = ()
    """More specific than these rules (§6): when this rule fires, their violations are dropped."""
    source: str = "builtin"

    def __post_init__(self) -> None:
        if not RULE_ID.match(self.id):
            raise ConfigError(f"audit rule id {self.id!r} does not follow IR.{{section}}.{{number}} (§9.01)")
        if not callable(self.check):
            raise ConfigError(f"audit rule {self.id} has no check function")

    def describe(self) -> dict[str, Any]:
        """The rule's declaration as plain data (what ``norma audit rules`` prints)."""
        return {
            "id": self.id,
            "title": self.title,
            "severity": self.severity.value,
            "version": self.version,
            "condition": self.condition,
            "detection": self.detection,
            "exceptions": list(self.exceptions),
            "thresholds": list(self.thresholds),
            "contexts": sorted(c.value for c in self.contexts),
            "needs": list(self.needs),
            "meta": self.meta,
            "overrides": list(self.overrides),
            "source": self.source,
        }


_BUILTIN: dict[str, AuditRule] = {}
_REGISTRY: dict[str, AuditRule] | None = None
_LOCK = threading.Lock()


def register_builtin(rule: AuditRule) -> AuditRule:
    """Add a built-in rule (called at import by the rule modules)."""
    _BUILTIN[rule.id] = rule
    return rule


def builtin_rules() -> dict[str, AuditRule]:
    """The rules norma ships, by id."""
    from norma.audit import _rules  # noqa: F401  (imports every rule module, which register themselves)

    return dict(sorted(_BUILTIN.items(), key=lambda item: _sort_key(item[0])))


def _sort_key(rule_id: str) -> tuple[int, ...]:
    return tuple(int(part) for part in rule_id[3:].split("."))


def _plugin_rules(entry_points: Iterable[metadata.EntryPoint]) -> list[AuditRule]:
    found: list[AuditRule] = []
    for entry in entry_points:
        try:
            loaded = entry.load()
        except Exception as exc:  # a broken plugin must say which one
            raise ConfigError(
                f"cannot load audit rules from entry point {entry.name!r} ({entry.value}): {exc}",
                hint=f"fix or uninstall the package that declares it in [{ENTRY_POINT_GROUP}]",
            ) from exc
        if callable(loaded) and not isinstance(loaded, AuditRule):
            loaded = loaded()
        items = [loaded] if isinstance(loaded, AuditRule) else list(loaded)
        for item in items:
            if not isinstance(item, AuditRule):
                raise ConfigError(
                    f"entry point {entry.name!r} ({entry.value}) gave {type(item).__name__}, not an AuditRule"
                )
            found.append(item)
    return found


def rule_registry(*, plugins: bool = True, refresh: bool = False) -> dict[str, AuditRule]:
    """Every rule by id: the built-ins plus (``plugins``) those of the ``norma.audit_rules`` entry points.

    Built once per process (behind a lock); ``refresh=True`` reads the entry points again.
    """
    global _REGISTRY
    if not plugins:
        return builtin_rules()
    registry = _REGISTRY
    if registry is not None and not refresh:
        return registry
    with _LOCK:
        if _REGISTRY is None or refresh:
            rules = builtin_rules()
            for rule in _plugin_rules(metadata.entry_points(group=ENTRY_POINT_GROUP)):
                if rule.id in rules:
                    raise ConfigError(
                        f"audit rule {rule.id} from {rule.source} is already registered by {rules[rule.id].source}",
                        hint="give the plugin rule another IR.x.y id",
                    )
                rules[rule.id] = rule
            _REGISTRY = dict(sorted(rules.items(), key=lambda item: _sort_key(item[0])))
        return _REGISTRY


def select_rules(rules: Sequence[AuditRule] | None) -> list[AuditRule]:
    """The rules to run: the given ones, or the registry's."""
    return list(rules) if rules is not None else list(rule_registry().values())
