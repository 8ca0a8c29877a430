"""`norma rules …` and `norma keys …` against a real store (SQLite file and PostgreSQL)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, CliResult

Run = Callable[..., CliResult]
BANKING = str(EXAMPLES / "rulebooks" / "banking-support.yaml")


def test_import_list_history_export(run_cli: Run, store_url: str, tmp_path: Path) -> None:
    result = run_cli("rules", "import", BANKING, "--db", store_url, "--format", "json")
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert (payload["tenant"], payload["rules"], payload["version"]) == ("northwind-bank", 28, 1)

    listed = run_cli(
        "rules", "list", "--tenant", "northwind-bank", "--scope", "step", "--db", store_url, "--format", "json"
    )
    assert listed.code == 0
    rules = json.loads(listed.out)["rules"]
    assert len(rules) == 6
    assert all(r["scope"] == "step" for r in rules)
    assert [r["id"] for r in rules] == sorted(r["id"] for r in rules)

    table = run_cli("rules", "list", "--tenant", "northwind-bank", "--tag", "fraud", "--db", store_url)
    assert table.code == 0
    assert "fraud-suspected" in table.out
    assert "scam-warning" in table.out
    assert "greeting" not in table.out

    history = run_cli(
        "rules", "history", "greeting", "--tenant", "northwind-bank", "--db", store_url, "--format", "json"
    )
    assert history.code == 0
    versions = json.loads(history.out)["versions"]
    assert [v["version"] for v in versions] == [1]
    assert versions[0]["rule"]["condition_text"] == "customer says hello"

    out = tmp_path / "export.json"
    exported = run_cli(
        "rules", "export", "--tenant", "northwind-bank", "--db", store_url, "--format", "json", "-o", str(out)
    )
    assert exported.code == 0
    assert len(json.loads(out.read_text())["rules"]) == 28
    yaml_out = run_cli("rules", "export", "--tenant", "northwind-bank", "--db", store_url)
    assert yaml_out.out.startswith("format: norma.rulebook/v1\ntenant: northwind-bank\n")


def test_invalid_rulebook_lists_every_problem_and_writes_nothing(run_cli: Run, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/cli.db"
    bad = tmp_path / "bad.yaml"
    bad.write_text("tenant: acme\nrules:\n  - id: a\n  - id: b\n    condition_text: x\n    priority: high\n")
    result = run_cli("rules", "import", str(bad), "--db", url)
    assert result.code == 2
    assert "2 problem(s)" in result.err
    assert "rules[0] (a).condition_text" in result.err
    assert "rules[1] (b).priority" in result.err
    as_json = run_cli("rules", "import", str(bad), "--db", url, "--format", "json")
    assert as_json.code == 2
    assert [(p["index"], p["field"]) for p in json.loads(as_json.out)["problems"]] == [
        (0, "condition_text"),
        (1, "priority"),
    ]
    listed = run_cli("rules", "list", "--tenant", "acme", "--db", url, "--format", "json")
    assert json.loads(listed.out) == {"tenant": "acme", "version": 0, "rules": []}


def test_db_url_from_the_environment(run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NORMA_DB_URL", f"sqlite:///{tmp_path}/env.db")
    assert run_cli("rules", "import", BANKING).code == 0
    assert (tmp_path / "env.db").exists()


def test_default_db_is_under_the_working_directory(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NORMA_DB_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    assert run_cli("rules", "import", BANKING).code == 0
    assert (tmp_path / ".norma" / "norma.db").exists()


def test_errors_exit_2_with_one_line(run_cli: Run, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/cli.db"
    missing = run_cli("rules", "history", "nope", "--tenant", "acme", "--db", url)
    assert missing.code == 2
    assert missing.err.startswith("norma: error: ")
    assert missing.err.count("\n") == 1
    no_tenant = run_cli("rules", "import", str(tmp_path / "absent.yaml"), "--db", url)
    assert no_tenant.code == 2
    bad_url = run_cli("rules", "list", "--tenant", "acme", "--db", "mysql://x")
    assert bad_url.code == 2
    assert "unknown rule store URL" in bad_url.err
    assert run_cli("keys", "revoke", "000000000000", "--db", url).code == 2
    assert run_cli("keys", "create", "--db", url).code == 2


def test_keys_create_list_revoke(run_cli: Run, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/keys.db"
    created = run_cli(
        "keys", "create", "--tenant", "acme", "--name", "bot", "--create-tenant", "--db", url, "--format", "json"
    )
    assert created.code == 0
    key = json.loads(created.out)
    assert key["secret"].startswith("nrm_" + key["key_id"] + "_")
    admin = run_cli("keys", "create", "--admin", "--db", url)
    assert admin.code == 0
    assert "shown only now" in admin.out
    listed = json.loads(run_cli("keys", "list", "--db", url, "--format", "json").out)["keys"]
    assert len(listed) == 2
    assert all("secret" not in k for k in listed)
    assert key["secret"] not in run_cli("keys", "list", "--db", url).out
    assert run_cli("keys", "revoke", key["key_id"], "--db", url).code == 0
    mine = json.loads(run_cli("keys", "list", "--tenant", "acme", "--db", url, "--format", "json").out)["keys"]
    assert mine[0]["revoked_at"] is not None


def test_demo_section() -> None:
    from norma.cli._demo import SECTIONS

    section, render = SECTIONS["store"](EXAMPLES)
    assert callable(render)
    assert section["rules"] == 28
    assert (section["version_after_import"], section["version_after_reimport"], section["version_after_edit"]) == (
        1,
        1,
        2,
    )
    assert section["by_scope"] == {"global": 16, "scenario": 6, "step": 6}


@pytest.mark.parametrize(
    "command",
    [
        ("rules", "list", "--tenant", "x"),
        ("rules", "show", "greeting", "--tenant", "x"),
        ("rules", "export", "--tenant", "x"),
        ("rules", "history", "greeting", "--tenant", "x"),
        ("rules", "delete", "greeting", "--tenant", "x"),
        ("rules", "import", BANKING, "--dry-run"),
        ("keys", "list"),
        ("keys", "revoke", "000000000000"),
        ("keys", "create", "--tenant", "x"),
        ("match", "hello", "--tenant", "x"),
    ],
)
def test_commands_that_read_never_create_a_store(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    monkeypatch.delenv("NORMA_DB_URL", raising=False)
    monkeypatch.chdir(tmp_path)
    result = run_cli(*command)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        "norma: error: no store at ./.norma/norma.db (check --db / $NORMA_DB_URL, or create the store by importing "
        "rules into it)\n"
    )
    missing = tmp_path / "nowhere" / "x.db"
    elsewhere = run_cli(*command, "--db", f"sqlite:///{missing}")
    assert elsewhere.err.startswith(f"norma: error: no store at {missing} ")
    assert list(tmp_path.iterdir()) == []


def test_a_relative_sqlite_url_is_refused_with_the_two_spellings(
    run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = run_cli("rules", "import", BANKING, "--db", "sqlite:///data/x.db")
    assert result.code == 2
    assert result.err == (
        "norma: error: the SQLite URL 'sqlite:///data/x.db' names a relative path without saying so (write "
        "sqlite:////data/x.db for the absolute path /data/x.db, or sqlite:///./data/x.db for data/x.db under the "
        "working directory)\n"
    )
    assert list(tmp_path.iterdir()) == []
    assert run_cli("rules", "import", BANKING, "--db", "sqlite:///./data/x.db").code == 0
    assert (tmp_path / "data" / "x.db").is_file()


def _ids(run_cli: Run, url: str, tenant: str = "northwind-bank") -> list[str]:
    listed = run_cli("rules", "list", "--tenant", tenant, "--db", url, "--format", "json")
    assert listed.code == 0, listed.err
    return [r["id"] for r in json.loads(listed.out)["rules"]]


def test_rules_show_and_delete(run_cli: Run, store_url: str) -> None:
    assert run_cli("rules", "import", BANKING, "--db", store_url).code == 0
    shown = run_cli("rules", "show", "greeting", "--tenant", "northwind-bank", "--db", store_url)
    assert shown.code == 0
    assert shown.out.startswith("rules:\n- id: greeting\n")
    assert "condition_text: customer says hello" in shown.out
    as_json = json.loads(
        run_cli("rules", "show", "greeting", "--tenant", "northwind-bank", "--db", store_url, "--format", "json").out
    )
    assert as_json["rule"]["condition_text"] == "customer says hello"

    dry = run_cli(
        "rules", "delete", "greeting", "fees-explained", "--tenant", "northwind-bank", "--dry-run", "--db", store_url
    )
    assert dry.out == (
        "would delete 2 rule(s) of tenant northwind-bank, (dry run: nothing written): greeting, fees-explained\n"
    )
    assert len(_ids(run_cli, store_url)) == 28
    deleted = run_cli("rules", "delete", "greeting", "fees-explained", "--tenant", "northwind-bank", "--db", store_url)
    assert (deleted.code, deleted.out) == (
        0,
        "deleted 2 rule(s) of tenant northwind-bank, now at version 2: greeting, fees-explained\n",
    )
    ids = _ids(run_cli, store_url)
    assert len(ids) == 26
    assert "greeting" not in ids
    history = run_cli(
        "rules", "history", "greeting", "--tenant", "northwind-bank", "--db", store_url, "--format", "json"
    )
    assert [(v["version"], v["rule"] is None) for v in json.loads(history.out)["versions"]] == [(1, False), (2, True)]
    unknown = run_cli("rules", "delete", "greeting", "nope", "--tenant", "northwind-bank", "--db", store_url)
    assert unknown.code == 2
    assert unknown.err == "norma: error: tenant 'northwind-bank' has no rule 'greeting', 'nope'; nothing was deleted\n"
    assert len(_ids(run_cli, store_url)) == 26


def test_import_prune_makes_the_tenant_the_file_in_one_version(run_cli: Run, store_url: str, tmp_path: Path) -> None:
    assert run_cli("rules", "import", BANKING, "--db", store_url).code == 0
    small = tmp_path / "small.yaml"
    small.write_text(
        "tenant: northwind-bank\nrules:\n"
        "  - id: greeting\n    condition_text: customer says hello\n    action_text: greet them back\n"
        "  - id: brand-new\n    condition_text: customer asks for a new thing\n",
        encoding="utf-8",
    )
    plain = run_cli("rules", "import", str(small), "--dry-run", "--db", store_url)
    assert plain.code == 0
    assert plain.out.startswith(
        "tenant northwind-bank would change: 1 added, 1 updated, 0 deleted, 27 unchanged (dry run: nothing written)\n"
        "  added: brand-new\n  updated: greeting\n"
    )
    dry = run_cli("rules", "import", str(small), "--prune", "--dry-run", "--db", store_url, "--format", "json")
    payload = json.loads(dry.out)
    assert (payload["dry_run"], payload["imported"], payload["version"]) == (True, False, 1)
    assert payload["changes"]["added"] == ["brand-new"]
    assert payload["changes"]["updated"] == ["greeting"]
    assert len(payload["changes"]["deleted"]) == 27
    assert payload["changes"]["unchanged"] == []
    assert len(_ids(run_cli, store_url)) == 28  # the dry runs wrote nothing

    pruned = run_cli("rules", "import", str(small), "--prune", "--db", store_url, "--format", "json")
    assert pruned.code == 0, pruned.err
    assert json.loads(pruned.out)["version"] == 2
    assert _ids(run_cli, store_url) == ["brand-new", "greeting"]
    history = run_cli(
        "rules", "history", "fees-explained", "--tenant", "northwind-bank", "--db", store_url, "--format", "json"
    )
    assert [(v["tenant_version"], v["rule"] is None) for v in json.loads(history.out)["versions"]] == [
        (1, False),
        (2, True),
    ]


def test_keys_for_a_tenant_the_store_does_not_have(run_cli: Run, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/k.db"
    assert run_cli("rules", "import", BANKING, "--db", url).code == 0
    ghost = run_cli("keys", "create", "--tenant", "ghost", "--db", url)
    assert ghost.code == 2
    assert ghost.err == (
        f"norma: error: tenant 'ghost' does not exist in {url}: import its rules first (norma rules import FILE "
        "--tenant ghost), or pass --create-tenant\n"
    )
    assert json.loads(run_cli("keys", "list", "--db", url, "--format", "json").out)["keys"] == []
    assert run_cli("keys", "create", "--tenant", "northwind-bank", "--db", url).code == 0
    assert run_cli("keys", "create", "--tenant", "ghost", "--create-tenant", "--db", url).code == 0
    assert len(json.loads(run_cli("keys", "list", "--db", url, "--format", "json").out)["keys"]) == 2
