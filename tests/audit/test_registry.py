"""The built-in rules are data (``BUILTIN_RULES``); the registry merges the rules it is given with the plugins'.
A rule module imports neither the registry nor another rule family, and no module imports ``norma.audit`` itself."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import norma.audit
from norma.audit import BUILTIN_RULES, AuditRule, builtin_rules, rule_registry, ruleset_snapshot
from norma.errors import ConfigError

AUDIT_SRC = Path(norma.audit.__file__).parent


def _key(rule: AuditRule) -> tuple[int, ...]:
    return tuple(int(part) for part in rule.id[3:].split("."))


def test_builtin_rules_are_a_tuple_in_id_order() -> None:
    assert isinstance(BUILTIN_RULES, tuple)
    assert all(isinstance(rule, AuditRule) and rule.source == "builtin" for rule in BUILTIN_RULES)
    assert list(BUILTIN_RULES) == sorted(BUILTIN_RULES, key=_key)
    assert len({rule.id for rule in BUILTIN_RULES}) == len(BUILTIN_RULES)
    assert list(builtin_rules().values()) == list(BUILTIN_RULES)
    assert list(rule_registry(plugins=False).values()) == list(BUILTIN_RULES)


def test_given_rules_replace_the_builtins() -> None:
    chosen = [BUILTIN_RULES[-1], BUILTIN_RULES[0]]
    assert list(rule_registry(chosen, plugins=False)) == [BUILTIN_RULES[0].id, BUILTIN_RULES[-1].id]
    assert list(rule_registry(BUILTIN_RULES, plugins=False)) == list(builtin_rules())
    assert rule_registry([], plugins=False) == {}
    assert ruleset_snapshot(chosen)["rules"].keys() == {BUILTIN_RULES[0].id, BUILTIN_RULES[-1].id}


def test_an_id_given_twice_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"IR\.0\.01 from builtin is given twice"):
        rule_registry([BUILTIN_RULES[0], BUILTIN_RULES[0]], plugins=False)


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("path", sorted(AUDIT_SRC.rglob("*.py")), ids=lambda p: str(p.relative_to(AUDIT_SRC)))
def test_no_module_imports_the_package_itself_or_another_rule_family(path: Path) -> None:
    imported = _imports(path)
    if path.name != "__init__.py" or path.parent != AUDIT_SRC:
        assert "norma.audit" not in imported, "import the private module directly, not norma.audit"
    if path.parent.name == "_rules":
        assert "norma.audit._rules" not in imported
        assert "norma.audit._registry" not in imported
        families = {name for name in imported if name.startswith("norma.audit._rules.ir")}
        assert families <= {f"norma.audit._rules.{path.stem}"}, "share helpers through a module both import"
