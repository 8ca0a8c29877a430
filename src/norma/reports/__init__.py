"""Audit reports for people and CI systems: JSON, SARIF 2.1.0, JUnit XML, a Markdown job summary and a terminal
table; and
:func:`render_turns` the same formats (but the table) for checked turns (``norma check``, :mod:`norma.turns`).

Every renderer takes a sequence of ``(name, AuditReport)`` pairs (one pair for one audit, many for a batch);
:data:`RENDERERS` finds the text renderers by name and :func:`render` calls one.
"""

from __future__ import annotations

from norma.reports._json import to_json
from norma.reports._junit import to_junit
from norma.reports._markdown import to_markdown
from norma.reports._registry import RENDERERS, Renderer, ReportItem, exit_code, render
from norma.reports._sarif import SARIF_SCHEMA, to_sarif
from norma.reports._table import render_table
from norma.reports._turns import TURN_FORMATS, render_turns, turn_document, turns_exit_code

__all__ = [
    "RENDERERS",
    "Renderer",
    "ReportItem",
    "SARIF_SCHEMA",
    "TURN_FORMATS",
    "exit_code",
    "render",
    "render_table",
    "render_turns",
    "to_json",
    "to_junit",
    "to_markdown",
    "to_sarif",
    "turn_document",
    "turns_exit_code",
]
