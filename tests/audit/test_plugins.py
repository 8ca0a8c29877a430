"""Third-party rules arrive through the ``norma.audit_rules`` entry-point group of an installed distribution."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from norma.audit import BUILTIN_RULES, AuditConfig, AuditRule, Severity, analyze, rule_registry
from norma.errors import ConfigError

PLUGIN = """
from norma.audit import AuditRule, Finding, Severity

def _check(ctx):
    return [Finding("TODO left in the output", line.number, "TODO")
            for line in ctx.output.lines if "TODO" in line.text]

RULE = AuditRule(id="IR.9.01", title="No TODO", severity=Severity.WARNING, check=_check,
                 condition="output técnico", detection="the word TODO", source="norma-todo-plugin")
"""


def _install(tmp_path: Path, module: str, target: str) -> None:
    (tmp_path / f"{module}.py").write_text(PLUGIN, encoding="utf-8")
    info = tmp_path / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[norma.audit_rules]\ntodo = {target}\n", encoding="utf-8")


@pytest.fixture
def plugin_path(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        rule_registry(refresh=True)


def test_plugin_rule_is_registered_and_runs(plugin_path: Path) -> None:
    _install(plugin_path, "norma_todo_plugin", "norma_todo_plugin:RULE")
    registry = rule_registry(refresh=True)
    assert "IR.9.01" in registry
    report = analyze(
        {"input": "Implementa la clase FlowShaper", "output": "Creo FlowShaper.\nTODO: tests"},
        config=AuditConfig(embeddings=False),
    )
    assert [(v.rule, v.line) for v in report.violations if v.rule == "IR.9.01"] == [("IR.9.01", 2)]


def test_broken_plugin_is_a_config_error(plugin_path: Path) -> None:
    _install(plugin_path, "norma_broken_plugin", "norma_broken_plugin:NOPE")
    with pytest.raises(ConfigError, match="norma_broken_plugin:NOPE"):
        rule_registry(refresh=True)


def _rule(rule_id: str, source: str = "tests") -> AuditRule:
    return AuditRule(
        id=rule_id, title="t", severity=Severity.WARNING, check=lambda ctx: [], condition="c", detection="d",
        source=source,
    )  # fmt: skip


def test_given_rules_are_merged_with_plugins(plugin_path: Path) -> None:
    _install(plugin_path, "norma_todo_plugin", "norma_todo_plugin:RULE")
    assert list(rule_registry([_rule("IR.9.02"), _rule("IR.1.01")], refresh=True)) == ["IR.1.01", "IR.9.01", "IR.9.02"]
    assert list(rule_registry([_rule("IR.1.01")], plugins=False)) == ["IR.1.01"]
    # the default registry reads the same plugins: the built-ins plus IR.9.01
    assert list(rule_registry()) == [r.id for r in BUILTIN_RULES] + ["IR.9.01"]


def test_plugin_may_not_reuse_a_given_id(plugin_path: Path) -> None:
    _install(plugin_path, "norma_todo_plugin", "norma_todo_plugin:RULE")
    with pytest.raises(ConfigError, match=r"IR\.9\.01 from norma-todo-plugin is already registered by tests"):
        rule_registry([_rule("IR.9.01")], refresh=True)
