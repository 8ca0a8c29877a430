"""A rulebook file compiled once: :func:`file_matcher` keeps one snapshot per (file bytes, norma version, model) in
the user's cache folder, so matching the same file again neither parses, embeds nor measures anything.

A snapshot is a folder ``<cache>/rulebooks/<file key>-<model key>/`` holding

* ``rules.json``: the rules as the reader accepted them (read back with ``Rule.from_stored``, much faster than
  validating YAML again), the model id (the encoder's identity: model, precision and encoder version, which the
  folder's name is made of too, so a snapshot of another encoder is never read) and, per rule, how many vector
  rows it has (the rows follow the rules' order, each rule's in :func:`~norma.rules.rule_texts` order);
* ``vectors.npy``: those rows (float32, as the embedder returned them), memory-mapped when read;
* ``confidence.json`` (optional): the rulebook's statistics for the confidence (:class:`RulebookStats`).

A folder is written whole under a temporary name and renamed into place, ``confidence.json`` through a temporary
file:
a reader sees a snapshot whole or not at all. A snapshot that does not read back (missing, truncated, another
format) is ignored and written again: a cache only costs time. Messages are never written here; the rule texts of
the first build also go through the user's embedding cache (``EmbeddingCache.in_user_cache``), so an edited file
embeds only its changed texts.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from norma.embeddings import Embedder, get_embedder, user_cache_dir
from norma.errors import NormaError
from norma.matching._confidence import RulebookStats
from norma.matching._config import MatchConfig
from norma.matching._files import load_rules
from norma.matching._gate import HeldOut, default_held_out
from norma.matching._matcher import RuleMatcher
from norma.rules import Rule, rule_texts

__all__ = ["MAX_SNAPSHOTS", "file_matcher", "snapshot_dir"]

_FORMAT = 2  # 2: a check's unset `when` is stored as null (format 1 stored "matched" for every check)
_FOLDER = "rulebooks"
_RULES = "rules.json"
_VECTORS = "vectors.npy"
_STATS = "confidence.json"
MAX_SNAPSHOTS = 16
"""Snapshots kept in the cache folder: past it, writing one removes the least recently used (a 3,000-rule file's is
about 14 MB)."""


def file_matcher(
    path: str | os.PathLike[str],
    config: MatchConfig | None = None,
    *,
    embedder: Embedder | None = None,
    held_out: HeldOut | None = None,
) -> RuleMatcher:
    """The rules of a YAML / JSON rulebook file in a :class:`RuleMatcher`, compiled once per (file bytes, norma
    version, model) and kept in the user's cache folder (:func:`norma.embeddings.user_cache_dir`, see the module
    docstring): a second call on an unchanged file reads the rules, their vectors and the confidence's
    statistics back instead of parsing, embedding and measuring them.

    ``embedder`` defaults to :func:`norma.embeddings.get_embedder`; ``held_out``: the embedder's, when it is an
    adapted encoder (:func:`~norma.matching.read_held_out`): the confidence's statistics are then measured on the
    examples it held out (with the default embedder, the default model folder's, ``$NORMA_MODEL_DIR``). A file that
    cannot be read or parsed raises what :func:`~norma.matching.load_rules` raises; a cache folder that cannot be
    read or written only costs time.
    """
    cfg = config if config is not None else MatchConfig()
    if embedder is None and held_out is None:
        held_out = default_held_out()
    source = Path(path)
    try:
        data = source.read_bytes()
    except OSError:
        return RuleMatcher(load_rules(source), cfg, embedder=embedder, gate=held_out)  # the reader reports it
    model_embedder = embedder if embedder is not None else get_embedder()
    model = model_embedder.model_id
    file_key = _file_key(data)
    folder = _cache_folder()
    kept = _read(folder / _name(file_key, model)) if folder is not None else None
    matcher = kept.matcher(cfg, embedder) if kept is not None and kept.model == model else None
    if kept is not None and matcher is not None:
        if held_out is not None:
            matcher.set_gate(held_out)
        _keep_stats(matcher, kept.stats, kept.folder)
        return matcher
    rules = load_rules(source)
    rows, vectors = _embed(rules, model_embedder)
    matcher = RuleMatcher(rules, cfg, embedder=embedder, vectors=_by_rule(rules, rows, vectors), gate=held_out)
    if folder is not None:
        _write(folder, _name(file_key, model), model, rules, rows, vectors, matcher.stats().to_dict())
    return matcher


def snapshot_dir() -> Path:
    """Where :func:`file_matcher` keeps its snapshots (``<user cache folder>/rulebooks``; maybe not created yet)."""
    return user_cache_dir() / _FOLDER


# -- the confidence's statistics ---------------------------------------------------------------------------------------


def _keep_stats(matcher: RuleMatcher, kept: dict[str, Any] | None, folder: Path) -> None:
    """Take the kept statistics of the confidence, or measure them and keep them."""
    if kept is not None:
        try:
            if matcher.keep_stats(RulebookStats.from_dict(kept)):
                return
        except NormaError:  # kept statistics that do not read back: measure them
            pass
    _write_file(folder / _STATS, json.dumps(matcher.stats().to_dict()).encode())


# -- reading ---------------------------------------------------------------------------------------------------------


class _Snapshot:
    """A snapshot read back: its model, statistics and stored rules (checked, with their vectors, by
    :meth:`matcher`)."""

    def __init__(self, folder: Path) -> None:
        meta = json.loads((folder / _RULES).read_bytes())
        if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
            raise ValueError("another snapshot format")
        self.folder = folder
        self.model: str = meta["model"]
        self._rules: list[Mapping[str, Any]] = meta["rules"]
        self._rows: list[int] = meta["rows"]
        if len(self._rows) != len(self._rules) or not all(isinstance(n, int) and n > 0 for n in self._rows):
            raise ValueError("rows do not match the rules")
        try:
            stats = json.loads((folder / _STATS).read_bytes())
        except (OSError, ValueError):
            stats = None
        self.stats: dict[str, Any] | None = stats if isinstance(stats, dict) else None

    def matcher(self, config: MatchConfig, embedder: Embedder | None) -> RuleMatcher | None:
        """The matcher of the snapshot's rules and vectors; None when they do not read back whole."""
        try:
            rules = [Rule.from_stored(item) for item in self._rules]
            # memory-mapped, read as a plain array (slices of a np.memmap cost more than the rows they hold)
            vectors = np.asarray(np.load(self.folder / _VECTORS, mmap_mode="r", allow_pickle=False))
            if vectors.dtype != np.float32 or vectors.ndim != 2 or len(vectors) != sum(self._rows):
                return None
            if any(len(rule_texts(rule)) != count for rule, count in zip(rules, self._rows, strict=True)):
                return None
            return RuleMatcher(rules, config, embedder=embedder, vectors=_by_rule(rules, self._rows, vectors))
        except (OSError, ValueError, TypeError, KeyError, NormaError):
            return None


def _read(folder: Path) -> _Snapshot | None:
    try:
        snapshot = _Snapshot(folder)
        os.utime(folder)  # used now: the last to be evicted
        return snapshot
    except (OSError, ValueError, TypeError, KeyError):
        return None


def _by_rule(rules: list[Rule], rows: list[int], vectors: np.ndarray) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    start = 0
    for rule, count in zip(rules, rows, strict=True):
        out[rule.id] = vectors[start : start + count]
        start += count
    return out


# -- building and writing --------------------------------------------------------------------------------------------


def _embed(rules: list[Rule], embedder: Embedder) -> tuple[list[int], np.ndarray]:
    """Every rule text's vector, through the user's embedding cache when it opens (rows in rule order)."""
    from norma.embeddings import CachedEmbedder, EmbeddingCache

    texts_of = [rule_texts(rule) for rule in rules]
    texts = [text for texts in texts_of for text in texts]
    rows = [len(texts) for texts in texts_of]
    if not texts:
        return rows, np.zeros((0, embedder.dim), dtype=np.float32)
    try:
        cache = EmbeddingCache.in_user_cache()
    except NormaError:  # no cache folder: embed every text
        return rows, np.asarray(embedder.embed(texts), dtype=np.float32)
    try:
        return rows, np.asarray(CachedEmbedder(embedder, cache).embed(texts), dtype=np.float32)
    finally:
        cache.close()


def _write(
    folder: Path,
    name: str,
    model: str,
    rules: list[Rule],
    rows: list[int],
    vectors: np.ndarray,
    stats: dict[str, Any],
) -> None:
    """Write a snapshot whole under a temporary name, then rename it into place (replacing one that did not read
    back); any failure leaves no snapshot, and no error."""
    target = folder / name
    partial: Path | None = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".tmp", dir=folder))
        meta = {"format": _FORMAT, "model": model, "rules": [rule.to_dict() for rule in rules], "rows": rows}
        (partial / _RULES).write_text(json.dumps(meta), encoding="utf-8")
        np.save(partial / _VECTORS, np.ascontiguousarray(vectors, dtype=np.float32), allow_pickle=False)
        (partial / _STATS).write_text(json.dumps(stats), encoding="utf-8")
        if target.exists():  # a snapshot that did not read back: out of the way first
            stale = Path(tempfile.mkdtemp(prefix=f".{name}.", suffix=".old", dir=folder))
            os.replace(target, stale / "snapshot")
            shutil.rmtree(stale, ignore_errors=True)
        os.replace(partial, target)
        partial = None
        _evict(folder)
    except OSError:
        pass
    finally:
        if partial is not None:
            shutil.rmtree(partial, ignore_errors=True)


