"""``norma merge``: the outputs of ``--shard 1/N`` .. ``N/N`` put back together as one run would have written them.

Shards are contiguous runs of records (:class:`~norma.batch.Shard`), so the merged records are the shards'
records one after the other, in shard order; totals, means and verdicts are recomputed from the merged records
with the same code a single run uses, and the exit code is what that run would have returned for them. Formats:

* JSON of ``norma names score``, ``norma match --batch``, ``norma check --batch``, ``norma rubric eval --batch``
  (``results`` + totals);
* JSON of ``norma audit --batch`` (``reports`` + ``summary``; a single run of one record writes the bare report);
* JSON Lines (any of them with ``--format jsonl``: the lines one after the other);
* SARIF 2.1.0 and JUnit XML of ``norma audit --batch`` and ``norma check --batch``.

The output of a run stopped before its end (``norma check --batch`` interrupted: JSON ``"incomplete": true``, SARIF
``executionSuccessful: false``, JUnit's ``incomplete`` suite) is refused: merged, the records it lacks would go
unnoticed. A JSON Lines output looks the same complete or not (finish it with ``--resume``).

A shard's errors (bad records, exit 2) are not in its output: the shard's own job reports them (the JSON of
``norma check``, ``match``, ``rubric eval`` and ``audit`` batches counts them, ``bad``, and the merged document adds
the shards' counts up; the merge's exit code, as before, is the rows').
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal
from xml.etree import ElementTree as ET

from norma._safety import json_lines
from norma.audit import AuditReport
from norma.batch._summaries import match_document, names_document, rubric_document, seed_spread_document
from norma.errors import InvalidInputError
from norma.reports import Incomplete, audit_document, exit_code, render, turn_document
from norma.rules import FailOn, Severity

__all__ = ["MERGE_FORMATS", "MergeFormat", "MergedOutput", "audit_shard_json", "detect_format", "merge_outputs"]

MergeFormat = Literal["names", "match", "check", "rubric", "audit", "jsonl", "sarif", "junit"]
MERGE_FORMATS: tuple[MergeFormat, ...] = ("names", "match", "check", "rubric", "audit", "jsonl", "sarif", "junit")
"""What :func:`merge_outputs` merges (``names`` / ``match`` / ``check`` / ``rubric`` / ``audit``: those commands'
JSON)."""

_LINE_END = re.compile(r":(\d+)$")


@dataclass(frozen=True)
class MergedOutput:
    """The merged document and the exit code one run over all the records would have returned."""

    format: MergeFormat
    text: str
    exit_code: int
    records: int


def audit_shard_json(
    items: Sequence[tuple[str, AuditReport]],
    fail_on: str = "error",
    bad: Sequence[tuple[str, str]] = (),
    *,
    incomplete: Incomplete | None = None,
) -> str:
    """``norma audit --batch --shard i/N --format json``: always the list form (``reports`` with each record's
    name), even for a shard of one record, so that :func:`merge_outputs` knows every record's name; ``bad`` records
    are counted, ``incomplete`` marks a shard stopped before its end."""
    return json.dumps(audit_document(items, len(bad), incomplete), indent=2, ensure_ascii=False) + "\n"


def _json(name: str, text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"not valid JSON ({exc.msg})", source=name, location=f"line {exc.lineno}") from None


def detect_format(name: str, text: str) -> MergeFormat:
    """Which kind of output ``text`` is (:data:`MERGE_FORMATS`).

    Raises:
        InvalidInputError: none of them.
    """
    stripped = text.lstrip()
    if stripped.startswith("<?xml") or stripped.startswith("<testsuites"):
        return "junit"
    lines = [line for line in json_lines(stripped) if line.strip()]
    if not lines:
        return "jsonl"
    if len(lines) > 1 and all(line.startswith("{") and line.rstrip().endswith("}") for line in lines):
        try:
            for line in lines:
                json.loads(line)
        except json.JSONDecodeError:
            pass
        else:
            return "jsonl"
    document = _json(name, text)
    if isinstance(document, dict):
        if "runs" in document and "version" in document:
            return "sarif"
        if ("reports" in document and "summary" in document) or {"result", "rules", "metrics"} <= document.keys():
            return "audit"
        if "compat" in document and "results" in document:
            return "names"
        if "messages" in document and "results" in document:
            return "match"
        if "turns" in document and "results" in document:
            return "check"
        if "rubric" in document and "results" in document:
            return "rubric"
        if len(lines) == 1:
            return "jsonl"
    raise InvalidInputError(
        "not an output norma merge knows",
        source=name,
        hint="merge the JSON, JSON Lines, SARIF or JUnit outputs of --shard runs",
    )


def _incomplete(name: str) -> InvalidInputError:
    return InvalidInputError(
        "the output of an interrupted run (incomplete): merged, the records it lacks would go unnoticed",
        source=name,
        hint="run that shard again; a --format jsonl --out FILE run is finished with --resume",
    )


def _check_order(positions: list[tuple[str, int]]) -> None:
    for (before_name, before), (name, position) in itertools.pairwise(positions):
        if position <= before:
            raise InvalidInputError(
                f"line {position} comes after line {before} of {before_name}",
                source=name,
                hint="give the shard outputs in shard order (1/N first)",
            )


def _same(name: str, documents: list[tuple[str, dict[str, Any]]], keys: Sequence[str]) -> None:
    first_name, first = documents[0]
    for other_name, other in documents[1:]:
        for key in keys:
            if other.get(key) != first.get(key):
                raise InvalidInputError(
                    f"{key} is {other.get(key)!r} here but {first.get(key)!r} in {first_name}",
                    source=other_name,
                    hint=f"merge outputs of one {name} run split with --shard",
                )


def _merge_results(kind: MergeFormat, shards: list[tuple[str, str]]) -> MergedOutput:
    documents = [(name, _json(name, text)) for name, text in shards]
    for name, document in documents:
        if document.get("incomplete"):
            raise _incomplete(name)
    rows = [(name, row) for name, document in documents for row in document["results"]]
    _check_order([(name, row["line"]) for name, row in rows if isinstance(row.get("line"), int)])
    merged_rows = [row for _, row in rows]
    bad = sum(shard.get("bad", 0) for _, shard in documents)  # a shard's bad records have no row: its count
    code = 0
    if kind == "names":
        first = documents[0][1]
        if "hash_seeds" in first:
            _same("names score", documents, ("compat", "hash_seeds", "seed_count"))
            document = seed_spread_document(merged_rows, first["compat"], first["hash_seeds"], first["seed_count"])
        else:
            _same("names score", documents, ("compat", "hash_seed"))
            document = names_document(merged_rows, first["compat"], first["hash_seed"])
    elif kind == "match":
        _same("match --batch", documents, ("rules",))
        document = match_document(merged_rows, documents[0][1]["rules"], bad)
        code = 0 if document["matched"] or not merged_rows else 1
    elif kind == "check":
        _same("check --batch", documents, ("rules",))
        document = turn_document(merged_rows, documents[0][1]["rules"], bad)
        code = 1 if any(row.get("failing", row.get("verdict") == "fail") for row in merged_rows) else 0
    else:
        _same("rubric eval --batch", documents, ("rubric",))
        document = rubric_document(merged_rows, documents[0][1]["rubric"], bad)
        code = 1 if document["failed"] else 0
    return MergedOutput(kind, json.dumps(document, indent=2, ensure_ascii=False) + "\n", code, len(merged_rows))


def _position(name: str) -> int | None:
    found = _LINE_END.search(name)
    return int(found.group(1)) if found else None


def _merge_audit(shards: list[tuple[str, str]], fail_on: str) -> MergedOutput:
    items: list[tuple[str, AuditReport]] = []
    positions: list[tuple[str, int]] = []
    bad = 0
    for source, text in shards:
        document = _json(source, text)
        if document.get("incomplete"):
            raise _incomplete(source)
        if "reports" not in document:
            raise InvalidInputError(
                "a single report names no record",
                source=source,
                hint="merge the outputs of `norma audit --batch ... --shard i/N` (they always list the records)",
            )
        bad += document.get("summary", {}).get("bad", 0)
        for entry in document["reports"]:
            fields = dict(entry)
            name = fields.pop("name")
            items.append((name, AuditReport.model_validate(fields)))
            position = _position(name)
            if position is not None:
                positions.append((source, position))
    _check_order(positions)
    reports = [report for _, report in items]
    document = audit_document(items, bad)
    text = render("json", items, fail_on) if not bad else json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return MergedOutput("audit", text, exit_code(reports, fail_on), len(items))


def _merge_jsonl(shards: list[tuple[str, str]]) -> MergedOutput:
    rows: list[dict[str, Any]] = []
    lines: list[str] = []
    for name, text in shards:
        for number, line in enumerate(json_lines(text), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"not valid JSON ({exc.msg})", source=name, location=f"line {number}") from None
            rows.append(row if isinstance(row, dict) else {})
            lines.append(line)
    _check_order([("", row["line"]) for row in rows if isinstance(row.get("line"), int)])
    failed = any(row.get("passed") is False or row.get("failing", row.get("verdict") == "fail") for row in rows)
    unmatched = bool(rows) and all("matches" in row for row in rows) and not any(row["matches"] for row in rows)
    code = 1 if failed or unmatched else 0
    return MergedOutput("jsonl", "".join(line + "\n" for line in lines), code, len(rows))


_SEVERITY_OF_LEVEL = {"error": Severity.ERROR, "warning": Severity.WARNING, "note": Severity.INFO}
"""A SARIF result's ``level`` -> the severity it was written from."""


