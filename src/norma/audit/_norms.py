"""Whose norms an audit checks against: the documents' acronyms and their priority (§6), the file names that
stand for an acronym, the prefixes of bare rule ids, and the organisation's own technical keywords (§4.01).

The default, :data:`DEFAULT_NORMS`, is the spec's set (NetShaper's DNS > DR > ICR > RED > IRA, ``R2.01`` rule ids,
the spec's file names); any other organisation configures its own in ``AuditConfig.norms`` (docs/audit.md,
"Norms of any organisation"). Everything here is plain data: the regular expressions built from it are escaped
literals, so a configuration cannot make a pattern slow.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

__all__ = ["DEFAULT_NORMS", "NormsConfig", "SPEC_FILE_NAMES", "SPEC_PRIORITY"]

SPEC_PRIORITY: tuple[str, ...] = ("DNS", "DR", "ICR", "RED", "IRA")
"""§6: the spec's conflict resolution order, highest authority first."""

SPEC_FILE_NAMES: dict[str, str] = {
    "documento_normativo_superior": "DNS",
    "domain_rules": "DR",
    "ia_context_rules": "ICR",
    "reglas_ejecutables_derivadas": "RED",
    "ia_rules_analyzer": "IRA",
}
"""File name stems (case-insensitive) the spec uses for each acronym (§1)."""

MAX_ACRONYMS = 64
"""Most acronyms, rule prefixes, file names or keywords a norms configuration lists."""

Acronym = Annotated[str, StringConstraints(pattern=r"^[A-Z][A-Z0-9]{0,15}$")]
"""A document's acronym as it is cited: capitals and digits, a capital first (``DNS``, ``SEC``, ``ISO27``)."""
RulePrefix = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9]{0,15}[-_]?$")]
"""What a bare rule id starts with: ``R`` (``R2.01``) or ``POL-`` (``POL-12``)."""
Keyword = Annotated[str, StringConstraints(min_length=1, max_length=100)]


class NormsConfig(BaseModel):
    """An organisation's normative documents as the analyzer needs to know them (the spec's set by default)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    priority: tuple[Acronym, ...] = Field(default=SPEC_PRIORITY, min_length=1, max_length=MAX_ACRONYMS)
    """The documents' acronyms, highest authority first (§6). References are these acronyms followed by a section
    (``DNS §2.03``, ``SEC 2.1``, ``DR R2.01``); a document whose acronym is not listed ranks after all of them,
    equal with the other unlisted ones (two of them defining one bare rule id are an unresolved conflict)."""
    file_names: dict[str, Acronym] = Field(default_factory=lambda: dict(SPEC_FILE_NAMES), max_length=MAX_ACRONYMS)
    """File name stem (case-insensitive) -> acronym, for documents that declare no acronym themselves."""
    rule_prefixes: tuple[RulePrefix, ...] = Field(default=("R",), max_length=MAX_ACRONYMS)
    """Prefixes of bare rule ids, cited without a document (resolved by priority) and heading a section of a
    document. A prefix ending in a letter or digit takes a dotted number (``R2.01``, never ``R2``); one ending in
    ``-`` or ``_`` takes any number (``POL-12``, ``POL-3.1``)."""
    keywords: tuple[Keyword, ...] = Field(default=("Engine", "NetShaper"), max_length=MAX_ACRONYMS)
    """The organisation's own technical keywords for §4.01 (product and component names), on top of
    ``technical_keywords.txt``; the acronyms of ``priority`` count as technical keywords too."""

    @field_validator("file_names", mode="after")
    @classmethod
    def _lower_stems(cls, value: dict[str, str]) -> dict[str, str]:
        return {stem.strip().lower(): acronym for stem, acronym in value.items()}

    @property
    def technical_keywords(self) -> tuple[str, ...]:
        """``priority``'s acronyms and ``keywords``: what §4.01 counts on top of the packaged list."""
        return tuple(dict.fromkeys((*self.priority, *self.keywords)))

    @property
    def not_concepts(self) -> frozenset[str]:
        """Words that name the norms themselves, never technical concepts: the acronyms and the rule prefixes."""
        return frozenset((*self.priority, *(p.rstrip("-_") for p in self.rule_prefixes)))

    def rank(self, acronym: str) -> int:
        """§6: 1 for the highest authority; every unlisted acronym ranks ``len(priority) + 1``."""
        try:
            return self.priority.index(acronym) + 1
        except ValueError:
            return len(self.priority) + 1

    def rule_id_regex(self) -> str:
        """A regular expression (Python syntax, escaped literals only) for a bare rule id."""
        parts = []
        for prefix in sorted(self.rule_prefixes, key=len, reverse=True):
            number = r"\d+(?:\.\d+)*" if prefix[-1] in "-_" else r"\d+(?:\.\d+)+"
            parts.append(re.escape(prefix) + number)
        return "|".join(parts) if parts else r"(?!x)x"


DEFAULT_NORMS = NormsConfig()
"""The spec's documents: DNS > DR > ICR > RED > IRA, rule ids ``R2.01``, keywords Engine and NetShaper."""
