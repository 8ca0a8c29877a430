"""The int8 candidate scan: its bounds contain every exact similarity, and a matcher using it returns exactly what
the float32 scan returns (rules, scores, explanations, dropped rules), whatever the vectors, examples, windows,
scopes, filters and updates."""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import norma.matching._pipeline as pipeline
import norma.matching._vectors as vectors_module
from norma.errors import InvalidInputError
from norma.matching import MatchConfig, MatchResult, Rule, RuleMatcher, Scope, SessionState
from norma.matching._vectors import VectorIndex, quantize_rows

DIM = 24


def scanned(mode: str, match: Callable[[], MatchResult]) -> MatchResult:
    """``match()`` with the vector candidates found by the ``mode`` scan (``_pipeline.SCAN``)."""
    before = pipeline.SCAN
    pipeline.SCAN = mode
    try:
        return match()
    finally:
        pipeline.SCAN = before


def unit_rows(rng: np.random.Generator, count: int, dim: int = DIM, kind: str = "gauss") -> np.ndarray:
    if kind == "onehot":  # the whole norm on one coordinate: the coarsest int8 scale
        rows = np.zeros((count, dim), dtype=np.float32)
        rows[np.arange(count), rng.integers(0, dim, count)] = rng.choice([-1.0, 1.0], count)
        return rows
    rows = rng.standard_normal((count, dim)).astype(np.float32)
    if kind == "spiky":  # one large coordinate and small noise: most coordinates round to 0 or 1 level
        rows *= 0.01
        rows[np.arange(count), rng.integers(0, dim, count)] += 1.0
    if kind == "clustered":  # near-duplicates: many rules within the bound of each other
        rows = rows[:1] + 0.002 * rows
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_quantize_rows_levels_scale_and_residual() -> None:
    rows = unit_rows(np.random.default_rng(1), 50)
    rows[0] = 0.0
    q8, scale, residual = quantize_rows(rows)
    assert q8.dtype == np.int8
    assert int(np.abs(q8.astype(np.int16)).max()) == 127  # -128 never appears
    assert np.array_equal(np.abs(q8[1:]).max(axis=1), np.full(49, 127, dtype=np.int8))
    expected = np.linalg.norm(rows.astype(np.float64) - q8.astype(np.float64) * scale[:, None], axis=1)
    np.testing.assert_allclose(residual, expected, rtol=0, atol=1e-15)
    assert residual[0] == 0.0
    assert not q8[0].any()
    assert (residual[1:] > 0).all()
    assert (residual <= scale * np.sqrt(DIM) / 2 + 1e-12).all()


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rules=st.integers(1, 40),
    examples=st.integers(0, 3),
    windows=st.integers(1, 3),
    kind=st.sampled_from(["gauss", "onehot", "spiky", "clustered"]),
)
def test_bounds_contain_the_exact_similarity(seed: int, rules: int, examples: int, windows: int, kind: str) -> None:
    rng = np.random.default_rng(seed)
    index = VectorIndex(DIM)
    vectors = {slot: unit_rows(rng, 1 + examples, kind=kind) for slot in range(rules)}
    for slot, rows in vectors.items():
        index.set(slot, rows)
    for slot in range(0, rules, 3):  # free some rows, and move others by updates
        index.remove(slot)
        if slot % 2:
            vectors[slot] = unit_rows(rng, 1 + examples, kind=kind)
            index.set(slot, vectors[slot])
        else:
            del vectors[slot]
    query = unit_rows(rng, windows, kind=kind)
    query[0] *= 1.5  # a query of another length: the bound scales with |q|
    lower, upper = index.similarity_bounds(query, rules)
    for slot in range(rules):
        if slot not in vectors:
            assert lower[slot] == upper[slot] == -np.inf
            continue
        exact = float((vectors[slot].astype(np.float64) @ query.astype(np.float64).T).max())
        assert lower[slot] <= exact <= upper[slot]
        assert upper[slot] - lower[slot] < 0.2 * max(1.0, float(np.linalg.norm(query, axis=1).max()))


