"""Hostile audit input: document names that try to leave the documents folder, symlinks out of it, oversized texts,
documents and batch records. Each is refused with a typed error naming the field, before any work starts."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from norma.audit import (
    AuditConfig,
    AuditLimits,
    DocumentSet,
    analyze,
    analyze_batch,
    load_config,
    load_documents,
    read_request,
    read_requests,
)
from norma.errors import ConfigError, InvalidInputError, LimitExceededError
from tests.audit.conftest import AUDIT
from tests.conftest import CliResult

Run = Callable[..., CliResult]
DOCS = AUDIT / "docs"
OFF = AuditConfig(embeddings=False)
REQUEST = {
    "input": "Implementa la clase FlowShaper",
    "output": "Creo la clase `FlowShaper`.",
    "context_type": "technical",
}

ESCAPES = [
    "../../x/Domain_Rules.md",  # used to match Domain_Rules.md by its last part
    "../Domain_Rules.md",
    "..",
    "/etc/passwd",
    str(DOCS.resolve() / "Domain_Rules.md"),  # absolute, even when it points inside the folder
    "sub/Domain_Rules.md",
    "./Domain_Rules.md",
    "..\\Domain_Rules.md",
    "C:\\docs\\Domain_Rules.md",
    "C:Domain_Rules.md",
    "\\\\server\\share\\Domain_Rules.md",
    "Domain_Rules.md\x00.txt",
    "",
    "   ",
]


def _doc(folder: Path, name: str, acronym: str, body: str = "## §1 Uno\nTexto.\n") -> Path:
    path = folder / name
    path.write_text(f"---\nsigla: {acronym}\nversion: '1'\n---\n# {acronym}\n\n{body}", encoding="utf-8")
    return path


# --- path safety -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ESCAPES)
def test_active_document_that_is_a_path_is_rejected(docs: DocumentSet, name: str) -> None:
    request = {**REQUEST, "active_documents": ["Domain_Rules.md", name]}
    with pytest.raises(InvalidInputError) as info:
        analyze(request, docs, OFF)
    assert info.value.location == "active_documents[1]"
    assert not isinstance(info.value, LimitExceededError)


def test_active_document_paths_are_rejected_before_documents_are_loaded(tmp_path: Path) -> None:
    request = {**REQUEST, "active_documents": ["../secret.md"]}
    with pytest.raises(InvalidInputError) as without_documents:
        analyze(request, None, OFF)
    assert without_documents.value.location == "active_documents[0]"
    with pytest.raises(InvalidInputError) as missing_folder:  # the name is judged before the folder is read
        analyze(request, tmp_path / "does-not-exist", OFF)
    assert missing_folder.value.location == "active_documents[0]"


def test_plain_file_names_and_acronyms_still_select(docs: DocumentSet) -> None:
    chosen = docs.select(["Domain_Rules.md", "DNS"])
    assert chosen.acronyms == ("DNS", "DR")
    assert docs.by_name("Domain_Rules.md") is not None
    assert docs.by_name("Nope.md") is None


def test_by_name_refuses_a_path_instead_of_matching_its_last_part(docs: DocumentSet) -> None:
    with pytest.raises(InvalidInputError, match="points outside"):
        docs.by_name("../../x/Domain_Rules.md")
    with pytest.raises(InvalidInputError, match="is a path"):
        docs.by_name("x/Domain_Rules.md")


def test_document_versions_key_that_is_a_path_is_rejected(docs: DocumentSet) -> None:
    request = {**REQUEST, "document_versions": {"../Domain_Rules.md": "1.0"}}
    with pytest.raises(InvalidInputError) as info:
        analyze(request, docs, OFF)
    assert info.value.location == "document_versions.../Domain_Rules.md"


def test_symlink_out_of_the_documents_folder_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    _doc(folder, "Inside.md", "INS")
    secret = _doc(tmp_path, "Secret.md", "SEC")
    (folder / "Leak.md").symlink_to(secret)
    with pytest.raises(InvalidInputError) as info:
        load_documents(folder)
    assert info.value.source == str(folder / "Leak.md")
    assert "outside" in info.value.message
    with pytest.raises(InvalidInputError):  # the same through analyze(documents=folder)
        analyze(REQUEST, folder, OFF)


def test_symlink_inside_the_documents_folder_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    (folder / "drafts").mkdir(parents=True)
    _doc(folder, "Inside.md", "INS")
    (folder / "Draft.md").symlink_to(_doc(folder / "drafts", "Draft.txt.orig", "DRF"))
    assert load_documents(folder).acronyms == ("DRF", "INS")


def test_symlinked_parent_folder_does_not_count_as_outside(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    _doc(real, "Inside.md", "INS")
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    assert load_documents(tmp_path / "alias").acronyms == ("INS",)


def test_cli_rejects_a_traversal_name_with_exit_2(run_cli: Run, tmp_path: Path) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps({**REQUEST, "active_documents": ["../../etc/passwd"]}), encoding="utf-8")
    result = run_cli("audit", str(path), "--docs", str(DOCS), "--no-embeddings")
    assert result.code == 2
    assert "active_documents[0]" in result.err
    assert "points outside" in result.err


def test_batch_reports_a_traversal_name_and_audits_the_rest(docs: DocumentSet) -> None:
    records = [("a:1", {**REQUEST, "active_documents": ["/etc/passwd"]}), ("a:2", REQUEST)]
    items = analyze_batch(records, docs, OFF)
    assert items[0].report is None
    assert items[0].error is not None
    assert "active_documents[0]" in items[0].error
    assert items[1].report is not None


# --- size limits -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "key"), [("input", "max_input_chars"), ("output", "max_output_chars")])
def test_default_text_limit_is_enforced_before_any_work(tmp_path: Path, field: str, key: str) -> None:
    request = {**REQUEST, field: "a" * 1_000_001}
    with pytest.raises(LimitExceededError) as info:  # a missing documents folder would be the next error
        analyze(request, tmp_path / "does-not-exist", OFF)
    assert info.value.location == field
    assert f"limits.{key}" in info.value.message
    assert "1,000,000" in info.value.message


def test_configured_text_limits_lower_and_raise_the_default() -> None:
    small = AuditConfig(embeddings=False, limits=AuditLimits(max_output_chars=100))
    analyze({**REQUEST, "output": "a" * 100}, None, small)
    with pytest.raises(LimitExceededError, match=r"101 characters, over the limit of 100 \(limits.max_output_chars"):
        analyze({**REQUEST, "output": "a" * 101}, None, small)
    large = AuditConfig(embeddings=False, limits=AuditLimits(max_input_chars=1_000_001))
    report = analyze({**REQUEST, "input": "a" * 1_000_001}, None, large)  # no hard cap in the request model
    assert report.model_dump(mode="json")["result"] in ("PASS", "FAIL")


def test_rerun_count_and_size_limits() -> None:
    config = AuditConfig(embeddings=False, limits=AuditLimits(max_reruns=2, max_output_chars=50))
    with pytest.raises(LimitExceededError) as count:
        analyze({**REQUEST, "reruns": ["a", "b", "c"]}, None, config)
    assert count.value.location == "reruns"
    assert "limits.max_reruns" in count.value.message
    with pytest.raises(LimitExceededError) as size:
        analyze({**REQUEST, "reruns": ["a", "b" * 51]}, None, config)
    assert size.value.location == "reruns[1]"
    with pytest.raises(LimitExceededError, match=r"limits\.max_reruns"):  # default: 10
        analyze({**REQUEST, "reruns": ["x"] * 11}, None, OFF)


def test_active_documents_count_limit(docs: DocumentSet) -> None:
    config = AuditConfig(embeddings=False, limits=AuditLimits(max_documents=2))
    with pytest.raises(LimitExceededError) as info:
        analyze({**REQUEST, "active_documents": ["DNS", "DR", "ICR"]}, docs, config)
    assert info.value.location == "active_documents"
    assert "limits.max_documents" in info.value.message


def test_default_document_size_limit_is_checked_before_reading(tmp_path: Path) -> None:
    _doc(tmp_path, "Big.md", "BIG", "## §1 Uno\n" + "x" * (2 * 1024 * 1024))
    with pytest.raises(LimitExceededError) as info:
        load_documents(tmp_path)
    assert info.value.source == str(tmp_path / "Big.md")
    assert "over the limit of 2,097,152 (limits.max_document_bytes)" in info.value.message


def test_configured_document_size_limit_applies_to_folders_and_loaded_sets(tmp_path: Path) -> None:
    path = _doc(tmp_path, "Small.md", "SML", "## §1 Uno\n" + "x" * 300)
    size = path.stat().st_size
    assert load_documents(tmp_path, limits=AuditLimits(max_document_bytes=size)).acronyms == ("SML",)
    config = AuditConfig(embeddings=False, limits=AuditLimits(max_document_bytes=size - 1))
    with pytest.raises(LimitExceededError, match=r"limits\.max_document_bytes"):
        load_documents(tmp_path, limits=config.limits)
    with pytest.raises(LimitExceededError, match=r"limits\.max_document_bytes"):
        analyze(REQUEST, tmp_path, config)
    loaded = load_documents(tmp_path)  # loaded with the defaults, audited under a smaller limit
    with pytest.raises(LimitExceededError) as info:
        analyze(REQUEST, loaded, config)
    assert info.value.source == str(path)


def test_document_count_limit(tmp_path: Path) -> None:
    for index in range(3):
        _doc(tmp_path, f"D{index}.md", f"DOC{index}")
    assert len(load_documents(tmp_path, limits=AuditLimits(max_documents=3))) == 3
    with pytest.raises(LimitExceededError, match=r"3 files, over the limit of 2 \(limits.max_documents\)"):
        load_documents(tmp_path, limits=AuditLimits(max_documents=2))


def test_limits_come_from_the_config_file(tmp_path: Path) -> None:
    path = tmp_path / "audit.json"
    path.write_text(json.dumps({"limits": {"max_output_chars": 10, "max_document_bytes": 4096}}), encoding="utf-8")
    config = load_config(path)
    assert config.limits == AuditLimits(max_output_chars=10, max_document_bytes=4096)
    with pytest.raises(LimitExceededError):
        analyze({**REQUEST, "output": "a" * 11}, None, config)
    for bad in ({"max_output_chars": 0}, {"max_output_chars": "big"}, {"max_outputs": 5}):
        path.write_text(json.dumps({"limits": bad}), encoding="utf-8")
        with pytest.raises(ConfigError, match="limits"):
            load_config(path)


def test_cli_config_limits_apply(run_cli: Run, tmp_path: Path) -> None:
    request = tmp_path / "request.json"
    request.write_text(json.dumps(REQUEST), encoding="utf-8")
    config = tmp_path / "audit.json"
    config.write_text(json.dumps({"limits": {"max_output_chars": 5}}), encoding="utf-8")
    result = run_cli("audit", str(request), "--config", str(config), "--no-embeddings")
    assert result.code == 2
    assert "output" in result.err
    assert "limits.max_output_chars" in result.err
    config.write_text(json.dumps({"limits": {"max_record_bytes": 20}}), encoding="utf-8")
    too_big = run_cli("audit", str(request), "--config", str(config), "--no-embeddings")
    assert too_big.code == 2
    assert "limits.max_record_bytes" in too_big.err


def test_read_request_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "request.json"
    path.write_text(json.dumps(REQUEST), encoding="utf-8")
    assert read_request(path) == REQUEST
    limits = AuditLimits(max_record_bytes=path.stat().st_size - 1)
    with pytest.raises(LimitExceededError, match=r"limits\.max_record_bytes"):
        read_request(path, limits=limits)
    with pytest.raises(LimitExceededError):
        read_request(io.BytesIO(path.read_bytes()), limits=limits)
    with pytest.raises(LimitExceededError, match="nests"):
        read_request(io.BytesIO(b"[" * 100_000))


def _batch_lines(path: Path, *lines: str | bytes) -> None:
    path.write_bytes(b"\n".join(line if isinstance(line, bytes) else line.encode() for line in lines) + b"\n")


def test_batch_refuses_long_and_hostile_lines_and_reads_on(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    good = json.dumps(REQUEST)
    _batch_lines(path, good, "[" * 100_000, '{"input": "' + "x" * 500 + '"}', b'{"input": "\xff"}', good)
    records = list(read_requests(path, limits=AuditLimits(max_record_bytes=len(good) + 1)))
    assert [where for where, _ in records] == [f"{path}:{n}" for n in range(1, 6)]
    values: list[Any] = [value for _, value in records]
    assert values[0] == REQUEST
    assert values[4] == REQUEST
    assert isinstance(values[1], LimitExceededError)  # over the line limit, never held whole
    assert isinstance(values[2], LimitExceededError)
    assert isinstance(values[3], InvalidInputError)
    assert "UTF-8" in str(values[3])
    deep = list(read_requests(io.StringIO("[" * 100_000 + "\n" + good + "\n")))  # text stream, default limit
    assert isinstance(deep[0][1], LimitExceededError)
    assert "nests" in str(deep[0][1])
    assert deep[1][1] == REQUEST


def test_batch_line_exactly_at_the_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "batch.jsonl"
    good = json.dumps(REQUEST)
    _batch_lines(path, good)
    assert [value for _, value in read_requests(path, limits=AuditLimits(max_record_bytes=len(good)))] == [REQUEST]


def test_batch_workers_load_documents_under_the_configured_limits(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    _doc(folder, "Small.md", "SML", "## §1 Uno\n" + "x" * 300)
    config = AuditConfig(embeddings=False, limits=AuditLimits(max_document_bytes=64))
    for workers in (1, 2):  # with workers, refused in the parent (not a broken process pool)
        with pytest.raises(LimitExceededError, match=r"limits\.max_document_bytes"):
            analyze_batch([("a:1", REQUEST), ("a:2", REQUEST)], folder, config, workers=workers)
