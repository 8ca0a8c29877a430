"""The shared guards for untrusted input: bounded YAML/JSON, paths inside a base, linear-time regexes."""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from norma._safety import InputLimits, compile_pattern, load_json, load_yaml, resolve_within
from norma.errors import InvalidInputError, LimitExceededError, NormaError

LAUGHS = "\n".join(
    [f"l0: &l0 [{', '.join(['lol'] * 9)}]"] + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 9)]
)


def test_yaml_billion_laughs_is_rejected_quickly() -> None:
    started = time.perf_counter()
    with pytest.raises(LimitExceededError, match="expands to more than"):
        load_yaml(LAUGHS, source="bomb.yaml")
    assert time.perf_counter() - started < 1.0


def test_yaml_alias_count_is_bounded() -> None:
    text = "a: &a 1\nb: [" + ", ".join(["*a"] * 20) + "]"
    with pytest.raises(LimitExceededError, match="more than 10 YAML aliases"):
        load_yaml(text, limits=InputLimits(max_aliases=10))
    assert load_yaml(text, limits=InputLimits(max_aliases=20))["b"] == [1] * 20


def test_yaml_recursive_alias_is_rejected() -> None:
    with pytest.raises(InvalidInputError, match="refers to itself"):
        load_yaml("&a [*a]")


def test_yaml_depth_is_bounded_before_construction() -> None:
    with pytest.raises(LimitExceededError, match="deeper than 64"):
        load_yaml("[" * 65 + "]" * 65)
    assert load_yaml("[" * 10 + "]" * 10) == [[[[[[[[[[]]]]]]]]]]


def test_yaml_size_limit_counts_bytes() -> None:
    with pytest.raises(LimitExceededError, match="over the limit of 10"):
        load_yaml("é" * 6, limits=InputLimits(max_bytes=10))


def test_yaml_refuses_python_objects() -> None:
    with pytest.raises(InvalidInputError, match="not valid YAML"):
        load_yaml("!!python/object/apply:os.system ['echo hi']")


def test_yaml_error_names_line_and_column() -> None:
    with pytest.raises(InvalidInputError) as info:
        load_yaml("a: 1\nb: [1, 2\n", source="r.yaml")
    assert (info.value.source, info.value.line, info.value.column, info.value.location) == ("r.yaml", 2, 4, None)
    assert str(info.value).startswith("r.yaml:2:4: not valid YAML: ")


def test_yaml_shared_aliases_within_limits_load() -> None:
    assert load_yaml("base: &b {k: 1}\nx: *b\ny: *b") == {"base": {"k": 1}, "x": {"k": 1}, "y": {"k": 1}}


def test_json_deep_nesting_is_a_limit_error() -> None:
    with pytest.raises(LimitExceededError):
        load_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(LimitExceededError, match="deeper than 3"):
        load_json("[[[[1]]]]", limits=InputLimits(max_depth=3))


def test_json_nan_and_bad_text() -> None:
    with pytest.raises(InvalidInputError, match="NaN is not a JSON number"):
        load_json('{"w": NaN}')
    with pytest.raises(InvalidInputError, match="line 1, column"):
        load_json("{")
    with pytest.raises(InvalidInputError, match="UTF-8"):
        load_json(b'{"a": "\xff"}')


@pytest.mark.parametrize(
    ("text", "name", "field"),
    [
        ('{"w": NaN}', "NaN", "w"),
        ('{"a": [1, {"b": Infinity}]}', "Infinity", "a[1].b"),
        ('{"a": -Infinity}', "-Infinity", "a"),
        ('{"rubric": {"criteria": [{"weight": 1e999}]}}', "Infinity", "rubric.criteria[0].weight"),
        ("[-1e400]", "-Infinity", "[0]"),
    ],
)
def test_json_numbers_that_are_not_finite_are_refused_naming_the_field(text: str, name: str, field: str) -> None:
    with pytest.raises(InvalidInputError, match=f"{name} is not a JSON number") as info:
        load_json(text, source="r.json")
    assert (info.value.source, info.value.location) == ("r.json", field)
    assert load_json('{"a": [1e308, -1e-320, 0.0]}') == {"a": [1e308, -1e-320, 0.0]}


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('{"id": "\\ud800"}', "id"),
        ('{"rules": [{"id": "ok"}, {"id": "x\\udfffy"}]}', "rules[1].id"),
        ('{"\\udc00": 1}', "\\udc00"),
        (b'{"a": "\xed\xa0\x80"}', "a"),
    ],
)
def test_text_that_is_not_unicode_is_refused_naming_the_field(text: str | bytes, field: str) -> None:
    with pytest.raises(InvalidInputError, match="not valid Unicode") as info:
        load_json(text)
    assert info.value.location == field
    if isinstance(text, str):  # the same escapes in YAML double-quoted strings
        with pytest.raises(InvalidInputError, match="not valid Unicode") as yaml_info:
            load_yaml(text)
        assert yaml_info.value.location == field
    assert load_json('{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}  # a surrogate pair is one character


def test_numbers_too_long_to_read_are_limit_errors() -> None:
    for loader in (load_json, load_yaml):
        with pytest.raises(LimitExceededError, match="more than 4,300 digits"):
            loader("[" + "9" * 5000 + "]")
        assert loader("[" + "9" * 4000 + "]") == [int("9" * 4000)]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=200), st.binary(max_size=200)))
