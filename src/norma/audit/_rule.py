"""One audit rule as data: :class:`AuditRule` declares its id, condition, detection, thresholds, exceptions,
severity and version (§9.01) next to its check function; a check returns :class:`Finding` objects or
:class:`NotEvaluated`. Defining a rule registers nothing: the registry (``_registry``) merges the rules it is given.

A rule's texts (title, condition, detection, exceptions) are written in one language and translated into others
(:class:`RuleText`, ``AuditRule.translations``): the built-in rules are the spec's Spanish with English
translations, and every place that shows them (reports, ``norma audit rules``, SARIF) asks for one language.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from norma.audit._context import AuditContext
from norma.audit._models import ContextType, Severity, severity_label
from norma.errors import ConfigError

__all__ = [
    "ANY_CONTEXT",
    "TECHNICAL_ONLY",
    "AuditRule",
    "Finding",
    "NotEvaluated",
    "RuleCheck",
    "RuleText",
]

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


RuleCheck = Callable[[AuditContext], Sequence[Finding] | NotEvaluated]


@dataclass(frozen=True)
class RuleText:
    """A rule's texts in one language."""

    title: str
    condition: str
    detection: str
    exceptions: tuple[str, ...] = ()


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
    translations: Mapping[str, RuleText] = field(default_factory=dict, compare=False)
    """The rule's texts in other languages, by language code (``{"en": RuleText("Mandatory reference ...", ...)}``);
    a language without an entry uses the rule's own ``title``, ``condition``, ``detection`` and ``exceptions``."""

    def text_in(self, lang: str | None) -> RuleText:
        """The rule's texts in ``lang`` (``"en"``, ``"es"``), or its own when it has none in that language."""
        translated = self.translations.get(lang) if lang is not None else None
        if translated is not None:
            return translated
        return RuleText(self.title, self.condition, self.detection, self.exceptions)

    def title_in(self, lang: str | None) -> str:
        """The title in ``lang``, or ``title`` when the rule has none in that language."""
        return self.text_in(lang).title

    def __post_init__(self) -> None:
        if not RULE_ID.match(self.id):
            raise ConfigError(f"audit rule id {self.id!r} does not follow IR.{{section}}.{{number}} (§9.01)")
        if not callable(self.check):
            raise ConfigError(f"audit rule {self.id} has no check function")

    def describe(self, lang: str | None = None) -> dict[str, Any]:
        """The rule's declaration as plain data (what ``norma audit rules`` prints), its texts in ``lang``."""
        text = self.text_in(lang)
        return {
            "id": self.id,
            "title": text.title,
            "severity": severity_label(self.severity),
            "version": self.version,
            "condition": text.condition,
            "detection": text.detection,
            "exceptions": list(text.exceptions),
            "thresholds": list(self.thresholds),
            "contexts": sorted(c.value for c in self.contexts),
            "needs": list(self.needs),
            "meta": self.meta,
            "overrides": list(self.overrides),
            "source": self.source,
        }
