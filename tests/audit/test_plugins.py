"""Third-party rules arrive through the ``norma.audit_rules`` entry-point group of an installed distribution."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from norma.audit import AuditConfig, analyze, rule_registry
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
