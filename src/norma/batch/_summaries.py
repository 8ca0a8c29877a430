"""The JSON documents the batch commands write: results plus totals that :func:`norma.batch.merge_outputs` can
recompute from the results of several shards (so a merge writes what one run would have)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from norma.names import seed_summary

__all__ = ["match_document", "names_document", "rubric_document", "seed_spread_document"]


def names_document(rows: Sequence[dict[str, Any]], compat: str, hash_seed: int | None) -> dict[str, Any]:
    """``norma names score --format json``: each row a record's score (with its ``line``) and the mean final."""
    finals = [row["final"] for row in rows]
    return {
        "compat": compat,
        "hash_seed": hash_seed,
        "records": len(rows),
        "mean_final": sum(finals) / len(finals) if finals else None,
        "results": list(rows),
    }


def seed_spread_document(
    rows: Sequence[dict[str, Any]], compat: str, hash_seeds: str, seed_count: int
) -> dict[str, Any]:
    """``norma names score --hash-seeds ... --format json``: per record the summary over seeds; overall the summary
    over seeds of the file's mean final score (``hash_seeds`` as written, ``0-99``)."""
    means = [sum(row["finals"][j] for row in rows) / len(rows) for j in range(seed_count)] if rows else []
    return {
        "compat": compat,
        "hash_seeds": hash_seeds,
        "seed_count": seed_count,
        "records": len(rows),
        "overall": seed_summary(means) if rows else None,
        "results": list(rows),
    }


def match_document(rows: Sequence[dict[str, Any]], rules: int, bad: int = 0) -> dict[str, Any]:
    """``norma match --batch --format json``: one row per message matched, how many matched at least one rule and
    how many none, and the records that could not be matched (``bad``: they have no row); ``records`` counts them
    all."""
    matched = sum(1 for row in rows if row.get("matches"))
    return {
        "rules": rules,
        "records": len(rows) + bad,
        "messages": len(rows),
        "matched": matched,
        "unmatched": len(rows) - matched,
        "bad": bad,
        "results": list(rows),
    }


def rubric_document(rows: Sequence[dict[str, Any]], rubric: str, bad: int = 0) -> dict[str, Any]:
    """``norma rubric eval --batch --format json``: one evaluation per record, the mean reward, the verdicts and the
    records that could not be evaluated (``bad``: they have no row); ``records`` counts them all."""
    rewards = [row["reward"] for row in rows if isinstance(row.get("reward"), int | float)]
    return {
        "rubric": rubric,
        "records": len(rows) + bad,
        "evaluated": len(rows),
        "bad": bad,
        "mean_reward": math.fsum(rewards) / len(rewards) if rewards else None,
        "passed": sum(1 for row in rows if row.get("passed") is True),
        "failed": sum(1 for row in rows if row.get("passed") is False),
        "results": list(rows),
    }
