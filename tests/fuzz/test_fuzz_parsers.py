"""Fuzzing every parser that takes user data: only NormaError (or a documented compatibility error) escapes.

``make test`` runs a small deterministic sample; ``make fuzz`` runs 100,000 inputs per test
(``NORMA_FUZZ_EXAMPLES``). A crash found here becomes a plain regression test in the capability's own tests.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from norma._safety import load_json, load_yaml
from norma.errors import NormaError
from norma.names import score_record
from norma.rubrics import evaluate_outcome_against_rubric, load_rubric, validate_rubric_dict
from tests.fuzz._strategies import FUZZ, as_text, json_values

RUBRIC_KEYS = [
    "version", "goal_text", "aggregation", "criteria", "id", "description", "weight", "required", "scale",
    "aggregator", "pass_threshold", "blend", "rubric", "name",
]  # fmt: skip
NAMES_KEYS = [
    "name", "variations", "labels", "variation_count", "phonetic_similarity", "orthographic_similarity",
    "rule_based", "selected_rules", "rule_percentage", "Light", "Medium", "Far",
]  # fmt: skip

# What the rubric API may raise besides NormaError, because synth-ai's does (docs/rubrics.md): pydantic's
# ValidationError for data that does not fit the models.
RUBRIC_COMPAT = (NormaError, pydantic.ValidationError)


@FUZZ
@given(json_values(RUBRIC_KEYS), st.sampled_from(["dict", "json", "yaml"]))
def test_rubric_loading(value: Any, style: str) -> None:
    source = value if style == "dict" else as_text(value, style)
    with contextlib.suppress(*RUBRIC_COMPAT):
        rubric = load_rubric(source)
        evaluate_outcome_against_rubric({"scores": {}}, rubric)


@FUZZ
@given(st.text(max_size=300))
def test_rubric_loading_from_raw_text(text: str) -> None:
    with contextlib.suppress(*RUBRIC_COMPAT):
        load_rubric(text + "\n")


@FUZZ
@given(json_values(RUBRIC_KEYS))
def test_strict_rubric_validation(value: Any) -> None:
    if not isinstance(value, dict):  # synth-ai's documented TypeError for a non-mapping payload
        with pytest.raises(TypeError, match="must be a dictionary"):
            validate_rubric_dict(value)
        return
    with contextlib.suppress(*RUBRIC_COMPAT):
        validate_rubric_dict(value)


@pytest.fixture(scope="module")
def rubric_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "rubric.yaml"


@FUZZ
@given(st.binary(max_size=300))
def test_rubric_file_bytes(rubric_file: Path, data: bytes) -> None:
    rubric_file.write_bytes(data)
    with contextlib.suppress(*RUBRIC_COMPAT):
        load_rubric(str(rubric_file))


@FUZZ
@given(json_values(NAMES_KEYS))
def test_names_records(value: Any) -> None:
    with contextlib.suppress(NormaError):
        score_record(value)


@FUZZ
@given(st.one_of(st.text(max_size=300), st.binary(max_size=300)))
def test_bounded_json_and_yaml(data: str | bytes) -> None:
    for loader in (load_json, load_yaml):
        with contextlib.suppress(NormaError):
            loader(data)