def _merge_sarif(shards: list[tuple[str, str]], fail_on: str) -> MergedOutput:
    documents = [(name, _json(name, text)) for name, text in shards]
    base = documents[0][1]
    run = dict(base["runs"][0])
    rules: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    results: list[dict[str, Any]] = []
    reports: list[dict[str, Any]] = []
    for name, document in documents:
        if document.get("version") != base.get("version") or len(document.get("runs", [])) != 1:
            raise InvalidInputError("not a SARIF log of one norma audit run", source=name)
        shard_run = document["runs"][0]
        if any(invocation.get("executionSuccessful") is False for invocation in shard_run.get("invocations", [])):
            raise _incomplete(name)
        for rule in shard_run["tool"]["driver"]["rules"]:
            if rule["id"] not in seen:
                seen[rule["id"]] = len(rules)
                rules.append(rule)
        for result in shard_run["results"]:
            entry = dict(result)
            if "ruleIndex" in entry:
                entry["ruleIndex"] = seen[entry["ruleId"]]
            results.append(entry)
        reports.extend(shard_run["properties"]["reports"])
    _check_order([(r["name"], p) for r in reports if (p := _position(r["name"])) is not None])
    run["tool"] = {"driver": {**base["runs"][0]["tool"]["driver"], "rules": rules}}
    run["results"] = results
    run["properties"] = {**run.get("properties", {}), "reports": reports}
    document = {**base, "runs": [run]}
    levels = [_SEVERITY_OF_LEVEL.get(str(r.get("level"))) for r in results if r.get("kind") == "fail"]
    failing = FailOn.parse(fail_on).fails(
        any(report["result"] == "FAIL" for report in reports), [level for level in levels if level is not None]
    )
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    return MergedOutput("sarif", text, 1 if failing else 0, len(reports))