def test_parsers_raise_only_norma_errors(data: str | bytes) -> None:
    for loader in (load_json, load_yaml):
        with contextlib.suppress(NormaError):
            loader(data)


def test_resolve_within_accepts_plain_names(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "doc.md").write_text("x")
    assert resolve_within(tmp_path, "sub/doc.md") == (tmp_path / "sub" / "doc.md").resolve()
    assert resolve_within(tmp_path, "missing.md") == (tmp_path / "missing.md").resolve()


@pytest.mark.parametrize(
    "name",
    ["../secret", "sub/../../secret", "/etc/passwd", "\\etc\\passwd", "C:\\x", "a\x00b", "", "  ", "..\\x"],
)
def test_resolve_within_rejects_escapes(tmp_path: Path, name: str) -> None:
    with pytest.raises(InvalidInputError):
        resolve_within(tmp_path, name, what="document")


def test_resolve_within_rejects_symlink_out(tmp_path: Path) -> None:
    base = tmp_path / "base"
    base.mkdir()
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    os.symlink(outside, base / "link.md")
    with pytest.raises(InvalidInputError, match="resolves outside"):
        resolve_within(base, "link.md")


def test_compile_pattern_is_linear_time() -> None:
    pattern = compile_pattern(r"(a+)+$")
    started = time.perf_counter()
    assert pattern.search("a" * 50_000 + "b") is None
    assert time.perf_counter() - started < 0.5


def test_compile_pattern_refuses_backtracking_features() -> None:
    with pytest.raises(InvalidInputError, match="not accepted"):
        compile_pattern(r"(a)\1", where="config.reference_pattern")
    with pytest.raises(InvalidInputError, match="look-arounds"):
        compile_pattern(r"(?=x)")


def test_compile_pattern_matches_like_re() -> None:
    pattern = compile_pattern(r"IR\.(\d+)\.(\d+)")
    assert [m.groups() for m in pattern.finditer("IR.4.02 and IR.10.1")] == [("4", "02"), ("10", "1")]
    assert compile_pattern("ir", ignore_case=True).search("see IR") is not None
    assert compile_pattern("ir").search("see IR") is None


def test_rubric_loader_uses_the_bounded_yaml_parser() -> None:
    from norma.rubrics import load_rubric

    with pytest.raises(LimitExceededError, match="expands to more than"):
        load_rubric(LAUGHS)


def test_ensure_public_host() -> None:
    from norma._safety import ensure_public_host

    ensure_public_host("8.8.8.8")
    ensure_public_host("[2001:4860:4860::8888]")
    for host in ("127.0.0.1", "localhost", "10.0.0.1", "[fe80::1]", "224.0.0.1", "172.16.5.4"):
        with pytest.raises(InvalidInputError, match="non-public"):
            ensure_public_host(host)
    with pytest.raises(InvalidInputError, match="cannot resolve"):
        ensure_public_host("no-such-host.invalid")


def test_bounded_lines_reads_whole_lines_within_the_limit() -> None:
    import io

    from norma._safety import bounded_lines

    data = io.BytesIO(b"first\r\n\n   \nsecond\nthird")
    assert list(bounded_lines(data, source="f", max_bytes=10)) == [(1, "first"), (4, "second"), (5, "third")]
    too_long = io.BytesIO(b"ok\n" + b"x" * 11 + b"\n")
    lines = bounded_lines(too_long, source="f.jsonl", max_bytes=10, what="record", hint="split it")
    assert next(lines) == (1, "ok")
    with pytest.raises(LimitExceededError, match="record is over the limit of 10 bytes") as caught:
        next(lines)
    assert (caught.value.line, caught.value.location, caught.value.hint) == (2, None, "split it")
    with pytest.raises(InvalidInputError, match="not valid UTF-8 at byte 1"):
        list(bounded_lines(io.BytesIO(b"a\xff\n"), source="f", max_bytes=10))
