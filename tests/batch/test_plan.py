"""``--workers auto`` (and ``--workers N`` as an upper bound): one process unless more pay for themselves."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from norma.audit import AuditConfig
from norma.batch import AuditJob, NamesJob, available_cpus, check_workers, plan_engine
from norma.errors import InvalidInputError
from tests.batch.conftest import AUDIT, AUDIT_DOCS, NAMES
from tests.conftest import CliResult


def test_a_small_batch_runs_in_one_process() -> None:
    plan = plan_engine(NamesJob.make(), 5)
    assert (plan.engine, plan.workers) == ("local", 1)
    assert "do not pay for starting" in plan.reason
    assert plan_engine(NamesJob.make(), 5, workers=2).engine == "local"


def test_a_large_batch_uses_the_cpus() -> None:
    plan = plan_engine(NamesJob.make(), 1_000_000)
    if available_cpus() >= 2:
        assert (plan.engine, plan.workers) == ("pool", available_cpus())
    else:
        assert (plan.engine, plan.workers) == ("local", 1)
    assert plan_engine(NamesJob.make(), 1_000_000, workers=1).engine == "local"


def test_the_embedding_model_already_uses_every_core() -> None:
    job = AuditJob.make(AUDIT_DOCS, AuditConfig(embeddings=True))
    plan = plan_engine(job, 1_000_000, workers=2)
    assert (plan.engine, plan.workers) == ("local", 1)
    assert "already uses every core" in plan.reason
    assert plan_engine(AuditJob.make(AUDIT_DOCS, AuditConfig(embeddings=False)), 1_000_000).workers >= 1


def test_an_explicit_pool_runs_as_asked() -> None:
    plan = plan_engine(NamesJob.make(), 5, engine="pool", workers=3)
    assert (plan.engine, plan.workers, plan.reason) == ("pool", 3, "as asked")
    assert plan.describe() == "engine pool, 3 workers: as asked"
    with pytest.raises(InvalidInputError, match="one process"):
        plan_engine(NamesJob.make(), 5, engine="local", workers=2)


@pytest.mark.parametrize("value", [0, -1, "x", 1.5, True, "0"])
def test_bad_worker_counts(value: object) -> None:
    with pytest.raises(InvalidInputError, match="workers"):
        check_workers(value)
    assert check_workers("3") == 3
    assert check_workers("auto") == "auto"


def test_verbose_says_what_it_chose_on_the_readme_examples(run_cli: Callable[..., CliResult]) -> None:
    names = run_cli("names", "score", str(NAMES), "--workers", "2", "-v", "--format", "json")
    assert names.code == 0
    assert "norma: engine local, 1 process: 5 records" in names.err
    audit = run_cli(
        "audit", "--batch", str(AUDIT), "--workers", "2", "--docs", str(AUDIT_DOCS), "--no-embeddings", "-v",
        "--format", "json",
    )  # fmt: skip
    assert audit.code == 1
    assert "norma: engine local, 1 process: 14 records" in audit.err
    assert "--engine pool forces the pool" in audit.err
    bad = run_cli("names", "score", str(NAMES), "--workers", "none")
    assert bad.code == 2
    assert "'none' is not a worker count" in bad.err
    shard = run_cli("names", "score", str(NAMES), "--shard", "3/2")
    assert shard.code == 2
    assert "shard 3/2 is not one of" in shard.err