def _merge_junit(shards: list[tuple[str, str]]) -> MergedOutput:
    roots = []
    for name, text in shards:
        try:
            roots.append(ET.fromstring(text.encode("utf-8")))
        except ET.ParseError as exc:
            raise InvalidInputError(f"not valid XML ({exc})", source=name) from None
    merged = ET.Element("testsuites", dict(roots[0].attrib))
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    positions: list[tuple[str, int]] = []
    for (name, _), root in zip(shards, roots, strict=True):
        if any(
            case.get("classname") in ("norma.check", "norma.audit") and case.get("name") == "incomplete"
            for case in root.iter("testcase")
        ):
            raise _incomplete(name)
        for suite in root.findall("testsuite"):
            merged.append(suite)
            position = _position(suite.get("name", ""))
            if position is not None:
                positions.append((suite.get("name", ""), position))
        for key in totals:
            totals[key] += int(root.get(key, "0"))
    _check_order(positions)
    for key, value in totals.items():
        merged.set(key, str(value))
    ET.indent(merged)
    text = '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(merged, encoding="unicode") + "\n"
    return MergedOutput("junit", text, 1 if totals["failures"] else 0, len(merged.findall("testsuite")))


def merge_outputs(shards: Sequence[tuple[str, str]], *, fail_on: FailOn | str = FailOn.ERROR) -> MergedOutput:
    """Merge the outputs of shard runs, given as ``(name, text)`` in shard order (1/N first).

    ``fail_on`` is the audit's ``--fail-on`` (``error`` or ``warning``), for the exit code of audit JSON and SARIF
    (JUnit and the other formats carry their verdicts).

    Raises:
        InvalidInputError: no shards, outputs of different kinds or runs, an unknown format, records out of order.
    """
    if not shards:
        raise InvalidInputError("nothing to merge", hint="give the outputs of the --shard runs, 1/N first")
    kinds = [(name, detect_format(name, text)) for name, text in shards]
    kind = kinds[0][1]
    for name, other in kinds[1:]:
        if other != kind:
            raise InvalidInputError(
                f"a {other} output among {kind} outputs", source=name, hint="merge the outputs of one command"
            )
    if kind in ("names", "match", "check", "rubric"):
        return _merge_results(kind, list(shards))
    if kind == "audit":
        return _merge_audit(list(shards), fail_on)
    if kind == "sarif":
        return _merge_sarif(list(shards), fail_on)
    if kind == "junit":
        return _merge_junit(list(shards))
    return _merge_jsonl(list(shards))
