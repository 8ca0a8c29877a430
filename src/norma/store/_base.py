"""The store logic both backends share: validation, change detection, versions, history, vectors.

A backend supplies connections and transactions (``_sql.SqlBackend``), the tenant lock and how vectors are laid out;
every SQL statement here is written with ``?`` placeholders and scoped by tenant.
"""

from __future__ import annotations

import json
import threading
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from norma.embeddings import Embedder
from norma.errors import InvalidInputError, NotFoundError
from norma.rules import Rule, Scope, rule_fingerprint, rule_texts, validate_tenant_id
from norma.store._models import RuleVersion
from norma.store._sql import ApiKeys, Cursor

__all__ = ["SqlRuleStore", "embed_rules", "load_rule"]


def _rule_json(rule: Rule) -> str:
    return json.dumps(rule.to_dict(), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def load_rule(text: str | dict[str, Any]) -> Rule:
    """A stored rule back from its JSON, validated once; its metadata is not held to today's limits (it was checked
    when it was written, and a store reads back what it kept)."""
    data = text if isinstance(text, dict) else json.loads(text)
    return Rule.from_stored(data)


class SqlRuleStore(ApiKeys):
    """A :class:`~norma.store.RuleStore` over a SQL database (subclasses: SQLite, PostgreSQL)."""

    url: str

    def __init__(self) -> None:
        self._closed = False
        self._close_lock = threading.Lock()

    # -- what a backend provides -------------------------------------------------------------------------------

    @abstractmethod
    def _lock_tenant(self, cur: Cursor, tenant_id: str) -> int:
        """Inside a write transaction: serialise writers of ``tenant_id`` and return its current version."""

    @abstractmethod
    def _put_vectors(
        self, cur: Cursor, tenant_id: str, model_id: str, items: list[tuple[str, str, np.ndarray]]
    ) -> None:
        """Store ``(rule_id, fingerprint, matrix)`` items for ``model_id``, replacing that model's old ones."""

    @abstractmethod
    def _get_vectors(
        self, cur: Cursor, tenant_id: str, model_id: str, rule_ids: Sequence[str] | None = None
    ) -> dict[str, np.ndarray]:
        """Fresh vectors (fingerprint equal to the rule's) of the tenant's rules (or of ``rule_ids``) for
        ``model_id``."""

    @abstractmethod
    def _backend_close(self) -> None:
        """Close every connection."""

    # -- rules ---------------------------------------------------------------------------------------------------

    def _prepare(self, tenant_id: str, rules: Sequence[Rule]) -> list[Rule]:
        validate_tenant_id(tenant_id)
        prepared: list[Rule] = []
        seen: dict[str, int] = {}
        for index, rule in enumerate(rules):
            if not isinstance(rule, Rule):
                raise InvalidInputError(f"rules[{index}] is a {type(rule).__name__}, not a Rule")
            if rule.tenant_id == "default" and tenant_id != "default":
                rule = rule.model_copy(update={"tenant_id": tenant_id})
            if rule.tenant_id != tenant_id:
                raise InvalidInputError(
                    f"rule {rule.id!r} belongs to tenant {rule.tenant_id!r}, not {tenant_id!r}",
                    location=f"rules[{index}].tenant_id",
                    hint="write each tenant's rules with its own tenant id",
                )
            if rule.id in seen:
                raise InvalidInputError(
                    f"rule id {rule.id!r} appears twice in one batch (rules[{seen[rule.id]}] and rules[{index}])",
                    location=f"rules[{index}].id",
                )
            seen[rule.id] = index
            prepared.append(rule)
        return prepared

    def _stored_fingerprints(self, tenant_id: str, rule_ids: list[str], model_id: str) -> dict[str, str]:
        """Rule id -> fingerprint of the vectors stored for it by ``model_id``."""
        if not rule_ids:
            return {}
        with self._read() as cur:
            rows = self._select_in(
                cur,
                "SELECT DISTINCT rule_id, fingerprint FROM rule_vectors WHERE tenant_id = ? AND model_id = ?"
                " AND rule_id IN {ids}",
                (tenant_id, model_id),
                rule_ids,
            )
        return dict(rows)

    def upsert_rules(
        self,
        tenant_id: str,
        rules: Sequence[Rule],
        *,
        embedder: Embedder | None = None,
        vectors: Mapping[str, np.ndarray] | None = None,
        prune: bool = False,
    ) -> int:
        prepared = self._prepare(tenant_id, rules)
        if not prepared and not prune:
            return self.version(tenant_id)
        model, items = self._vectors_to_store(tenant_id, prepared, embedder, vectors)
        ids = [r.id for r in prepared]

        def work(cur: Cursor) -> int:
            version = self._lock_tenant(cur, tenant_id)
            current = self._current_rows(cur, tenant_id, None if prune else ids)
            changed = [r for r in prepared if current.get(r.id, (None, 0))[0] != _rule_json(r)]
            gone = sorted(set(current) - set(ids)) if prune else []
            if items:
                self._put_vectors(cur, tenant_id, model.model_id, items)
            if not changed and not gone:
                return version
            version += 1
            now = self._now()
            if changed:
                self._write_rule_rows(cur, tenant_id, changed, version, now)
            if gone:
                self._write_deletions(cur, tenant_id, {i: current[i][1] for i in gone}, version, now)
            self._set_version(cur, tenant_id, version)
            return version

        return self._write(work)

    def _vectors_to_store(
        self,
        tenant_id: str,
        prepared: list[Rule],
        embedder: Embedder | None,
        vectors: Mapping[str, np.ndarray] | None,
    ) -> tuple[Embedder, list[tuple[str, str, np.ndarray]]]:
        """Before a write: the model, and ``(rule_id, fingerprint, matrix)`` for the given vectors and for the rules
        whose stored vectors are missing or stale (embedded now, in one batch)."""
        model = _embedder(embedder)
        given = dict(vectors or {})
        stored = self._stored_fingerprints(tenant_id, [r.id for r in prepared if r.id not in given], model.model_id)
        items: list[tuple[str, str, np.ndarray]] = []
        by_id = {r.id: r for r in prepared}
        for rule_id, matrix in given.items():
            if rule_id not in by_id:
                raise InvalidInputError(f"vectors given for rule {rule_id!r}, which is not in the batch")
            items.append((rule_id, rule_fingerprint(by_id[rule_id]), _check_matrix(by_id[rule_id], matrix, model.dim)))
        pending = [r for r in prepared if r.id not in given and stored.get(r.id) != rule_fingerprint(r)]
        items.extend(embed_rules(pending, model))
        return model, items

    def _current_rows(self, cur: Cursor, tenant_id: str, rule_ids: list[str] | None) -> dict[str, tuple[str, int]]:
        """``rule_id -> (data, rule_version)`` of the stored rules among ``rule_ids`` (None: every rule)."""
        if rule_ids is None:
            cur.execute(self._sql("SELECT rule_id, data, rule_version FROM rules WHERE tenant_id = ?"), (tenant_id,))
            rows = cur.fetchall()
        else:
            rows = self._select_in(
                cur,
                "SELECT rule_id, data, rule_version FROM rules WHERE tenant_id = ? AND rule_id IN {ids}",
                (tenant_id,),
                rule_ids,
            )
        return {rid: (data if isinstance(data, str) else json.dumps(data), int(v)) for rid, data, v in rows}

    def _last_rule_versions(self, cur: Cursor, tenant_id: str, rule_ids: list[str]) -> dict[str, int]:
        rows = self._select_in(
            cur,
            "SELECT rule_id, MAX(rule_version) FROM rule_history WHERE tenant_id = ? AND rule_id IN {ids}"
            " GROUP BY rule_id",
            (tenant_id,),
            rule_ids,
        )
        return {rid: int(v) for rid, v in rows}

    def _set_version(self, cur: Cursor, tenant_id: str, version: int) -> None:
        cur.execute(self._sql("UPDATE tenants SET version = ? WHERE tenant_id = ?"), (version, tenant_id))

    def get_rule(self, tenant_id: str, rule_id: str) -> Rule:
        validate_tenant_id(tenant_id)
        with self._read() as cur:
            cur.execute(self._sql("SELECT data FROM rules WHERE tenant_id = ? AND rule_id = ?"), (tenant_id, rule_id))
            row = cur.fetchone()
        if row is None:
            raise NotFoundError(f"tenant {tenant_id!r} has no rule {rule_id!r}", hint="list the rules to see the ids")
        return load_rule(row[0])

    def list_rules(
        self,
        tenant_id: str,
        *,
        scope: Scope | str | None = None,
        scenario_id: str | None = None,
        step_id: str | None = None,
        enabled: bool | None = None,
        tag: str | None = None,
    ) -> list[Rule]:
        validate_tenant_id(tenant_id)
        where = ["tenant_id = ?"]
        params: list[Any] = [tenant_id]
        if scope is not None:
            try:
                chosen = Scope(scope)
            except ValueError:
                raise InvalidInputError(
                    f"unknown scope {scope!r}", hint=f"use one of {', '.join(s.value for s in Scope)}"
                ) from None
            where.append("scope = ?")
            params.append(chosen.value)
        for column, value in (("scenario_id", scenario_id), ("step_id", step_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        if enabled is not None:
            where.append("enabled = ?")
            params.append(bool(enabled))
        sql = f"SELECT data FROM rules WHERE {' AND '.join(where)} ORDER BY rule_id"
        with self._read(bulk=True) as cur:
            cur.execute(self._sql(sql), tuple(params))
            rules = [load_rule(row[0]) for row in cur.fetchall()]
        if tag is not None:
            rules = [r for r in rules if tag in r.tags]
        return rules

    def delete_rules(self, tenant_id: str, rule_ids: Sequence[str]) -> int:
        validate_tenant_id(tenant_id)
        ids = list(dict.fromkeys(rule_ids))
        if not ids:
            return self.version(tenant_id)

        def work(cur: Cursor) -> int:
            version = self._lock_tenant(cur, tenant_id)
            present = self._current_rows(cur, tenant_id, ids)
            missing = [i for i in ids if i not in present]
            if missing:
                shown = ", ".join(repr(i) for i in missing[:5])
                raise NotFoundError(
                    f"tenant {tenant_id!r} has no rule {shown}{' …' if len(missing) > 5 else ''}; nothing was deleted"
                )
            version += 1
            self._write_deletions(cur, tenant_id, {i: present[i][1] for i in ids}, version, self._now())
            self._set_version(cur, tenant_id, version)
            return version

        return self._write(work)

    def _write_rule_rows(self, cur: Cursor, tenant_id: str, changed: list[Rule], version: int, now: str) -> None:
        """Inside a write: store ``changed`` rules and their history rows at tenant ``version``."""
        last = self._last_rule_versions(cur, tenant_id, [r.id for r in changed])
        row_values = []
        history_values = []
        for rule in changed:
            data = _rule_json(rule)
            rule_version = last.get(rule.id, 0) + 1
            row_values.append(
                (
                    tenant_id,
                    rule.id,
                    data,
                    rule.scope.value,
                    rule.scenario_id,
                    rule.step_id,
                    rule.enabled,
                    rule_version,
                    rule_fingerprint(rule),
                    now,
                )
            )
            history_values.append((tenant_id, rule.id, rule_version, version, data, now))
        cur.executemany(
            self._sql(
                "INSERT INTO rules (tenant_id, rule_id, data, scope, scenario_id, step_id, enabled, rule_version,"
                " fingerprint, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (tenant_id, rule_id) DO UPDATE SET data = excluded.data, scope = excluded.scope,"
                " scenario_id = excluded.scenario_id, step_id = excluded.step_id, enabled = excluded.enabled,"
                " rule_version = excluded.rule_version, fingerprint = excluded.fingerprint,"
                " updated_at = excluded.updated_at"
            ),
            row_values,
        )
        cur.executemany(
            self._sql(
                "INSERT INTO rule_history (tenant_id, rule_id, rule_version, tenant_version, data, changed_at)"
                " VALUES (?, ?, ?, ?, ?, ?)"
            ),
            history_values,
        )

    def _write_deletions(
        self, cur: Cursor, tenant_id: str, rule_versions: Mapping[str, int], version: int, now: str
    ) -> None:
        """Inside a write: delete the rules (id -> current rule version), recording a deletion in their history."""
        cur.executemany(
            self._sql(
                "INSERT INTO rule_history (tenant_id, rule_id, rule_version, tenant_version, data, changed_at)"
                " VALUES (?, ?, ?, ?, NULL, ?)"
            ),
            [(tenant_id, i, v + 1, version, now) for i, v in rule_versions.items()],
        )
        pairs = [(tenant_id, i) for i in rule_versions]
        cur.executemany(self._sql("DELETE FROM rules WHERE tenant_id = ? AND rule_id = ?"), pairs)
        cur.executemany(self._sql("DELETE FROM rule_vectors WHERE tenant_id = ? AND rule_id = ?"), pairs)

    # -- the calibrated gate ---------------------------------------------------------------------------------------

    def save_gate(self, tenant_id: str, gate: Mapping[str, Any] | None) -> int:
        validate_tenant_id(tenant_id)
        data = None if gate is None else json.dumps(dict(gate), sort_keys=True, allow_nan=False)
        now = self._now()

        def work(cur: Cursor) -> int:
            version = self._lock_tenant(cur, tenant_id)
            cur.execute(self._sql("SELECT COUNT(*) FROM rules WHERE tenant_id = ?"), (tenant_id,))
            if not cur.fetchone()[0]:
                raise NotFoundError(
                    f"tenant {tenant_id!r} has no rules to gate", location=tenant_id, hint="import its rules first"
                )
            version += 1
            cur.execute(self._sql("DELETE FROM tenant_gates WHERE tenant_id = ?"), (tenant_id,))
            if data is not None:
                cur.execute(
                    self._sql(
                        "INSERT INTO tenant_gates (tenant_id, data, tenant_version, changed_at) VALUES (?, ?, ?, ?)"
                    ),
                    (tenant_id, data, version, now),
                )
            cur.execute(
                self._sql("INSERT INTO gate_history (tenant_id, tenant_version, data, changed_at) VALUES (?, ?, ?, ?)"),
                (tenant_id, version, data, now),
            )
            self._set_version(cur, tenant_id, version)
            return version

        return self._write(work)

    def load_gate(self, tenant_id: str) -> dict[str, Any] | None:
        validate_tenant_id(tenant_id)
        with self._read() as cur:
            cur.execute(self._sql("SELECT data FROM tenant_gates WHERE tenant_id = ?"), (tenant_id,))
            row = cur.fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def gate_history(self, tenant_id: str) -> list[tuple[int, dict[str, Any] | None, str]]:
        validate_tenant_id(tenant_id)
        with self._read() as cur:
            cur.execute(
                self._sql(
                    "SELECT tenant_version, data, changed_at FROM gate_history WHERE tenant_id = ?"
                    " ORDER BY tenant_version"
                ),
                (tenant_id,),
            )
            rows = cur.fetchall()
        return [(int(v), None if d is None else dict(json.loads(d)), str(at)) for v, d, at in rows]

    def version(self, tenant_id: str) -> int:
        validate_tenant_id(tenant_id)
        with self._read() as cur:
            cur.execute(self._sql("SELECT version FROM tenants WHERE tenant_id = ?"), (tenant_id,))
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def history(self, tenant_id: str, rule_id: str) -> list[RuleVersion]:
        validate_tenant_id(tenant_id)
        with self._read() as cur:
            cur.execute(
                self._sql(
                    "SELECT rule_version, tenant_version, data, changed_at FROM rule_history"
                    " WHERE tenant_id = ? AND rule_id = ? ORDER BY rule_version"
                ),
                (tenant_id, rule_id),
            )
            rows = cur.fetchall()
        if not rows:
            raise NotFoundError(f"tenant {tenant_id!r} has no history for rule {rule_id!r}")
        return [
            RuleVersion(
                rule_id=rule_id,
                version=int(v),
                tenant_version=int(tv),
                rule=None if data is None else load_rule(data),
                changed_at=self._timestamp(at),
            )
            for v, tv, data, at in rows
        ]

    def rules_at(self, tenant_id: str, version: int) -> list[Rule]:
        """The tenant's rules as they were at its rule-set ``version``, sorted by id: each rule as its last change
        at or before that version wrote it, the rules deleted by then left out (read from the rules' history, in
        one transaction). ``rules_at(t, version(t))`` is :meth:`list_rules` of today.

        Raises:
            InvalidInputError: ``version`` is not an integer.
            NotFoundError: the tenant has no such version: below 1, above its current one, or a tenant that never
                had a committed change.
        """
        validate_tenant_id(tenant_id)
        if isinstance(version, bool) or not isinstance(version, int):
            raise InvalidInputError(
                f"a rules version is an integer, not {type(version).__name__}", location="version", hint="give 1, 2..."
            )
        rows: list[Any] = []
        with self._read(bulk=True) as cur:
            cur.execute(self._sql("SELECT version FROM tenants WHERE tenant_id = ?"), (tenant_id,))
            row = cur.fetchone()
            current = int(row[0]) if row else 0
            if 1 <= version <= current:
                cur.execute(
                    self._sql(
                        "SELECT h.rule_id, h.data FROM rule_history h JOIN ("
                        " SELECT rule_id, MAX(rule_version) AS last FROM rule_history"
                        " WHERE tenant_id = ? AND tenant_version <= ? GROUP BY rule_id"
                        ") x ON h.rule_id = x.rule_id AND h.rule_version = x.last WHERE h.tenant_id = ?"
                    ),
                    (tenant_id, version, tenant_id),
                )
                rows = cur.fetchall()
        if current == 0:
            raise NotFoundError(
                f"tenant {tenant_id!r} has no rules in {self.url}",
                location="tenant",
                hint=f"import them with norma rules import FILE --tenant {tenant_id}",
            )
        if not 1 <= version <= current:
            raise NotFoundError(
                f"tenant {tenant_id!r} has no version {version}: its versions are 1 to {current}",
                location="version",
                hint="norma rules history RULE_ID --tenant TENANT shows which version changed what",
            )
        return sorted((load_rule(data) for _, data in rows if data is not None), key=lambda rule: rule.id)

    def changes_since(
        self, tenant_id: str, version: int, model_id: str
    ) -> tuple[int, list[Rule], list[str], dict[str, np.ndarray]]:
        """What changed after ``version``: ``(current version, rules now stored, ids now deleted, their fresh
        vectors for model_id)``, read in one transaction."""
        validate_tenant_id(tenant_id)
        with self._read(bulk=True) as cur:
            cur.execute(self._sql("SELECT version FROM tenants WHERE tenant_id = ?"), (tenant_id,))
            row = cur.fetchone()
            current = int(row[0]) if row else 0
            cur.execute(
                self._sql("SELECT DISTINCT rule_id FROM rule_history WHERE tenant_id = ? AND tenant_version > ?"),
                (tenant_id, version),
            )
            ids = {r[0] for r in cur.fetchall()}
            rows = self._select_in(
                cur, "SELECT data FROM rules WHERE tenant_id = ? AND rule_id IN {ids}", (tenant_id,), sorted(ids)
            )
            present = [load_rule(r[0]) for r in rows]
            vectors = self._get_vectors(cur, tenant_id, model_id, [r.id for r in present]) if present else {}
        gone = sorted(ids - {r.id for r in present})
        return current, present, gone, vectors

    def snapshot(self, tenant_id: str, model_id: str) -> tuple[int, list[Rule], dict[str, np.ndarray]]:
        """``(version, rules, fresh vectors)`` of a tenant, read in one transaction."""
        validate_tenant_id(tenant_id)
        with self._read(bulk=True) as cur:
            cur.execute(self._sql("SELECT version FROM tenants WHERE tenant_id = ?"), (tenant_id,))
            row = cur.fetchone()
            cur.execute(self._sql("SELECT data FROM rules WHERE tenant_id = ? ORDER BY rule_id"), (tenant_id,))
            rules = [load_rule(r[0]) for r in cur.fetchall()]
            vectors = self._get_vectors(cur, tenant_id, model_id)
        return (int(row[0]) if row else 0), rules, vectors

    def tenants(self) -> list[str]:
        with self._read() as cur:
            cur.execute(self._sql("SELECT tenant_id FROM tenants WHERE version > 0 ORDER BY tenant_id"))
            return [r[0] for r in cur.fetchall()]

    def rules_with_vectors(
        self, tenant_id: str, rule_ids: Sequence[str], model_id: str
    ) -> tuple[list[Rule], dict[str, np.ndarray]]:
        """The stored rules among ``rule_ids`` (sorted by id; unknown ids are skipped) and their fresh vectors for
        ``model_id``, read in one transaction."""
        validate_tenant_id(tenant_id)
        ids = sorted(set(rule_ids))
        if not ids:
            return [], {}
        with self._read(bulk=True) as cur:
            rows = self._select_in(
                cur, "SELECT data FROM rules WHERE tenant_id = ? AND rule_id IN {ids}", (tenant_id,), ids
            )
            rules = sorted((load_rule(r[0]) for r in rows), key=lambda rule: rule.id)
            return rules, self._get_vectors(cur, tenant_id, model_id, [r.id for r in rules])

    # -- vectors ------------------------------------------------------------------------------------

    def vector_encoders(self, tenant_id: str) -> dict[str, int]:
        """The encoders the tenant's fresh vectors were made with: encoder identity (``model_id``) -> how many of
        its rules have fresh vectors of it (read in one transaction)."""
        validate_tenant_id(tenant_id)
        with self._read() as cur:
            cur.execute(
                self._sql(
                    "SELECT v.model_id, COUNT(DISTINCT v.rule_id) FROM rule_vectors v JOIN rules r"
                    " ON r.tenant_id = v.tenant_id AND r.rule_id = v.rule_id AND r.fingerprint = v.fingerprint"
                    " WHERE v.tenant_id = ? GROUP BY v.model_id ORDER BY v.model_id"
                ),
                (tenant_id,),
            )
            return {str(model): int(count) for model, count in cur.fetchall()}

    def load_vectors(self, tenant_id: str, model_id: str) -> dict[str, np.ndarray]:
        validate_tenant_id(tenant_id)
        with self._read(bulk=True) as cur:
            return self._get_vectors(cur, tenant_id, model_id)

    def save_vectors(self, tenant_id: str, model_id: str, vectors: Mapping[str, tuple[str, np.ndarray]]) -> None:
        """Keep vectors computed outside :meth:`upsert_rules` (lazy re-embedding); no version change.

        ``vectors`` maps rule id to ``(fingerprint, matrix)``; entries whose rule changed meanwhile are dropped.
        """
        validate_tenant_id(tenant_id)
        if not vectors:
            return

        def work(cur: Cursor) -> None:
            rows = self._select_in(
                cur,
                "SELECT rule_id, fingerprint FROM rules WHERE tenant_id = ? AND rule_id IN {ids}",
                (tenant_id,),
                list(vectors),
            )
            current = dict(rows)
            items = [(rid, fp, m) for rid, (fp, m) in vectors.items() if current.get(rid) == fp]
            if items:
                self._put_vectors(cur, tenant_id, model_id, items)

        self._write(work)

    # -- plumbing ------------------------------------------------------------------------------------------------

    def close(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        self._backend_close()

    def __enter__(self) -> SqlRuleStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"


def _embedder(embedder: Embedder | None) -> Embedder:
    if embedder is not None:
        return embedder
    from norma.embeddings import get_embedder

    return get_embedder()


def _check_matrix(rule: Rule, matrix: np.ndarray, dim: int) -> np.ndarray:
    array = np.asarray(matrix, dtype=np.float32)
    expected = (len(rule_texts(rule)), dim)
    if array.shape != expected or not np.isfinite(array).all():
        raise InvalidInputError(
            f"vectors of rule {rule.id!r} have shape {array.shape}, expected {expected} of finite numbers",
            hint="one row per text of rule_texts(rule), as many columns as the embedder's dim",
        )
    return array


def embed_rules(rules: Sequence[Rule], embedder: Embedder) -> list[tuple[str, str, np.ndarray]]:
    """``(rule_id, fingerprint, matrix)`` for each rule, from one batched :meth:`Embedder.embed` call."""
    if not rules:
        return []
    texts = [rule_texts(r) for r in rules]
    flat = [t for group in texts for t in group]
    matrix = np.asarray(embedder.embed(flat), dtype=np.float32)
    out: list[tuple[str, str, np.ndarray]] = []
    start = 0
    for rule, group in zip(rules, texts, strict=True):
        out.append((rule.id, rule_fingerprint(rule), matrix[start : start + len(group)]))
        start += len(group)
    return out