def _rules(rng: np.random.Generator, count: int, examples: int, kind: str) -> tuple[list[Rule], dict[str, np.ndarray]]:
    rules, vectors = [], {}
    for i in range(count):
        scope = [Scope.GLOBAL, Scope.GLOBAL, Scope.SCENARIO, Scope.STEP][i % 4]
        rule = Rule(
            id=f"r{i:03d}",
            condition_text=f"topic{i % 7} word{i % 5} customer",
            priority=int(rng.integers(0, 4)),
            scope=scope,
            scenario_id="s1" if scope is not Scope.GLOBAL else None,
            step_id="p1" if scope is Scope.STEP else None,
            tags=[f"t{i % 3}"],
            examples=[f"example {i} {j}" for j in range(examples)],
            max_fires_per_session=2 if i % 5 == 0 else None,
        )
        rules.append(rule)
        vectors[rule.id] = unit_rows(rng, 1 + examples, kind=kind)
    return rules, vectors


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    count=st.integers(1, 120),
    examples=st.integers(0, 3),
    kind=st.sampled_from(["gauss", "onehot", "spiky", "clustered"]),
    adr=st.booleans(),
    max_candidates=st.sampled_from([1, 3, 30]),
)
def test_int8_and_float32_scans_give_identical_matches(
    seed: int, count: int, examples: int, kind: str, adr: bool, max_candidates: int
) -> None:
    rng = np.random.default_rng(seed)
    rules, vectors = _rules(rng, count, examples, kind)
    base = MatchConfig.adr() if adr else MatchConfig()
    config = base.with_(threshold=None, max_candidates=max_candidates)
    matcher = RuleMatcher(rules, config, embedder=None, vectors=vectors)
    sessions = [None, SessionState(active_scenario_id="s1", active_step_id="p1", fire_counts={"r000": 2}, turn=3)]
    for round_ in range(2):
        for _ in range(4):
            query = unit_rows(rng, int(rng.integers(1, 3)), kind=kind)
            message = f"topic{int(rng.integers(0, 7))} customer word{int(rng.integers(0, 5))}"
            for session in sessions:
                for tags in (None, ["t1"]):

                    def match() -> MatchResult:
                        return matcher.match(message, session, tags=tags, query_vector=query, explain=True)  # noqa: B023

                    a, b = scanned("int8", match), scanned("float32", match)
                    assert a == b
                    assert a.dropped == b.dropped
        if round_ == 0 and count > 2:  # updates: change some vectors, remove a rule, then match again
            changed = rules[: count // 2]
            matcher.upsert(changed, {r.id: unit_rows(rng, 1 + examples, kind=kind) for r in changed})
            matcher.remove([rules[-1].id])


def test_many_equal_vectors_fall_back_to_the_float32_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    # 1,500 rules with one vector: the bounds cannot separate them, so the candidates come from the float32 scan
    same = unit_rows(np.random.default_rng(3), 1)
    rules = [Rule(id=f"r{i:04d}", condition_text=f"topic{i}") for i in range(1500)]
    vectors = {r.id: same for r in rules}
    scans: list[str] = []
    real = pipeline.similarities

    def spy(*args: object) -> np.ndarray:
        scans.append("float32")
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "similarities", spy)
    monkeypatch.setattr(pipeline, "SCAN", "int8")
    matcher = RuleMatcher(rules, MatchConfig(threshold=None), embedder=None, vectors=vectors)
    result = matcher.match("topic7", query_vector=same[0])
    assert scans == ["float32"]
    assert result[0].rule.id == "r0007"  # the one lexical hit wins the tie of equal similarities
    assert [m.rule.id for m in result[1:]] == [f"r{i:04d}" for i in range(10) if i != 7]  # then by id


def test_the_int8_scan_keeps_the_interpreter_sane() -> None:
    # simsimd 6.5's cdist(out=...) drops a reference to None on each call; norma must not use it
    before = sys.getrefcount(None)
    rng = np.random.default_rng(4)
    index = VectorIndex(DIM)
    index.set(0, unit_rows(rng, 3))
    for _ in range(2000):
        index.similarity_bounds(unit_rows(rng, 1), 1)
    assert sys.getrefcount(None) >= before - 100


def test_the_packed_product_covers_large_indexes_through_updates_and_compaction() -> None:
    # from _PACKED_MIN_ROWS rows on, the int8 scan is onnxruntime's prepacked MatMulInteger, plus simsimd for rows
    # added after packing; the bounds must hold (and match the float32 scan) at every stage
    rng = np.random.default_rng(11)
    size = vectors_module._PACKED_MIN_ROWS + 500
    index = VectorIndex(DIM)
    rows = {slot: unit_rows(rng, 1 + slot % 2) for slot in range(size)}
    for slot, vectors in rows.items():
        index.set(slot, vectors)
    query = unit_rows(rng, 2)

    def check() -> None:
        lower, upper = index.similarity_bounds(query, size)
        for slot in range(size):
            if slot not in rows:
                assert upper[slot] == -np.inf
                continue
            exact = float((rows[slot].astype(np.float64) @ query.astype(np.float64).T).max())
            assert lower[slot] <= exact <= upper[slot]

    check()
    packed = index._packed
    assert packed is not None
    assert packed.rows == index._rows_used
    for slot in range(0, 300):  # a tail of new rows (scanned by simsimd) and freed rows inside the pack
        rows[slot] = unit_rows(rng, 1)
        index.set(slot, rows[slot])
    check()
    assert index._packed is packed  # the tail is small: no repacking
    for slot in range(300, size, 2):  # enough removals to compact: rows are renumbered and the pack rebuilt
        index.remove(slot)
        del rows[slot]
    check()
    assert index._packed is not packed
    assert index._packed is not None
    assert index._packed.rows == index._rows_used