def _evict(folder: Path) -> None:
    """Keep the :data:`MAX_SNAPSHOTS` most recently used snapshots (a snapshot read is touched); remove the files the
    CLI kept here before snapshots (``<key>.json``, ``<key>.gate-<model>.json``)."""
    for stale in folder.glob("*.json"):
        stale.unlink(missing_ok=True)
    kept = [entry for entry in folder.iterdir() if entry.is_dir() and not entry.name.startswith(".")]
    kept.sort(key=lambda entry: entry.stat().st_mtime, reverse=True)
    for old in kept[MAX_SNAPSHOTS:]:
        shutil.rmtree(old, ignore_errors=True)


def _write_file(path: Path, data: bytes) -> None:
    """Write a file whole or not at all (through a temporary file); failures are ignored."""
    try:
        fd, partial = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(partial, path)
    except OSError:
        Path(partial).unlink(missing_ok=True)


def _cache_folder() -> Path | None:
    try:
        return snapshot_dir()
    except (OSError, RuntimeError):  # no home folder to put it in
        return None


def _file_key(data: bytes) -> str:
    from norma._version import __version__

    return hashlib.sha256(data + b"\0" + __version__.encode()).hexdigest()[:32]


def _name(file_key: str, model_id: str) -> str:
    return f"{file_key}-{hashlib.sha256(model_id.encode()).hexdigest()[:16]}"
