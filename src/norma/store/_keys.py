"""API-key secrets: generated from the OS CSPRNG, stored only as a hash, compared in constant time.

A secret reads ``nrm_<key_id>_<token>``: the key id (12 hex characters) says which row to look at, the token
(32 random bytes, url-safe base64) is the part that proves possession. The store keeps SHA-256 of the whole secret:
with 256 bits of randomness a slow password hash adds nothing, and checking a key stays a microsecond.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["KEY_PREFIX", "hash_secret", "new_secret", "parse_key_id", "secret_matches"]

KEY_PREFIX = "nrm"


def new_secret() -> tuple[str, str]:
    """A fresh ``(key_id, secret)`` pair."""
    key_id = secrets.token_hex(6)
    return key_id, f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}"


def hash_secret(secret: str) -> str:
    """The hex SHA-256 of ``secret``: what the store keeps."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def parse_key_id(secret: str) -> str | None:
    """The key id inside ``secret``, or None when it does not have the shape of one of our secrets."""
    parts = secret.split("_", 2)
    if len(parts) != 3 or parts[0] != KEY_PREFIX or len(parts[1]) != 12 or not parts[2]:
        return None
    if any(c not in "0123456789abcdef" for c in parts[1]):
        return None
    return parts[1]


def secret_matches(secret: str, stored_hash: str) -> bool:
    """Whether ``secret`` hashes to ``stored_hash`` (constant-time comparison)."""
    return hmac.compare_digest(hash_secret(secret).encode("ascii"), stored_hash.encode("ascii"))
