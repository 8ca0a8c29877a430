"""``norma rules diff OLD NEW --turns FILE``: the formats, the exit codes and the errors, on the worked example of
docs/diff.md (a refund check made stricter and a delivery rule added; three recorded turns)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from tests.conftest import CliResult

pytestmark = pytest.mark.model

Run = Callable[..., CliResult]

OLD = """\
format: norma.rulebook/v1
tenant: acme
rules:
  - id: refund
    condition_text: customer asks for a refund of an order
    action_text: explain the refund policy and point to the form
    examples: ["I want my money back", "can I get a refund for my order"]
    checks:
      - {id: policy, kind: contains, terms: [refund policy]}
  - id: lost-card
    condition_text: customer reports a lost or stolen card
    action_text: block the card at once
    examples: ["I lost my card", "my card was stolen"]
    checks:
      - {id: blocked, kind: contains, terms: [blocked]}
"""
NEW = (
    OLD.replace("terms: [refund policy]}", "terms: [refund policy, form], mode: all}")
    + """\
  - id: delivery
    condition_text: customer asks where their parcel is
    action_text: give the tracking link
    examples: ["where is my parcel", "my package has not arrived"]
    checks:
      - {id: tracking, kind: contains, terms: [tracking]}
"""
)
TURNS = [
    {"id": "refund", "message": "I want a refund for my order", "output": "Our refund policy gives you 30 days."},
    {"id": "card", "message": "I lost my card yesterday", "output": "Your card is blocked now."},
    {"id": "parcel", "message": "my parcel has still not arrived, where is it?", "output": "It is on its way."},
]


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "old.yaml").write_text(OLD, encoding="utf-8")
    (tmp_path / "new.yaml").write_text(NEW, encoding="utf-8")
    (tmp_path / "turns.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TURNS), encoding="utf-8")
    return {
        name: str(tmp_path / f"{name}.{ext}") for name, ext in (("old", "yaml"), ("new", "yaml"), ("turns", "jsonl"))
    }


def _diff(run_cli: Run, files: dict[str, str], *more: str, old: str = "old", new: str = "new") -> CliResult:
    return run_cli("rules", "diff", files.get(old, old), files.get(new, new), "--turns", files["turns"], *more)


def test_the_table_says_what_changed_worst_first(run_cli: Run, files: dict[str, str]) -> None:
    result = _diff(run_cli, files)
    assert (result.code, result.err) == (0, "")
    turns = files["turns"]
    lines = result.out.splitlines()
    assert lines[:5] == [
        f"OLD: {files['old']} (tenant acme, 2 rules)",
        f"NEW: {files['new']} (tenant acme, 3 rules)",
        f"turns: {turns}",
        "2 of 3 turns change verdict: 2 newly fail, 0 newly pass; 1 unchanged.",
        "rule edits: 1 added, 0 removed, 1 changed",
    ]
    at = lines.index("turns that changed, worst first:")
    assert lines[at + 1 :] == [
        f"{turns}:1 (refund): pass -> fail, reward 1.000 -> 0.000",
        "  fails refund/policy (error): does not mention 'form'",
        f"{turns}:3 (parcel): skip -> fail, reward none -> 0.000",
        "  fails delivery/tracking (error): mentions none of 'tracking'",
        "  delivery: not matched -> governs 1.00",
    ]
    assert "│ delivery │ added   │ +1      │ +1      │ +1    │" in lines
    assert "│ refund   │ changed │ checks │ 1     │" in lines


def test_exit_codes_follow_fail_on(run_cli: Run, files: dict[str, str]) -> None:
    assert _diff(run_cli, files, "--fail-on", "newly-failing").code == 1
    assert _diff(run_cli, files, "--fail-on", "verdict-change").code == 1
    assert _diff(run_cli, files, "--fail-on", "never").code == 0
    # the other way round the change only mends: refund fail -> pass, parcel fail -> skip
    backwards = _diff(run_cli, files, "--fail-on", "newly-failing", "--format", "json", old="new", new="old")
    assert backwards.code == 0
    assert json.loads(backwards.out)["counts"] == {
        "turns": 3, "changed": 2, "verdict_changed": 2, "newly_failing": 0, "newly_passing": 1,
        "newly_skipped": 1, "same_verdict": 0, "unchanged": 1,
    }  # fmt: skip
    assert _diff(run_cli, files, "--fail-on", "verdict-change", old="new", new="old").code == 1


def test_fail_on_names_the_library_policies() -> None:
    from norma.cli._rules_diff import FAIL_ON
    from norma.turns import DiffFailOn

    assert tuple(policy.value for policy in DiffFailOn) == FAIL_ON


def test_the_json_lists_every_changed_turn_with_its_line(run_cli: Run, files: dict[str, str]) -> None:
    result = _diff(run_cli, files, "--format", "json", "--limit", "0")
    data = json.loads(result.out)
    assert list(data) == [
        "turns_file", "old", "new", "summary", "counts", "edits", "rules", "changes", "reused",
    ]  # fmt: skip
    assert data["turns_file"] == files["turns"]
    assert data["old"] == {"source": files["old"], "tenant": "acme", "version": None, "rules": 2}
    assert [(c["line"], c["id"], c["change"], c["verdict"], c["governs"]) for c in data["changes"]] == [
        (1, "refund", "newly_failing", {"old": "pass", "new": "fail"}, {"added": [], "removed": []}),
        (3, "parcel", "newly_failing", {"old": "skip", "new": "fail"}, {"added": ["delivery"], "removed": []}),
    ]
    assert [c["message"] for c in data["changes"][0]["failures"]["added"]] == ["does not mention 'form'"]
    assert data["edits"] == [
        {"rule_id": "delivery", "edit": "added", "fields": [], "turns": 1},
        {"rule_id": "refund", "edit": "changed", "fields": ["checks"], "turns": 1},
    ]
    assert data["reused"] == 1  # lost-card, the same in both, on its turn


def test_markdown_fits_a_pull_request_comment(run_cli: Run, files: dict[str, str]) -> None:
    text = _diff(run_cli, files, "--format", "markdown", "--limit", "1").out
    turns = files["turns"]
    assert text.startswith(
        "## norma rules diff\n\n**2 of 3 turns change verdict: 2 newly fail, 0 newly pass; 1 unchanged.**\n"
    )
    assert "| added | `delivery` |  | 1 |\n\nand 1 more.\n" in text  # the edits table, cut at --limit
    assert "<details>\n<summary>2 turns changed (2 newly failing), worst first</summary>\n" in text
    assert (
        f"| {turns}:1 (refund) | pass → **fail** | 1.000 → 0.000 | fails refund/policy (error): does not mention "
        "'form' |\n\nand 1 more.\n\n</details>\n"
    ) in text


def test_junit_has_a_failure_per_newly_failing_turn(run_cli: Run, files: dict[str, str]) -> None:
    result = _diff(run_cli, files, "--format", "junit", old="new", new="old")  # one mended, one skipped now
    root = ET.parse(io.StringIO(result.out)).getroot()
    assert (root.get("tests"), root.get("failures")) == ("2", "0")
    forward = ET.parse(io.StringIO(_diff(run_cli, files, "--format", "junit").out)).getroot()
    cases = forward.findall("./testsuite/testcase")
    turns = files["turns"]
    assert [case.get("name") for case in cases] == [f"{turns}:1 (refund)", f"{turns}:3 (parcel)"]
    failure = cases[1].find("failure")
    assert failure is not None
    assert failure.get("message") == "newly fails: delivery/tracking: mentions none of 'tracking'"
    assert (failure.text or "").splitlines() == [
        "verdict skip -> fail, reward none -> 0.000",
        "fails delivery/tracking (error): mentions none of 'tracking'",
        "delivery: not matched -> governs 1.00",
    ]


def test_out_writes_the_file(run_cli: Run, files: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "diff.md"
    printed = _diff(run_cli, files, "--format", "markdown").out
    result = _diff(run_cli, files, "--format", "markdown", "--out", str(out))
    assert (result.code, result.out) == (0, "")
    assert out.read_text(encoding="utf-8") == printed


def test_stored_tenant_versions(run_cli: Run, files: dict[str, str], tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path}/rules.db"
    assert run_cli("rules", "import", files["old"], "--db", db).code == 0
    assert run_cli("rules", "import", files["new"], "--db", db).code == 0
    result = _diff(run_cli, files, "--db", db, "--format", "json", old="acme@1", new="acme@latest")
    data = json.loads(result.out)
    assert (data["old"], data["new"]) == (
        {"source": None, "tenant": "acme", "version": 1, "rules": 2},
        {"source": None, "tenant": "acme", "version": 2, "rules": 3},
    )
    assert data["summary"] == "2 of 3 turns change verdict: 2 newly fail, 0 newly pass; 1 unchanged."
    plain = _diff(run_cli, files, "--db", db, "--format", "json", old="acme@1", new="acme")  # plain: latest
    assert json.loads(plain.out)["new"]["version"] == 2
    mixed = _diff(run_cli, files, "--db", db, "--format", "json", old="acme@latest", new="old")  # a file too
    assert (
        json.loads(mixed.out)["summary"]
        == "2 of 3 turns change verdict: 0 newly fail, 1 newly pass, 1 newly skip; 1 unchanged."
    )
    missing = _diff(run_cli, files, "--db", db, old="acme@7")
    assert (missing.code, missing.out) == (2, "")
    assert missing.err == (
        "norma: error: OLD 'acme@7': no such rulebook file, and no such stored tenant version: tenant 'acme' has no "
        "version 7: its versions are 1 to 2 (norma rules history RULE_ID --tenant TENANT shows which version changed "
        "what)\n"
    )


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (
            "nothing.yaml",
            "norma: error: OLD 'nothing.yaml': no such rulebook file, and no such stored tenant version: no store at "
            "{db} (give a rulebook file (YAML or JSON), or TENANT@VERSION of a tenant in --db)\n",
        ),
        (
            "acme@one",
            "norma: error: OLD 'acme@one' is no rulebook file, and not TENANT@VERSION either (give a rulebook file "
            "(YAML or JSON), or a stored tenant as TENANT@3, TENANT@latest or TENANT)\n",
        ),
    ],
)
def test_neither_a_file_nor_a_stored_version_is_one_line(
    run_cli: Run, files: dict[str, str], tmp_path: Path, spec: str, error: str
) -> None:
    missing = tmp_path / "none" / "norma.db"
    result = _diff(run_cli, files, "--db", f"sqlite:///{missing}", old=spec)
    assert (result.code, result.out) == (2, "")
    assert result.err == error.format(db=missing)


def test_a_bad_turns_line_is_file_line_column(run_cli: Run, files: dict[str, str], tmp_path: Path) -> None:
    turns = tmp_path / "bad.jsonl"
    turns.write_text(json.dumps(TURNS[0]) + '\n{"message": "hi" "output": "x"}\n', encoding="utf-8")
    result = run_cli("rules", "diff", files["old"], files["new"], "--turns", str(turns))
    assert (result.code, result.out) == (2, "")
    assert result.err == f"norma: error: {turns}:2:18: not valid JSON: Expecting ',' delimiter\n"
    turns.write_text('\n{"message": "hi", "output": "x", "session": 3}\n', encoding="utf-8")
    result = run_cli("rules", "diff", files["old"], files["new"], "--turns", str(turns))
    assert result.err == (
        f"norma: error: {turns}:2: session: a session must be a mapping of fields, got int (run `norma docs "
        "matching` for the session fields)\n"
    )


def test_empty_turns_are_refused_unless_allowed(run_cli: Run, files: dict[str, str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    result = run_cli("rules", "diff", files["old"], files["new"], "--turns", str(empty))
    assert (result.code, result.err) == (
        2,
        f"norma: error: {empty}: no turn records: the file is empty or has only blank lines (check the path, or "
        "pass --allow-empty to accept an empty batch)\n",
    )
    allowed = run_cli("rules", "diff", files["old"], files["new"], "--turns", str(empty), "--allow-empty")
    assert allowed.code == 0
    assert "0 of 0 turns change verdict: 0 newly fail, 0 newly pass; 0 unchanged." in allowed.out


def test_turns_from_stdin(run_cli: Run, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    raw = "".join(json.dumps(t) + "\n" for t in TURNS).encode("utf-8")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))
    result = run_cli("rules", "diff", files["old"], files["new"], "--turns", "-", "--format", "json")
    assert result.code == 0
    data = json.loads(result.out)
    assert data["turns_file"] == "<stdin>"
    assert [c["line"] for c in data["changes"]] == [1, 3]
