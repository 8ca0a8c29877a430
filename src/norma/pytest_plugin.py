"""norma's pytest plugin: the ``--norma-*`` options, their ini settings and the fixtures over them.

Registered with pytest through the ``pytest11`` entry point (``norma = "norma.pytest_plugin"``), so pytest loads it
in every session of every project where norma is installed: this module imports nothing of norma's capabilities
(they load when a fixture first runs), and it adds no hooks beyond the options and a report header line.

Options (command line first, then the ini setting of the same name with ``_``; paths on the command line are
relative to the current folder, in the ini file relative to the ini file's folder):

* ``--norma-rules FILE`` / ``norma_rules``: the rulebook of the ``norma_rules`` fixture;
* ``--norma-audit-docs DIR`` / ``norma_audit_docs``: the normative documents of the ``norma_audit`` fixture;
* ``--norma-audit-config FILE`` / ``norma_audit_config``: its thresholds JSON file.

Fixtures (session-scoped, so the rulebook and the documents are loaded once):

* ``norma_rules``: a :class:`norma.matching.RuleMatcher` for :func:`norma.testing.assert_matches`;
* ``norma_check``: the :class:`norma.Norma` of ``norma_rules`` for
  :func:`norma.testing.assert_turn_passes` (``judge`` checks ask ``$NORMA_LLM_URL``, skipped without it);
* ``norma_audit``: a :class:`norma.testing.Auditor`: ``norma_audit(output, input=...)`` is the report,
  ``norma_audit.assert_passes(output, input=...)`` the assertion.

The assertion helpers themselves are in :mod:`norma.testing`; see docs/pytest.md.

PYTEST_DONT_REWRITE: this module has no ``assert`` to rewrite, and the marker lets pytest load it when it is already
imported (``-p norma.pytest_plugin`` in a session where something imported it) without a warning.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from norma.matching import RuleMatcher
    from norma.testing import Auditor
    from norma.turns import Norma

__all__ = [
    "norma_audit",
    "norma_check",
    "norma_rules",
    "pytest_addoption",
    "pytest_report_header",
]

_OPTIONS = (
    ("norma_rules", "FILE", "rulebook (YAML or JSON) of the norma_rules fixture"),
    ("norma_audit_docs", "DIR", "folder of normative documents of the norma_audit fixture"),
    ("norma_audit_config", "FILE", "audit thresholds JSON file of the norma_audit fixture"),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("norma", "norma (rules for AI behaviour)")
    for name, metavar, text in _OPTIONS:
        flag = "--" + name.replace("_", "-")
        group.addoption(flag, dest=name, metavar=metavar, default=None, help=f"{text} (ini: {name})")
        parser.addini(name, f"{text} (command line: {flag})", default="")


def _setting(config: pytest.Config, name: str) -> Path | None:
    """The path an option names: the command line's (relative to where pytest runs), else the ini file's (relative
    to the ini file), else None."""
    given = config.getoption(name)
    if given:
        return config.invocation_params.dir / str(given)
    value = str(config.getini(name)).strip()
    if not value:
        return None
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return base / value


def pytest_report_header(config: pytest.Config) -> list[str]:
    """One line naming the files the norma fixtures use, when any is set."""
    settings = [(name, _setting(config, name)) for name, _, _ in _OPTIONS]
    shown = [f"{name}={path}" for name, path in settings if path is not None]
    return [f"norma: {', '.join(shown)}"] if shown else []


@pytest.fixture(scope="session")
def norma_rules(pytestconfig: pytest.Config) -> RuleMatcher:
    """The matcher of the rulebook named by ``--norma-rules`` or the ``norma_rules`` ini setting, loaded once."""
    from norma.errors import NormaError
    from norma.testing import rulebook_matcher

    path = _setting(pytestconfig, "norma_rules")
    if path is None:
        pytest.fail(
            "the norma_rules fixture needs a rulebook: set norma_rules in the ini file or pass --norma-rules FILE",
            pytrace=False,
        )
    try:
        return rulebook_matcher(path)
    except NormaError as exc:
        pytest.fail(f"norma_rules: {exc}", pytrace=False)


@pytest.fixture(scope="session")
def norma_check(norma_rules: RuleMatcher) -> Norma:
    """The :class:`~norma.Norma` of the ``norma_rules`` rulebook, opened once: ``norma_check.check(message,
    output)`` is the :class:`~norma.turns.TurnReport`, ``assert_turn_passes(message, output, rules=norma_check)`` the
    assertion. Its ``judge`` checks ask the LLM of ``$NORMA_LLM_URL`` (skipped without one)."""
    from norma.testing import turn_checker

    return turn_checker(norma_rules)


@pytest.fixture(scope="session")
def norma_audit(pytestconfig: pytest.Config) -> Auditor:
    """An :class:`~norma.testing.Auditor` over ``--norma-audit-docs`` and ``--norma-audit-config`` (or their ini
    settings; without documents the rules that need them are not evaluated), loaded once."""
    from norma.errors import NormaError
    from norma.testing import Auditor

    auditor = Auditor(_setting(pytestconfig, "norma_audit_docs"), _setting(pytestconfig, "norma_audit_config"))
    try:
        _ = auditor.config, auditor.documents  # load both now: a bad file is the fixture's error, once
    except NormaError as exc:
        pytest.fail(f"norma_audit: {exc}", pytrace=False)
    return auditor
