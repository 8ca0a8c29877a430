"""The rule registry: the rules it is given (the built-ins, :data:`BUILTIN_RULES`, by default) merged with those
third-party packages declare in the entry-point group ``norma.audit_rules`` (an :class:`AuditRule`, a list of
them, or a zero-argument callable returning either). Rules are data: no module registers itself when imported.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from importlib import metadata

from norma.audit._builtin import BUILTIN_RULES
from norma.audit._rule import AuditRule
from norma.errors import ConfigError

__all__ = ["ENTRY_POINT_GROUP", "builtin_rules", "rule_registry", "select_rules"]

ENTRY_POINT_GROUP = "norma.audit_rules"


def _sort_key(rule_id: str) -> tuple[int, ...]:
    return tuple(int(part) for part in rule_id[3:].split("."))


def _merged(rules: dict[str, AuditRule], more: Iterable[AuditRule], *, clash: str, hint: str) -> dict[str, AuditRule]:
    """``rules`` plus ``more``, in id order; an id already there is a :class:`ConfigError` saying ``clash``
    (formatted with ``other``, the source of the rule already there)."""
    merged = dict(rules)
    for rule in more:
        if rule.id in merged:
            raise ConfigError(
                f"audit rule {rule.id} from {rule.source} " + clash.format(other=merged[rule.id].source), hint=hint
            )
        merged[rule.id] = rule
    return dict(sorted(merged.items(), key=lambda item: _sort_key(item[0])))


def _by_id(rules: Iterable[AuditRule]) -> dict[str, AuditRule]:
    """The rules by id, in id order; an id given twice is a :class:`ConfigError`."""
    return _merged({}, rules, clash="is given twice (also from {other})", hint="give each rule its own IR.x.y id")


def _with_plugins(rules: dict[str, AuditRule], plugins: Iterable[AuditRule]) -> dict[str, AuditRule]:
    """``rules`` plus the plugins' rules, in id order; a plugin may not reuse an id."""
    return _merged(
        rules, plugins, clash="is already registered by {other}", hint="give the plugin rule another IR.x.y id"
    )


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


def _read_entry_points() -> tuple[AuditRule, ...]:
    return tuple(_plugin_rules(metadata.entry_points(group=ENTRY_POINT_GROUP)))


def builtin_rules() -> dict[str, AuditRule]:
    """The rules norma ships (:data:`BUILTIN_RULES`), by id."""
    return _by_id(BUILTIN_RULES)


class _Registry:
    """What the entry points declare, read once per process, and the default registry built from it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._plugins: tuple[AuditRule, ...] | None = None
        """The entry points' rules (``refresh=True`` reads them again)."""
        self._default: tuple[tuple[AuditRule, ...], dict[str, AuditRule]] | None = None
        """The default registry (the built-ins plus the plugins), with the plugin rules it was built from."""

    def plugins(self, *, refresh: bool = False) -> tuple[AuditRule, ...]:
        """The entry points' rules, read on first use (behind the lock) or when ``refresh``."""
        loaded = self._plugins
        if loaded is None or refresh:
            with self._lock:
                if self._plugins is None or refresh:
                    self._plugins = _read_entry_points()
                loaded = self._plugins
        return loaded

    def default(self, *, refresh: bool = False) -> dict[str, AuditRule]:
        """The built-ins plus the plugins, built once per reading of the entry points."""
        cached = self._default
        if cached is not None and cached[0] is self._plugins and not refresh:
            return cached[1]
        with self._lock:
            loaded = _read_entry_points() if refresh or self._plugins is None else self._plugins
            if refresh or self._default is None or self._default[0] is not loaded:
                registry = _with_plugins(builtin_rules(), loaded)  # a clash keeps the previous registry and plugins
                self._plugins, self._default = loaded, (loaded, registry)
            return self._default[1]


_REGISTRY = _Registry()
"""The process's registry (entry points are the process's: read once, whoever asks)."""


def rule_registry(
    rules: Iterable[AuditRule] | None = None, *, plugins: bool = True, refresh: bool = False
) -> dict[str, AuditRule]:
    """Every rule by id, in id order: ``rules`` (default: the built-ins, :data:`BUILTIN_RULES`) plus
    (``plugins``) those of the ``norma.audit_rules`` entry points.

    The entry points are read once per process (behind a lock), and the default registry built once;
    ``refresh=True`` reads the entry points again. An id given twice is a :class:`~norma.errors.ConfigError`.
    """
    if rules is not None:
        given = _by_id(rules)
        if not plugins:
            return given
        return _with_plugins(given, _REGISTRY.plugins(refresh=refresh))
    if not plugins:
        return builtin_rules()
    return _REGISTRY.default(refresh=refresh)


def select_rules(rules: Sequence[AuditRule] | None) -> list[AuditRule]:
    """The rules to run: the given ones, or the registry's."""
    return list(rules) if rules is not None else list(rule_registry().values())
