"""Audit reports for people and CI systems: JSON, SARIF 2.1.0, JUnit XML, a Markdown job summary and a terminal
table; and
:func:`render_turns` the same formats (but the table) for checked turns (``norma check``, :mod:`norma.turns`).

Every renderer takes a sequence of ``(name, AuditReport)`` pairs (one pair for one audit, many for a batch);
:data:`RENDERERS` finds the text renderers by name and :func:`render` calls one.
"""

from __future__ import annotations

import typing as _typing

from norma._lazy import exports as _exports

if _typing.TYPE_CHECKING:
    from norma.reports._incomplete import Incomplete as Incomplete
    from norma.reports._incomplete import mark_incomplete as mark_incomplete
    from norma.reports._json import audit_document as audit_document
    from norma.reports._json import to_json as to_json
    from norma.reports._junit import to_junit as to_junit
    from norma.reports._markdown import to_markdown as to_markdown
    from norma.reports._registry import RENDERERS as RENDERERS
    from norma.reports._registry import Renderer as Renderer
    from norma.reports._registry import ReportItem as ReportItem
    from norma.reports._registry import exit_code as exit_code
    from norma.reports._registry import render as render
    from norma.reports._sarif import SARIF_SCHEMA as SARIF_SCHEMA
    from norma.reports._sarif import to_sarif as to_sarif
    from norma.reports._table import render_table as render_table
    from norma.reports._turns import TURN_FORMATS as TURN_FORMATS
    from norma.reports._turns import render_turns as render_turns
    from norma.reports._turns import turn_document as turn_document
    from norma.reports._turns import turns_exit_code as turns_exit_code

_PUBLIC: dict[str, str] = {
    "exit_code": "_registry",
    "render": "_registry",
    "render_turns": "_turns",
    "RENDERERS": "_registry",
    "to_json": "_json",
    "to_junit": "_junit",
    "to_markdown": "_markdown",
    "to_sarif": "_sarif",
}
"""What a user calls: ``__all__``; each name to the module that defines it (loaded on first use)."""

_INTERNAL: dict[str, str] = {
    "audit_document": "_json",
    "Incomplete": "_incomplete",
    "mark_incomplete": "_incomplete",
    "render_table": "_table",
    "Renderer": "_registry",
    "ReportItem": "_registry",
    "SARIF_SCHEMA": "_sarif",
    "turn_document": "_turns",
    "TURN_FORMATS": "_turns",
    "turns_exit_code": "_turns",
}
"""What norma's command line, service, MCP server and scripts use: importable from here, not in ``__all__``."""

__all__, __getattr__, __dir__ = _exports(globals(), _PUBLIC, _INTERNAL)
