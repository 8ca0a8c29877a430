"""The store's schema as numbered migrations, one list per backend; each is applied once and recorded.

``schema_migrations`` records what was applied; applying is idempotent and serialised (SQLite: one write
transaction; PostgreSQL: a transaction-level advisory lock), so any number of processes may open the same database
at the same time, and opening an up-to-date database changes nothing.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS_TABLE", "POSTGRES_MIGRATIONS", "SQLITE_MIGRATIONS", "Migration"]

Migration = tuple[int, str, tuple[str, ...]]
"""``(version, name, statements)``."""

MIGRATIONS_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " applied_at TEXT NOT NULL)"
)


def _common(timestamp: str, boolean: str) -> tuple[str, ...]:
    return (
        "CREATE TABLE tenants (tenant_id TEXT PRIMARY KEY, version INTEGER NOT NULL DEFAULT 0)",
        "CREATE TABLE rules ("
        " tenant_id TEXT NOT NULL, rule_id TEXT NOT NULL, data TEXT NOT NULL, scope TEXT NOT NULL,"
        " scenario_id TEXT, step_id TEXT, enabled " + boolean + " NOT NULL, rule_version INTEGER NOT NULL,"
        " fingerprint TEXT NOT NULL, updated_at " + timestamp + " NOT NULL,"
        " PRIMARY KEY (tenant_id, rule_id))",
        "CREATE INDEX rules_by_scope ON rules (tenant_id, scope, scenario_id, step_id)",
        "CREATE TABLE rule_history ("
        " tenant_id TEXT NOT NULL, rule_id TEXT NOT NULL, rule_version INTEGER NOT NULL,"
        " tenant_version INTEGER NOT NULL, data TEXT, changed_at " + timestamp + " NOT NULL,"
        " PRIMARY KEY (tenant_id, rule_id, rule_version))",
        "CREATE INDEX rule_history_by_version ON rule_history (tenant_id, tenant_version)",
        "CREATE TABLE api_keys ("
        " key_id TEXT PRIMARY KEY, tenant_id TEXT, admin " + boolean + " NOT NULL, name TEXT NOT NULL,"
        " secret_hash TEXT NOT NULL, created_at " + timestamp + " NOT NULL, revoked_at " + timestamp + ")",
        "CREATE INDEX api_keys_by_tenant ON api_keys (tenant_id)",
    )


def _gates(timestamp: str) -> tuple[str, ...]:
    return (
        # a tenant's calibrated gate (norma rules calibrate): the current one, and every one ever set
        "CREATE TABLE tenant_gates (tenant_id TEXT PRIMARY KEY, data TEXT NOT NULL, tenant_version INTEGER NOT NULL,"
        " changed_at " + timestamp + " NOT NULL)",
        "CREATE TABLE gate_history (tenant_id TEXT NOT NULL, tenant_version INTEGER NOT NULL, data TEXT,"
        " changed_at " + timestamp + " NOT NULL, PRIMARY KEY (tenant_id, tenant_version))",
    )


SQLITE_MIGRATIONS: tuple[Migration, ...] = (
    (
        1,
        "tenants, rules, history, vectors, api keys",
        (
            *_common("TEXT", "INTEGER"),
            # one row per rule and model: the (texts x dim) float32 matrix, little-endian, row-major
            "CREATE TABLE rule_vectors ("
            " tenant_id TEXT NOT NULL, rule_id TEXT NOT NULL, model_id TEXT NOT NULL, fingerprint TEXT NOT NULL,"
            " n_rows INTEGER NOT NULL, dim INTEGER NOT NULL, data BLOB NOT NULL,"
            " PRIMARY KEY (tenant_id, rule_id, model_id))",
        ),
    ),
    (2, "calibrated gates", _gates("TEXT")),
)

POSTGRES_MIGRATIONS: tuple[Migration, ...] = (
    (
        1,
        "tenants, rules, history, vectors, api keys",
        (
            "CREATE EXTENSION IF NOT EXISTS vector",
            *_common("TIMESTAMPTZ", "BOOLEAN"),
            # one row per text of a rule: pgvector can index and search them (HNSW, per dimension; see _postgres)
            "CREATE TABLE rule_vectors ("
            " tenant_id TEXT NOT NULL, rule_id TEXT NOT NULL, model_id TEXT NOT NULL, position INTEGER NOT NULL,"
            " fingerprint TEXT NOT NULL, dim INTEGER NOT NULL, embedding vector NOT NULL,"
            " PRIMARY KEY (tenant_id, rule_id, model_id, position))",
        ),
    ),
    (2, "calibrated gates", _gates("TIMESTAMPTZ")),
    (
        3,
        "write deadlines",
        (
            # a write's commit guard (see _postgres): fired at COMMIT, it refuses a commit that comes past the write's
            # deadline, so a write its client was told failed (the server hung, then woke) can never commit later
            "CREATE FUNCTION norma_commit_deadline() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN"
            " IF clock_timestamp() > NEW.deadline THEN"
            " RAISE EXCEPTION 'norma: the write reached COMMIT after its deadline (%); rolled back', NEW.deadline"
            " USING ERRCODE = '57014';"
            " END IF;"
            " RETURN NULL;"
            " END $$",
        ),
    ),
)
