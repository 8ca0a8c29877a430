"""What is the same bits and what is within a tolerance, across block sizes, batches, threads and CPUs (issue #55;
the table in docs/design/030-embeddings.md, "Exact, and within what").

One script runs natively and under ``qemu-x86_64`` on emulated CPUs — Haswell (AVX2, FMA, no AVX-512, no VNNI: the
CPUs CI runs on) and, for what needs no AVX2 (the embedding model, the names scorer), SandyBridge (AVX, no FMA) —
whatever CPU runs the suite (but a CPU of the machine's own class: its native run is that run), and prints what
each promise covers; the tests compare the outputs. The Makefile installs qemu-user. (norma's matching needs AVX2:
simsimd and usearch stop on an illegal instruction without it.)
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

NAMES_DATA = Path(__file__).parent / "names" / "data"
CPUS = ("Haswell", "SandyBridge")
_CLASS = {"Haswell": ({"avx2", "fma"}, {"avx512f", "avx_vnni", "amx_tile"}), "SandyBridge": ({"avx"}, {"avx2", "fma"})}
"""What an emulated CPU has and lacks among the features the numeric libraries choose their kernels by."""


def _host_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return set()
    return next((set(line.split(":", 1)[1].split()) for line in text.splitlines() if line.startswith("flags")), set())


def _other_cpus(cpus: tuple[str, ...] = CPUS) -> list[str]:
    """The emulated CPUs of another class than this machine's: emulating its own class (an AVX2-only CI machine
    emulating Haswell) runs the same kernels as the native run, slower."""
    flags = _host_flags()
    return [cpu for cpu in cpus if not (_CLASS[cpu][0] <= flags and not _CLASS[cpu][1] & flags)]


_SCRIPT = r"""
import hashlib, json, sys
import numpy as np
import norma.embeddings._probes as probes_module
from norma.embeddings import BertEmbedder, probe_similarities
from norma.batch._stable import embed_stable
from norma.matching import RuleMatcher
from norma.rules import Rule

def digest(array):
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()

out = {}
parts = sys.argv[1:]
rng = np.random.default_rng(11)
matrix = rng.standard_normal((700, 384)).astype(np.float32)
matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
texts = [f"t{i % 650}" for i in range(700)]
texts[3] = None
probes = list(range(0, 700, 2))
if "matching" in parts:
    out["probes"] = digest(probe_similarities(matrix, texts, probes))
    probes_module._PROBE_BLOCK, probes_module._ROW_BLOCK = 5, 13
    out["probes_small_blocks"] = digest(probe_similarities(matrix, texts, probes))

    class NoEmbedder:
        model_id, dim = "none", 384
        def embed(self, texts):
            raise AssertionError("every vector is given")

    book = [Rule(id=f"r{i}", condition_text=f"rule {i}", examples=[f"ex {i} {k}" for k in range(3)]) for i in range(60)]
    vectors = {rule.id: matrix[4 * i : 4 * i + 4] for i, rule in enumerate(book)}
    matcher = RuleMatcher(book, vectors=vectors, embedder=NoEmbedder())
    out["gate"] = repr(matcher.gate().threshold)
    out["stats"] = repr(matcher.stats())
    found = matcher.match("ex 3 1", query_vector=matrix[13] + matrix[100] * np.float32(0.5))
    out["matches"] = [[m.rule.id, m.similarity_score, m.final_score, m.confidence] for m in found]

if "embeddings" in parts:
    sentences = [
        "how do I reset my card pin", "my transfer has not arrived yet", "what is the exchange rate today",
        "cancel my account please", "why was I charged twice", "can I get a refund", "where is my new card",
        "the app will not let me log in",
    ]
    one, two = BertEmbedder(threads=1), BertEmbedder(threads=2)
    forward = embed_stable(one, sentences)
    order = [5, 2, 7, 0, 3, 6, 1, 4]
    backward = embed_stable(one, [sentences[i] for i in order])[np.argsort(order)]
    out["embeddings"] = forward.tolist()
    out["embeddings_other_batches"] = digest(backward)
    out["embeddings_two_threads"] = digest(embed_stable(two, sentences))
    out["embeddings_digest"] = digest(forward)
    alone = np.concatenate([one.embed([text]) for text in sentences])
    out["embedded_alone_max_difference"] = float(np.abs(alone - forward).max())
