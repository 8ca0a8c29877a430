"""CPython's ``hash(str)`` under a chosen ``PYTHONHASHSEED``, computed the same in every process.

The MIID validator seeds its phonetic weights and name-part weights with ``hash(s) % 10000``, so its scores depend
on the ``PYTHONHASHSEED`` of its process. :func:`str_hash` gives the ``hash(s)`` a CPython 3.11+ interpreter
(64-bit, the default ``siphash13`` algorithm, no small-string cutoff) started with ``PYTHONHASHSEED=hash_seed``
returns, whatever the current interpreter's own seed or version. The facts it rests on (CPython's sources):

* ``Objects/unicodeobject.c``: a str hashes the bytes of its internal buffer, ``len * kind`` bytes, where the kind
  (PEP 393) is 1 (every code point below 256, Latin-1), 2 (below 65536, UCS-2) or 4 (UCS-4), little-endian on the
  platforms the validator runs on. The empty string hashes to 0.
* ``Python/pyhash.c``: SipHash-1-3 (one compression round per 8-byte block, three finalisation rounds) keyed with
  the first 16 bytes of ``_Py_HashSecret`` read as two little-endian 64-bit words; a result of -1 becomes -2; the
  result is the signed 64-bit reading of the digest.
* ``Python/bootstrap_hash.c``: ``PYTHONHASHSEED=0`` zeroes the secret (no randomisation); ``N`` in 1..4294967295
  fills it from ``lcg_urandom(N)``: ``x = x * 214013 + 2531011 (mod 2**32)``, each byte ``(x >> 16) & 0xff``.

``tests/names/test_pyhash.py`` compares it with ``PYTHONHASHSEED=k python -c 'print(hash(s))'`` for many strings
and seeds. Results are cached per ``(string, seed)``: a validator scores the same names over and over.
"""

from __future__ import annotations

from functools import lru_cache

from norma.errors import InvalidInputError

__all__ = ["MAX_HASH_SEED", "check_hash_seed", "hash_key", "seeded_hash", "str_hash"]

MAX_HASH_SEED = 4294967295
"""The largest ``PYTHONHASHSEED`` CPython accepts (``2**32 - 1``)."""

_MASK = 0xFFFFFFFFFFFFFFFF


def check_hash_seed(value: object, location: str = "hash_seed") -> int | None:
    """Return ``value`` if it is ``None`` or a ``PYTHONHASHSEED`` (an integer 0..4294967295); raise otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_HASH_SEED:
        raise InvalidInputError(
            f"hash_seed must be an integer from 0 to {MAX_HASH_SEED} or None, not {value!r}",
            location=location,
            hint="pass the PYTHONHASHSEED of the validator's process (0 disables its randomisation)",
        )
    return value


@lru_cache(maxsize=256)
def hash_key(hash_seed: int) -> tuple[int, int]:
    """The SipHash key ``(k0, k1)`` of an interpreter started with ``PYTHONHASHSEED=hash_seed``."""
    if hash_seed == 0:
        return 0, 0
    secret = bytearray(16)
    x = hash_seed
    for index in range(16):
        x = (x * 214013 + 2531011) & 0xFFFFFFFF
        secret[index] = (x >> 16) & 0xFF
    return int.from_bytes(secret[:8], "little"), int.from_bytes(secret[8:], "little")


def _buffer(text: str) -> bytes:
    """The bytes of ``text``'s PEP 393 buffer: 1, 2 or 4 little-endian bytes a character by its widest one."""
    if text.isascii():
        return text.encode("ascii")
    widest = ord(max(text))
    if widest < 0x100:
        return text.encode("latin-1")
    if widest < 0x10000:
        return text.encode("utf-16-le", "surrogatepass")
    return text.encode("utf-32-le", "surrogatepass")


def _sipround(v0: int, v1: int, v2: int, v3: int) -> tuple[int, int, int, int]:
    """One SipRound on the four 64-bit state words."""
    m = _MASK
    v0 = (v0 + v1) & m
    v2 = (v2 + v3) & m
    v1 = ((v1 << 13 | v1 >> 51) & m) ^ v0
    v3 = ((v3 << 16 | v3 >> 48) & m) ^ v2
    v0 = (v0 << 32 | v0 >> 32) & m
    v2 = (v2 + v1) & m
    v0 = (v0 + v3) & m
    v1 = ((v1 << 17 | v1 >> 47) & m) ^ v2
    v3 = ((v3 << 21 | v3 >> 43) & m) ^ v0
    v2 = (v2 << 32 | v2 >> 32) & m
    return v0, v1, v2, v3


def _siphash13(k0: int, k1: int, data: bytes) -> int:
    """SipHash-1-3 of ``data`` with key ``(k0, k1)``, as an unsigned 64-bit integer."""
    v0 = k0 ^ 0x736F6D6570736575
    v1 = k1 ^ 0x646F72616E646F6D
    v2 = k0 ^ 0x6C7967656E657261
    v3 = k1 ^ 0x7465646279746573
    size = len(data)
    tail = size - size % 8
    words = [int.from_bytes(data[i : i + 8], "little") for i in range(0, tail, 8)]
    words.append(((size & 0xFF) << 56) | int.from_bytes(data[tail:], "little"))
    for word in words:  # one compression round per word (the last one holds the length and the tail)
        v3 ^= word
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
        v0 ^= word
    v2 ^= 0xFF
    for _ in range(3):  # three finalisation rounds
        v0, v1, v2, v3 = _sipround(v0, v1, v2, v3)
    return (v0 ^ v1) ^ (v2 ^ v3)


def str_hash(text: str, hash_seed: int) -> int:
    """``hash(text)`` in a CPython 3.11+ interpreter (64-bit) started with ``PYTHONHASHSEED=hash_seed``.

    ``str_hash("John", 0)`` is what ``PYTHONHASHSEED=0 python -c 'print(hash("John"))'`` prints, in any process.

    Raises:
        InvalidInputError: ``text`` is not a str, or ``hash_seed`` is not an integer from 0 to 4294967295.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a str, not {type(text).__name__}", location="text")
    seed = check_hash_seed(hash_seed)
    if seed is None:
        raise InvalidInputError("hash_seed must be an integer, not None", location="hash_seed")
    return seeded_hash(text, seed)


@lru_cache(maxsize=1 << 16)
def seeded_hash(text: str, hash_seed: int) -> int:
    """:func:`str_hash` without argument checks, cached (the hot path)."""
    if not text:
        return 0
    k0, k1 = hash_key(hash_seed)
    digest = _siphash13(k0, k1, _buffer(text))
    value = digest - (1 << 64) if digest >= 1 << 63 else digest
    return -2 if value == -1 else value
