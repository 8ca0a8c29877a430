"""The service's settings: one frozen model, built from arguments or from ``NORMA_*`` environment variables.

``norma serve`` builds a :class:`ServiceSettings` from its options and hands it to every uvicorn worker through one
environment variable (:data:`SETTINGS_ENV`, JSON), so ``create_app`` sees the same settings in each process.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pydantic
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from norma.errors import ConfigError
from norma.guard import MAX_REPAIRS, GuardPolicy

__all__ = ["SETTINGS_ENV", "ServiceSettings", "env_settings"]

SETTINGS_ENV = "NORMA_SERVICE_SETTINGS"
"""Environment variable holding the settings as JSON (set by ``norma serve`` for its workers)."""

_ENV_FIELDS: dict[str, str] = {
    "NORMA_DB_URL": "db_url",
    "NORMA_ADMIN_KEY": "admin_key",
    "NORMA_MAX_BODY_BYTES": "max_body_bytes",
    "NORMA_REQUEST_TIMEOUT": "request_timeout",
    "NORMA_RATE_LIMIT": "rate_limit",
    "NORMA_RATE_BURST": "rate_burst",
    "NORMA_AUTH_FAILURE_RATE": "auth_failure_rate",
    "NORMA_AUTH_FAILURE_BURST": "auth_failure_burst",
    "NORMA_MAX_HEADER_BYTES": "max_header_bytes",
    "NORMA_MAX_HEAD_BYTES": "max_head_bytes",
    "NORMA_HEADER_TIMEOUT": "header_timeout",
    "NORMA_BODY_TIMEOUT": "body_timeout",
    "NORMA_MAX_CONNECTIONS": "max_connections",
    "NORMA_CORS_ORIGINS": "cors_origins",
    "NORMA_AUDIT_DOCS": "audit_docs",
    "NORMA_STORE_CONNECT_TIMEOUT": "store_connect_timeout",
    "NORMA_STORE_READ_TIMEOUT": "store_read_timeout",
    "NORMA_STORE_WRITE_TIMEOUT": "store_write_timeout",
    "NORMA_STALE_FOR": "stale_for",
    "NORMA_UPSTREAM_URL": "upstream_url",
    "NORMA_UPSTREAM_API_KEY": "upstream_api_key",
    "NORMA_UPSTREAM_TIMEOUT": "upstream_timeout",
    "NORMA_GUARD_POLICY": "guard_policy",
    "NORMA_GUARD_MAX_REPAIRS": "guard_max_repairs",
}


def env_settings(environ: Mapping[str, str] | None = None) -> dict[str, str | list[str]]:
    """The settings the individual ``NORMA_*`` variables set (unvalidated), by field name: each a string, the CORS
    origins a list of them."""
    env = os.environ if environ is None else environ
    data: dict[str, str | list[str]] = {}
    for variable, name in _ENV_FIELDS.items():
        value = env.get(variable, "").strip()
        if value:
            data[name] = [v.strip() for v in value.split(",") if v.strip()] if name == "cors_origins" else value
    return data


class ServiceSettings(BaseModel):
    """Everything ``create_app`` needs to know; every limit has a safe default."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    db_url: str | None = None
    """The rule store (``sqlite:///…`` or ``postgresql://…``); None: ``$NORMA_DB_URL`` or ``./.norma/norma.db``."""
    admin_key: SecretStr | None = None
    """A static admin secret (besides admin keys kept in the store); None: only stored admin keys."""
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024, le=256 * 1024 * 1024)
    """Largest request body accepted; a bigger one gets 413 before any work starts."""
    request_timeout: float = Field(default=30.0, gt=0, le=3600)
    """Seconds a read or compute request may take before it is answered 503 (a write is bounded by
    ``store_write_timeout`` instead: it commits or is rolled back, never abandoned half-way)."""
    store_connect_timeout: float = Field(default=3.0, gt=0, le=600)
    """Seconds to open a connection to a PostgreSQL store (SQLite ignores the store timeouts)."""
    store_read_timeout: float = Field(default=5.0, gt=0, le=3600)
    """Seconds a read of a few rows may wait for a PostgreSQL store (an API key, a tenant's version)."""
    store_write_timeout: float = Field(default=20.0, gt=0, le=3600)
    """Seconds a write (or a read of a whole tenant) may wait for a PostgreSQL store; past it the write is rolled
    back, never committed later, and answered 503."""
    stale_for: float = Field(default=300.0, ge=0, le=86400)
    """While the store is unreachable: seconds after the store last answered that a tenant's cached matcher and an
    API key it verified are still used (answers carry ``Norma-Stale-Since``); 0: never, every request needs the
    store. Also the longest a key revoked just before an outage keeps working."""
    rate_limit: float = Field(default=100.0, ge=0)
    """Requests per second allowed per API key and worker process (token bucket); 0 turns the limit off."""
    rate_burst: int = Field(default=200, ge=1)
    """Requests a key may make at once before the rate applies (the bucket's size)."""
    auth_failure_rate: float = Field(default=1.0, ge=0)
    """Failed authentications per second allowed per client address and per key id, after the burst (token
    buckets per worker process); past it the answer is 429 with ``Retry-After``; 0 turns the limit off."""
    auth_failure_burst: int = Field(default=20, ge=1)
    """Failed authentications a client address (or a key id) may make at once before the rate applies."""
    max_header_bytes: int = Field(default=8 * 1024, ge=256, le=1024 * 1024)
    """Largest single request header (name and value); a bigger one gets 431 (``norma serve`` only)."""
    max_head_bytes: int = Field(default=32 * 1024, ge=1024, le=16 * 1024 * 1024)
    """Largest request head (request line and every header together); a bigger one gets 431 before more of it is
    read (``norma serve`` only)."""
    header_timeout: float = Field(default=10.0, gt=0, le=3600)
    """Seconds a client has to send a complete request head, counted from its connection (or from the first byte of
    a later request on a kept-alive connection); then 408 and the connection is closed (``norma serve`` only)."""
    body_timeout: float = Field(default=30.0, gt=0, le=3600)
    """Seconds a client has to send the whole request body once its head is in; then 408 and the connection is
    closed."""
    max_connections: int = Field(default=1000, ge=1, le=1_000_000)
    """Open connections per worker process; one more is answered 503 and closed at once (``norma serve`` only)."""
    cors_origins: tuple[str, ...] = ()
    """Origins allowed to call the API from a browser; empty (the default): CORS is off."""
    audit_docs: Path | None = None
    """Folder of normative documents for ``POST /v1/audit``; None: audits run without documents."""
    playground: bool = True
    """Serve the playground page at ``/``."""
    upstream_url: str | None = None
    """The OpenAI-compatible model the guarded endpoint (``POST /v1/tenants/{t}/chat/completions``) forwards to,
    its base URL (``https://api.openai.com/v1``: requests go to ``{upstream_url}/chat/completions``); None: that
    route answers 503."""
    upstream_api_key: SecretStr | None = None
    """The upstream's API key, sent as ``Authorization: Bearer``; from ``$NORMA_UPSTREAM_API_KEY`` only (never a
    command-line option), never logged or answered."""
    upstream_timeout: float = Field(default=60.0, gt=0, le=3600)
    """Seconds one upstream call may take (a streamed one: before its first byte and between two); then 504."""
    guard_policy: GuardPolicy = GuardPolicy.REPAIR
    """What the guarded endpoint does with an answer that fails the turn check (a request's ``norma.policy`` may
    choose another)."""
    guard_max_repairs: int = Field(default=1, ge=0, le=MAX_REPAIRS)
    """How many times ``repair`` asks the upstream again before it blocks."""

    @pydantic.field_validator("store_write_timeout")
    @classmethod
    def _writes_wait_longer(cls, value: float, info: pydantic.ValidationInfo) -> float:
        read = info.data.get("store_read_timeout")
        if isinstance(read, float) and value < read:
            raise ValueError(f"must be at least store_read_timeout ({read:g})")
        return value

    @pydantic.field_validator("max_head_bytes")
    @classmethod
    def _head_holds_a_header(cls, value: int, info: pydantic.ValidationInfo) -> int:
        header = info.data.get("max_header_bytes")
        if isinstance(header, int) and value < header:
            raise ValueError(f"must be at least max_header_bytes ({header})")
        return value

    @pydantic.field_validator("upstream_url")
    @classmethod
    def _upstream_is_http(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http:// or https:// URL, such as https://api.openai.com/v1")
        if parts.username is not None or parts.password is not None:
            raise ValueError("must not hold credentials: put the key in NORMA_UPSTREAM_API_KEY")
        if parts.query or parts.fragment:
            raise ValueError("must be a base URL without a query or fragment")
        return value.strip().rstrip("/")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServiceSettings:
        """Settings from :data:`SETTINGS_ENV` (JSON), else from the individual ``NORMA_*`` variables."""
        env = os.environ if environ is None else environ
        raw = env.get(SETTINGS_ENV, "").strip()
        data: dict[str, Any]
        if raw:
            try:
                data = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise ConfigError(f"{SETTINGS_ENV} is not valid JSON: {exc.msg}", source=SETTINGS_ENV) from None
            if not isinstance(data, dict):
                raise ConfigError(f"{SETTINGS_ENV} must hold a JSON object", source=SETTINGS_ENV)
        else:
            data = env_settings(env)
        try:
            return cls.model_validate(data)
        except pydantic.ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise ConfigError(
                f"bad service setting {field}: {first['msg']}",
                source=SETTINGS_ENV if raw else "environment",
                location=field,
            ) from None

    def to_env(self) -> str:
        """The JSON :meth:`from_env` reads back into equal settings (secrets included: keep it in the environment)."""
        data = self.model_dump(mode="json")
        data["admin_key"] = self.admin_key.get_secret_value() if self.admin_key is not None else None
        upstream_key = self.upstream_api_key
        data["upstream_api_key"] = upstream_key.get_secret_value() if upstream_key is not None else None
        return json.dumps(data)
