"""The atheris harness (tests/fuzz/atheris_fuzz.py) stays runnable: every target, on its seeds and cut/garbled
copies of them, without libFuzzer (``make fuzz`` runs each one for 100,000 mutated inputs)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")

from tests.fuzz import atheris_fuzz

HARNESS = Path(atheris_fuzz.__file__)


@pytest.mark.parametrize("name", sorted(atheris_fuzz.TARGETS))
def test_target_accepts_its_seeds_and_their_mutations(name: str) -> None:
    target, seeds = atheris_fuzz.TARGETS[name]
    corpus = seeds()
    assert corpus, f"{name} has no seed"
    rng = random.Random(name)
    for seed in corpus:
        target(seed)
        for _ in range(5):
            data = bytearray(seed[: rng.randrange(len(seed) + 1)])
            for _ in range(rng.randrange(4)):
                if data:
                    data[rng.randrange(len(data))] = rng.randrange(256)
            target(bytes(data))


def test_libfuzzer_runs_a_target_and_reports_done(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(HARNESS), "names_record", "-runs=300", "-timeout=10", f"-artifact_prefix={tmp_path}/"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Done 300 runs" in result.stderr


def test_an_unknown_target_is_refused() -> None:
    result = subprocess.run([sys.executable, str(HARNESS), "nope"], capture_output=True, text=True, check=False)
    assert result.returncode != 0
    assert "unknown target 'nope'" in result.stderr