print(json.dumps(out))
"""


@cache
def _run(cpu: str | None, parts: tuple[str, ...] = ("matching", "embeddings")) -> dict[str, Any]:
    """The script's output for ``parts``, natively (``cpu`` None) or under qemu-x86_64 emulating ``cpu``."""
    command = [sys.executable, "-c", _SCRIPT, *parts]
    if cpu is not None:
        qemu = shutil.which("qemu-x86_64")
        assert qemu is not None, "qemu-x86_64 is missing: `make install` installs qemu-user (apt)"
        command = [qemu, "-cpu", cpu, *command]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


emulated = pytest.mark.skipif(
    platform.machine() != "x86_64" or sys.platform != "linux", reason="emulates x86-64 CPUs with qemu-user"
)


def test_probes_and_the_gate_are_the_same_bits_on_every_cpu_and_block_size_match_scores_within_1e9() -> None:
    native = _run(None)
    assert native["probes_small_blocks"] == native["probes"]
    if platform.machine() == "x86_64" and sys.platform == "linux":
        if not _other_cpus(("Haswell",)):
            return  # this machine is of Haswell's class: the native run above is that run
        found = _run("Haswell", ("matching",))
        assert (found["probes"], found["probes_small_blocks"]) == (native["probes"], native["probes"])
        assert found["gate"] == native["gate"]
        assert found["stats"] == native["stats"]  # the confidence's rulebook figures: the same bits
        # match scores (float32 vectors summed in float64 by numpy's own loops) and confidences: the same rules,
        # within 1e-9
        assert [m[0] for m in found["matches"]] == [m[0] for m in native["matches"]]
        assert np.allclose([m[1:] for m in found["matches"]], [m[1:] for m in native["matches"]], rtol=0, atol=1e-9)


def test_embeddings_are_the_same_bits_whatever_the_batch_and_threads_and_within_1e6_across_cpus() -> None:
    native = _run(None)
    assert native["embeddings_other_batches"] == native["embeddings_digest"]
    assert native["embeddings_two_threads"] == native["embeddings_digest"]
    # a text embedded alone is padded differently: not the same bits, within the stated 1e-6
    assert 0 < native["embedded_alone_max_difference"] <= 1e-6
    if platform.machine() == "x86_64" and sys.platform == "linux":
        reference = np.asarray(native["embeddings"], dtype=np.float32)
        for cpu in _other_cpus():
            found = _run(cpu, ("embeddings",))
            assert found["embeddings_other_batches"] == found["embeddings_digest"], cpu
            assert found["embeddings_two_threads"] == found["embeddings_digest"], cpu
            vectors = np.asarray(found["embeddings"], dtype=np.float32)
            assert float(np.abs(vectors - reference).max()) <= 1e-6, cpu


@emulated
@pytest.mark.parametrize("cpu", CPUS)
def test_the_names_scores_match_the_validator_bit_for_bit_on_other_cpus(cpu: str) -> None:
    # pure Python floats (math.exp, sums in a fixed order): the golden values hold on any CPU
    golden = NAMES_DATA / "golden_miid.json"
    qemu = shutil.which("qemu-x86_64")
    assert qemu is not None, "qemu-x86_64 is missing: `make install` installs qemu-user (apt)"
    env = {**os.environ, "PYTHONHASHSEED": json.loads(golden.read_text(encoding="utf-8"))["pythonhashseed"]}
    done = subprocess.run(
        [qemu, "-cpu", cpu, sys.executable, str(NAMES_DATA / "check_golden.py"), str(golden)],
        capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    assert report["checked"] > 8000
    assert report["mismatch_count"] == 0, report["mismatches"][:5]