def test_a_large_matcher_answers_the_same_with_int8_and_float32_scans() -> None:
    # the default ("auto") scans in int8 from 2,048 rule vectors on
    rng = np.random.default_rng(12)
    rules, vectors = _rules(rng, vectors_module._PACKED_MIN_ROWS + 200, 1, "gauss")
    config = MatchConfig(threshold=None)
    matcher = RuleMatcher(rules, config, embedder=None, vectors=vectors)
    session = SessionState(active_scenario_id="s1", active_step_id="p1")
    for round_ in range(3):
        for _ in range(5):
            query = unit_rows(rng, 1)
            message = f"topic{int(rng.integers(0, 7))} customer"
            assert matcher.match(message, session, query_vector=query) == scanned(
                "float32",
                lambda: matcher.match(message, session, query_vector=query),  # noqa: B023
            )
        changed = rules[round_ * 700 : round_ * 700 + 700]
        matcher.upsert(changed, {r.id: unit_rows(rng, 2) for r in changed})


@pytest.mark.parametrize(("rows", "expected"), [(100, "float32"), (2100, "int8")])
def test_auto_scans_in_int8_from_2048_rule_vectors(rows: int, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(13)
    rules = [Rule(id=f"r{i:04d}", condition_text=f"topic{i}") for i in range(rows)]
    vectors = {r.id: unit_rows(rng, 1) for r in rules}
    used: list[str] = []
    real_bounded, real_float = pipeline.bounded_candidates, pipeline.similarities
    monkeypatch.setattr(pipeline, "bounded_candidates", lambda *a: used.append("int8") or real_bounded(*a))
    monkeypatch.setattr(pipeline, "similarities", lambda *a: used.append("float32") or real_float(*a))
    matcher = RuleMatcher(rules, MatchConfig(threshold=None), embedder=None, vectors=vectors)
    assert len(matcher.match("topic1", query_vector=vectors["r0001"][0])) == 10
    assert used == [expected]


def test_rows_added_after_a_scan_are_quantised_at_the_next_one_even_across_a_compaction() -> None:
    rng = np.random.default_rng(14)
    index = VectorIndex(DIM)
    rows = {slot: unit_rows(rng, 2) for slot in range(200)}
    for slot, vectors in rows.items():
        index.set(slot, vectors)
    query = unit_rows(rng, 1)
    index.similarity_bounds(query, 200)  # rows 0..399 quantised
    for slot in range(200, 300):  # an unquantised tail ...
        rows[slot] = unit_rows(rng, 2)
        index.set(slot, rows[slot])
    generation = index._generation
    for slot in range(0, 250, 2):  # ... then a compaction that renumbers quantised and unquantised rows alike
        index.remove(slot)
        del rows[slot]
    assert index._generation > generation
    lower, upper = index.similarity_bounds(query, 300)
    for slot in range(300):
        if slot in rows:
            exact = float((rows[slot].astype(np.float64) @ query[0].astype(np.float64)).max())
            assert lower[slot] <= exact <= upper[slot]
            assert upper[slot] - lower[slot] < 0.2
        else:
            assert upper[slot] == -np.inf


@pytest.mark.parametrize(
    "bad",
    [np.full(DIM, np.nan), np.full(DIM, np.inf), np.zeros(DIM), np.zeros((2, DIM)), np.zeros((1, 0)), [["x"] * DIM]],
)
def test_a_bad_query_vector_is_invalid_input(bad: object) -> None:
    rng = np.random.default_rng(15)
    rules = [Rule(id="a", condition_text="refund"), Rule(id="b", condition_text="card")]
    matcher = RuleMatcher(rules, embedder=None, vectors={r.id: unit_rows(rng, 1) for r in rules})
    with pytest.raises(InvalidInputError, match="query_vectors"):
        matcher.match("refund", query_vector=bad)  # type: ignore[arg-type]


def test_concurrent_matches_and_updates_share_the_scan_buffers_safely() -> None:
    # the int8 scan, its pack and the by-slot score buffers are per matcher: threads must not see each other's work
    rng = np.random.default_rng(16)
    rules, vectors = _rules(rng, 2600, 1, "gauss")
    matcher = RuleMatcher(rules, MatchConfig(threshold=None), embedder=None, vectors=vectors)
    queries = [unit_rows(rng, 1) for _ in range(60)]
    messages = [f"topic{i % 7} customer word{i % 5}" for i in range(60)]
    expected = [matcher.match(m, query_vector=q) for m, q in zip(messages, queries, strict=True)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        got = list(pool.map(lambda i: matcher.match(messages[i], query_vector=queries[i]), range(60)))
    assert got == expected

    changed = {r.id: unit_rows(rng, 2) for r in rules[:400]}
    errors: list[BaseException] = []

    def update() -> None:
        try:
            for start in range(0, 400, 50):
                batch = rules[start : start + 50]
                matcher.upsert(batch, {r.id: changed[r.id] for r in batch})
            matcher.remove([r.id for r in rules[-100:]])
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    with ThreadPoolExecutor(max_workers=4) as pool:
        writer = pool.submit(update)
        results = list(pool.map(lambda i: len(matcher.match(messages[i], query_vector=queries[i])), range(60)))
        writer.result()
    assert not errors
    assert results == [10] * 60
    final_vectors = {**vectors, **changed}
    fresh = RuleMatcher(rules[:-100], MatchConfig(threshold=None), embedder=None, vectors=final_vectors)
    for message, query in zip(messages, queries, strict=True):
        assert matcher.match(message, query_vector=query) == fresh.match(message, query_vector=query)


def test_bounds_hold_past_the_dimension_where_float32_integer_sums_round() -> None:
    # +-1/sqrt(d) vectors quantise to +-127 everywhere: at d = 1536 a self dot product is 1536 * 127**2 > 2**24
    rng = np.random.default_rng(17)
    dim = 1536
    rows = rng.choice([-1.0, 1.0], (40, dim)).astype(np.float32) / np.float32(np.sqrt(dim))
    index = VectorIndex(dim)
    for slot in range(40):
        index.set(slot, rows[slot : slot + 1])
    query = rows[:2].copy()
    lower, upper = index.similarity_bounds(query, 40)
    exact = (rows.astype(np.float64) @ query.astype(np.float64).T).max(axis=1)
    assert (lower <= exact).all()
    assert (exact <= upper).all()
    assert exact[0] == pytest.approx(1.0)


@pytest.mark.parametrize(("dim", "count"), [(4, 3), (384, 2048), (384, 100_000), (1024, 300)])
def test_the_packed_model_is_the_one_onnx_writes(dim: int, count: int) -> None:
    # _packed.model_bytes encodes the scan's model without importing onnx: the same bytes as onnx's helpers write
    from onnx import TensorProto, helper

    from norma.matching._packed import model_bytes

    matrix = TensorProto(name="R", data_type=TensorProto.UINT8, dims=[dim, count])
    matrix.data_location = TensorProto.EXTERNAL
    entry = matrix.external_data.add()
    entry.key, entry.value = "location", "norma-packed-rows"
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["Q", "R", "Z", "Z"], ["S"])],
        "norma-int8-scan",
        [helper.make_tensor_value_info("Q", TensorProto.UINT8, ["windows", dim])],
        [helper.make_tensor_value_info("S", TensorProto.INT32, ["windows", count])],
        initializer=[matrix, helper.make_tensor("Z", TensorProto.UINT8, [], [128])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 9
    assert model_bytes(dim, count) == model.SerializeToString()


def _extremes(rng: np.random.Generator, count: int, dim: int) -> np.ndarray:
    """Unit rows of +-1/sqrt(dim) (both signs, every level at +-127), with runs of one sign: ``uint8 x int8`` pair sums
    of 255 x 127 + 255 x 127 leave 16 bits, which a saturating kernel (x86 without VNNI) would clip."""
    rows = rng.choice([-1.0, 1.0], (count, dim))
    rows[: count // 4] = 1.0
    rows[count // 4 : count // 2] = -1.0
    rows[count // 2 :, : dim // 2] = 1.0  # a half of each sign: the pair sums saturate at both ends
    rows[count // 2 :, dim // 2 :] *= -1.0
    return (rows / np.sqrt(dim)).astype(np.float32)


def test_bounds_hold_on_the_packed_path_for_vectors_that_saturate_16_bit_pair_sums() -> None:
    # issue #46: on CPUs without VNNI an unsigned x signed kernel saturated here; the packed product must be exact
    rng = np.random.default_rng(18)
    dim, size = 64, vectors_module._PACKED_MIN_ROWS + 64
    rows = _extremes(rng, size, dim)
    index = VectorIndex(dim)
    index.set_many(list(range(size)), [rows[i : i + 1] for i in range(size)])
    queries = np.concatenate([_extremes(rng, 4, dim), -rows[:2], rows[size // 2 : size // 2 + 2]])
    for query in queries:
        lower, upper = index.similarity_bounds(query[None, :], size)
        exact = rows.astype(np.float64) @ query.astype(np.float64)
        assert (lower <= exact).all()
        assert (exact <= upper).all()
    assert index._packed is not None  # the packed product answered
    assert index._packed.rows == size
    q8, _, _ = quantize_rows(queries)
    r8, _, _ = quantize_rows(rows)
    assert np.array_equal(index._packed.dots(q8), q8.astype(np.int64) @ r8.astype(np.int64).T)
    assert {int(v) for v in np.unique(q8)} == {-127, 127}  # the extremes, both signs


_EMULATED = """
import numpy as np
from norma.matching._packed import PackedRows, _ZERO_POINT, _bytes, _int, _str, _varint, _value_info
rng = np.random.default_rng(19)
rows = rng.choice(np.array([-127, 127], dtype=np.int8), (2048, 64))
rows[:512] = 127
rows[512:1024] = -127
queries = np.concatenate([np.full((1, 64), 127), np.full((1, 64), -127), rows[:1], rows[1500:1502]]).astype(np.int8)
exact = queries.astype(np.int64) @ rows.astype(np.int64).T
got = PackedRows(rows).dots(queries)
print("norma", int((got != exact).sum()))
# control: the unsigned x signed product (rows as int8) that issue #46 found saturating on such CPUs
import onnxruntime as ort
node = _str(1, "Q") + _str(1, "R") + _str(1, "Z") + _str(2, "S") + _str(4, "MatMulInteger")
matrix = _int(1, 64) + _int(1, 2048) + _int(2, 3) + _str(8, "R") + _bytes(9, rows.T.copy().tobytes())
zero = _int(2, 2) + _bytes(5, _varint(_ZERO_POINT)) + _str(8, "Z")
graph = _bytes(1, node) + _str(2, "control") + _bytes(5, matrix) + _bytes(5, zero)
graph += _bytes(11, _value_info("Q", 2, ["w", 64])) + _bytes(12, _value_info("S", 6, ["w", 2048]))
model = _int(1, 9) + _bytes(7, graph) + _bytes(8, _str(1, "") + _int(2, 13))
session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
signed = session.run(None, {"Q": (queries.astype(np.int16) + _ZERO_POINT).astype(np.uint8)})[0]
print("signed", int((signed != exact).sum()))
"""


@pytest.mark.skipif(
    platform.machine() != "x86_64" or sys.platform != "linux", reason="emulates an x86-64 CPU with qemu-user"
)
def test_the_packed_product_is_exact_on_a_cpu_without_vnni() -> None:
    # qemu-x86_64 -cpu Haswell: AVX2, no AVX-512, no VNNI (the CPUs of issue #46), whatever CPU runs the suite;
    # the Makefile installs qemu-user. The control shows the emulation does reach the saturating kernel.
    qemu = shutil.which("qemu-x86_64")
    assert qemu is not None, "qemu-x86_64 is missing: `make install` installs qemu-user (apt)"
    done = subprocess.run(
        [qemu, "-cpu", "Haswell", sys.executable, "-c", _EMULATED],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    counts = dict(line.split() for line in done.stdout.splitlines())
    assert counts["norma"] == "0"
    assert int(counts["signed"]) > 0


def test_the_doctor_and_the_benchmarks_say_which_scan_and_kernel_run() -> None:
    from norma.matching._pipeline import describe_scan

    config = MatchConfig()
    assert describe_scan(100, config) == "exact float32 scan: 100 vectors, below 2,048"
    int8 = describe_scan(5000, config)
    assert int8.startswith("int8 bounds + exact rescoring: 5,000 vectors, from 2,048 on; onnxruntime MatMulInteger")
    assert "uint8 x uint8 (exact on every CPU); CPU: " in int8
    if platform.machine() == "x86_64" and sys.platform == "linux":
        assert "avx2" in int8.split("CPU: ")[1].split()  # every x86-64 CPU norma's wheels meet here has AVX2
    assert describe_scan(config.hnsw_min_rows, config).startswith("HNSW (usearch, int8) + exact rescoring")
