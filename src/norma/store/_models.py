"""What the store returns besides rules: a rule's past versions, API keys, what an import would change."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict

from norma.rules import Rule

__all__ = ["ApiKey", "RuleVersion", "RulebookChanges"]


class RuleVersion(BaseModel):
    """One committed change of one rule: what it became (``rule``), or its deletion (``rule`` is None)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    rule_id: str
    """The rule's id."""
    version: int
    """The rule's own version: 1 for its first write, +1 for each later change or deletion."""
    tenant_version: int
    """The tenant's rule-set version this change produced."""
    rule: Rule | None
    """The rule as written by this change; None when the change deleted it."""
    changed_at: datetime
    """When the change was committed (UTC)."""

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return self.model_dump(mode="json")


class ApiKey(BaseModel):
    """An API key as stored (never its secret): who it belongs to and what it may do."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    key_id: str
    """Public identifier of the key (also the first part of its secret)."""
    tenant_id: str | None
    """The one tenant the key may act for; None for an admin key (every tenant)."""
    admin: bool = False
    """Admin keys may manage every tenant and other keys."""
    name: str = ""
    """A label for people ("ci", "support-bot")."""
    created_at: datetime | None = None
    """When the key was created (UTC)."""
    revoked_at: datetime | None = None
    """When the key was revoked; a revoked key never authenticates."""

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return self.model_dump(mode="json")


class RulebookChanges(BaseModel):
    """What importing a rulebook into a tenant changes (or would change): rule ids, each list sorted."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True, use_attribute_docstrings=True)

    tenant_id: str
    """The tenant the rulebook goes into."""
    added: tuple[str, ...] = ()
    """Rules the tenant does not have yet."""
    updated: tuple[str, ...] = ()
    """Rules the tenant has, in another form."""
    deleted: tuple[str, ...] = ()
    """Stored rules the rulebook leaves out (deleted only by a pruning import)."""
    unchanged: tuple[str, ...] = ()
    """Rules stored exactly as the rulebook has them."""

    @property
    def changed(self) -> bool:
        """Whether the import changes anything (and so makes a new version)."""
        return bool(self.added or self.updated or self.deleted)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return self.model_dump(mode="json")
