"""Normative documents: loading, acronyms and versions, numbered sections, and their priority (§6).

A document is a Markdown file. Its acronym and version come from, in order: a front-matter block (``---`` lines
around ``sigla: DNS`` / ``acronym: DNS`` and ``version: 1.0`` / ``versión: 1.0``), lines ``Sigla: DNS`` and
``Versión: 1.0`` in its first 30 lines, or its file name (the norms configuration's ``file_names``: by default the
spec's, §1). Sections are the headings that start with a number (``## §3.01 Título``, ``### 3.01 ...``) or a rule id
(``### R2.01 ...``, ``## POL-12 ...``: the configured ``rule_prefixes``). The set's priority (§6) is the configured
``priority`` (by default DNS > DR > ICR > RED > IRA).

Safety: a request names documents by file name or acronym only (:func:`check_document_name` refuses folders,
``..``, absolute paths and NUL bytes); :func:`load_documents` reads no file that resolves outside its folder
(a symlink out is refused) and checks the count and each file's size before reading (``limits``).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

from norma._safety import load_yaml, resolve_within
from norma.audit._concepts import concept_phrase, extract_concepts, literal_in
from norma.audit._limits import DEFAULT_AUDIT_LIMITS, AuditLimits, limit_error
from norma.audit._norms import DEFAULT_NORMS, SPEC_PRIORITY, NormsConfig
from norma.audit._text import fold, parse_text
from norma.embeddings import Embedder
from norma.errors import InvalidInputError

__all__ = [
    "DOCUMENT_PRIORITY",
    "Document",
    "DocumentSet",
    "Section",
    "check_document_name",
    "load_documents",
    "section_key",
]

DOCUMENT_PRIORITY: dict[str, int] = {acronym: rank for rank, acronym in enumerate(SPEC_PRIORITY, start=1)}
"""§6 for the spec's documents: 1 = highest authority; other acronyms rank after IRA (``NormsConfig.priority``
configures another order)."""

UNKNOWN_PRIORITY = len(SPEC_PRIORITY) + 1

DOCUMENT_SUFFIXES = (".md", ".markdown", ".txt")


@lru_cache(maxsize=64)
def _heading(rule_prefixes: tuple[str, ...]) -> re.Pattern[str]:
    """A section heading: a number or a rule id (one of the prefixes and a number), then the title."""
    prefixes = "|".join(re.escape(p) for p in sorted(rule_prefixes, key=len, reverse=True))
    label = rf"(?:{prefixes})?\d+(?:\.\d+)*" if prefixes else r"\d+(?:\.\d+)*"
    return re.compile(rf"^(#{{1,6}})\s+(?:§\s*)?({label})(?![\w.])[.)]?\s*(.*)$")


_ANY_HEADING = re.compile(r"^(#{1,6})\s+")
_META_LINE = re.compile(r"^\**\s*(sigla|acronym|acr[oó]nimo|versi[oó]n|version)\s*\**\s*:\s*\**\s*(\S+?)\**\s*$", re.I)
_ACRONYM_IN_TITLE = re.compile(r"\(([A-Z]{2,5})\)")


@lru_cache(maxsize=4096)
def section_key(label: str) -> str:
    """Canonical section id: ``"3.01"`` and ``"3.1"`` are the same section (``"3.1"``); ``"R2.01"`` -> ``"R2.1"``."""
    label = label.strip().lstrip("§").strip()
    prefix = "R" if label[:1] in "Rr" else ""
    numbers = label[len(prefix) :].split(".")
    try:
        return prefix + ".".join(str(int(n)) for n in numbers if n != "")
    except ValueError:
        return label


@dataclass(frozen=True)
class Section:
    """One numbered section of a document."""

    document: str
    """The document's acronym."""
    label: str
    """As written in the heading (``"3.01"``, ``"R2.01"``)."""
    key: str
    title: str
    line: int
    level: int
    text: str
    """Heading and body up to the next heading of the same or a higher level (subsections included)."""

    @property
    def ref(self) -> str:
        return f"{self.document} §{self.label}" if not self.label.startswith("R") else f"{self.document} {self.label}"


@dataclass(frozen=True)
class Document:
    """One normative document."""

    name: str
    """File name (what ``active_documents`` lists)."""
    acronym: str
    version: str | None
    title: str
    text: str
    sections: tuple[Section, ...]
    path: Path | None = None

    @property
    def priority(self) -> int:
        """The spec's rank (§6); :meth:`DocumentSet.rank` applies the configured order."""
        return DOCUMENT_PRIORITY.get(self.acronym, UNKNOWN_PRIORITY)

    @cached_property
    def size_bytes(self) -> int:
        """The text's size in UTF-8 bytes (what ``limits.max_document_bytes`` bounds)."""
        return len(self.text.encode("utf-8", "surrogatepass"))

    def section(self, key: str) -> Section | None:
        """The section with this id (``"3.01"``, ``"3.1"``, ``"R2.01"``), or ``None``."""
        return self._index.get(section_key(key))

    @cached_property
    def _index(self) -> dict[str, Section]:
        index: dict[str, Section] = {}
        for section in self.sections:
            index.setdefault(section.key, section)
        return index


def check_document_name(name: str, *, location: str | None = None) -> None:
    """Refuse a document name that is not a plain file name or acronym (what ``active_documents`` may list).

    The documents folder is read flat, so a name with a folder part can never name a loaded document: rather than
    match its last part (``../../x/DNS.md`` is not ``DNS.md``), it is refused.

    Raises:
        InvalidInputError: the name is empty, has a NUL byte, is absolute, has ``..`` or any other folder part.
    """
    hint = "name the document by its file name (Domain_Rules.md) or acronym (DR), without a folder"
    problem: str | None = None
    if not isinstance(name, str) or not name.strip():
        problem = "is empty"
    elif "\x00" in name:
        problem = "contains a NUL byte"
    elif name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        problem = "is an absolute path"
    elif ".." in name.replace("\\", "/").split("/"):
        problem = "points outside the documents folder"
    elif "/" in name or "\\" in name or name == ".":
        problem = "is a path, not a file name (the documents folder is not searched recursively)"
    if problem is not None:
        raise InvalidInputError(f"document name {name!r} {problem}", location=location, hint=hint)


def _metadata(text: str, name: str, file_names: dict[str, str]) -> tuple[str | None, str | None, str]:
    acronym: str | None = None
    version: str | None = None
    body = text
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end > 0:
            meta = load_yaml(text[3:end], source=name)
            if isinstance(meta, dict):
                lowered = {fold(str(k)): v for k, v in meta.items()}
                raw_acronym = lowered.get("sigla", lowered.get("acronym"))
                raw_version = lowered.get("version")
                acronym = str(raw_acronym).strip() if raw_acronym is not None else None
                version = str(raw_version).strip() if raw_version is not None else None
            body = text[end + 4 :].lstrip("\n")
    for line in text.splitlines()[:30]:
        match = _META_LINE.match(line.strip())
        if match:
            key = fold(match.group(1))
            if key in ("sigla", "acronym", "acronimo") and acronym is None:
                acronym = match.group(2)
            elif key == "version" and version is None:
                version = match.group(2)
    title = next((line.lstrip("# ").strip() for line in body.splitlines() if line.startswith("# ")), name)
    if acronym is None:
        found = _ACRONYM_IN_TITLE.search(title)
        acronym = found.group(1) if found else file_names.get(Path(name).stem.lower())
    return acronym, version, title


def parse_document(text: str, name: str, path: Path | None = None, *, norms: NormsConfig = DEFAULT_NORMS) -> Document:
    """A document from its text; ``name`` is its file name; ``norms`` gives the file names that stand for an
    acronym and the rule-id prefixes that head sections."""
    acronym, version, title = _metadata(text, name, norms.file_names)
    if not acronym:
        raise InvalidInputError(
            "the document declares no acronym",
            source=name,
            hint="add a front-matter line 'sigla: DNS' (or 'acronym:'), or map its file name in norms.file_names",
        )
    acronym = acronym.strip().upper()
    lines = text.split("\n")
    headings: list[tuple[int, int, str, str]] = []  # (line index, level, label, title)
    heading_pattern = _heading(norms.rule_prefixes)
    for index, line in enumerate(lines):
        match = heading_pattern.match(line)
        if match:
            headings.append((index, len(match.group(1)), match.group(2), match.group(3).strip()))
    sections: list[Section] = []
    for index, level, label, heading_title in headings:
        end = len(lines)
        for other in range(index + 1, len(lines)):
            heading = _ANY_HEADING.match(lines[other])
            if heading and len(heading.group(1)) <= level:
                end = other
                break
        body = "\n".join(lines[index:end]).strip()
        sections.append(Section(acronym, label, section_key(label), heading_title, index + 1, level, body))
    return Document(name, acronym, version, title, text, tuple(sections), path)


MAX_CACHED_TERMS = 50_000
"""Literal-search results kept per document set (cleared when full)."""


@dataclass
class _Vocabulary:
    terms: tuple[str, ...]
    folded: dict[str, str]
    """Each document's folded text, by acronym."""
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    containing: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Term -> acronyms of the documents that contain it literally (a cache)."""


def _norms_key(norms: NormsConfig) -> tuple[object, ...]:
    return (norms.priority, norms.rule_prefixes, tuple(sorted(norms.file_names.items())))


class DocumentSet:
    """The normative documents in force, by priority (§6: the configured order — by default DNS, DR, ICR, RED,
    IRA — then the others by acronym)."""

    def __init__(self, documents: Iterable[Document], *, norms: NormsConfig = DEFAULT_NORMS) -> None:
        self.norms = norms
        """The norms configuration the documents were parsed with (file names, rule prefixes, priority)."""
        ordered = sorted(documents, key=lambda d: (norms.rank(d.acronym), d.acronym, d.name))
        seen: dict[str, str] = {}
        for document in ordered:
            if document.acronym in seen:
                raise InvalidInputError(
                    f"two documents declare the acronym {document.acronym}: {seen[document.acronym]} and "
                    f"{document.name}",
                    hint="each normative document needs its own acronym",
                )
            seen[document.acronym] = document.name
        self.documents: tuple[Document, ...] = tuple(ordered)
        self._lock = threading.Lock()
        self._vocabulary: _Vocabulary | None = None
        self._subsets: dict[tuple[str, ...], DocumentSet] = {}
        self._configured: dict[tuple[object, ...], DocumentSet] = {}

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    @property
    def acronyms(self) -> tuple[str, ...]:
        return tuple(d.acronym for d in self.documents)

    def rank(self, acronym: str) -> int:
        """§6: the configured rank of a document (1 = highest authority)."""
        return self.norms.rank(acronym)

    def configured(self, norms: NormsConfig) -> DocumentSet:
        """This set for another norms configuration: the same files parsed with its file names and rule prefixes
        and ordered by its priority (built once per configuration; the same set when nothing differs)."""
        key = _norms_key(norms)
        if key == _norms_key(self.norms):
            return self
        cached = self._configured.get(key)
        if cached is not None:
            return cached
        documents = [parse_document(d.text, d.name, d.path, norms=norms) for d in self.documents]
        configured = DocumentSet(documents, norms=norms)
        with self._lock:
            return self._configured.setdefault(key, configured)

    def by_acronym(self, acronym: str) -> Document | None:
        return next((d for d in self.documents if d.acronym == acronym), None)

    def by_name(self, name: str, *, location: str | None = None) -> Document | None:
        """The document with exactly this file name; a name with a folder part is refused, not matched by its end.

        Raises:
            InvalidInputError: ``name`` is not a plain file name (see :func:`check_document_name`).
        """
        check_document_name(name, location=location)
        return next((d for d in self.documents if d.name == name), None)

    def select(self, names: Sequence[str]) -> DocumentSet:
        """The documents named in ``active_documents`` (all of them when empty); a missing one is an input error.

        Raises:
            InvalidInputError: a name is a path (location ``active_documents[i]``) or names no loaded document.
        """
        if not names:
            return self
        key = tuple(names)
        cached = self._subsets.get(key)
        if cached is not None:
            return cached
        chosen = []
        for index, name in enumerate(names):
            document = self.by_name(name, location=f"active_documents[{index}]") or self.by_acronym(name)
            if document is None:
                raise InvalidInputError(
                    f"active document {name!r} is not among the loaded documents "
                    f"({', '.join(d.name for d in self.documents) or 'none'})",
                    location="active_documents",
                    hint="add the file to the documents folder (--docs) or remove it from active_documents",
                )
            if document not in chosen:
                chosen.append(document)
        subset = DocumentSet(chosen, norms=self.norms)
        with self._lock:
            return self._subsets.setdefault(key, subset)

    def resolve(self, acronym: str | None, label: str) -> list[Section]:
        """Sections a reference points to: in one document, or (bare ``R2.01``) in every document, by priority."""
        documents = [d for d in self.documents if acronym is None or d.acronym == acronym]
        return [s for d in documents if (s := d.section(label)) is not None]

    def _vocab(self) -> _Vocabulary:
        vocabulary = self._vocabulary
        if vocabulary is not None:
            return vocabulary
        with self._lock:
            if self._vocabulary is None:
                terms: dict[str, None] = {}
                for document in self.documents:
                    for concept in extract_concepts(
                        parse_text(document.text), exclude=self.norms.not_concepts | set(self.acronyms)
                    ):
                        terms.setdefault(concept.term)
                    for section in document.sections:
                        if section.title:
                            terms.setdefault(section.title)
                folded = {d.acronym: fold(d.text) for d in self.documents}
                self._vocabulary = _Vocabulary(tuple(terms), folded)
            return self._vocabulary

    @property
    def vocabulary(self) -> tuple[str, ...]:
        """The documents' concepts and section titles (what IR.4.01 compares terms with)."""
        return self._vocab().terms

    def containing(self, term: str) -> tuple[str, ...]:
        """Acronyms of the documents where a concept appears literally (identifier, or its words as a phrase)."""
        vocabulary = self._vocab()
        found = vocabulary.containing.get(term)
        if found is None:
            found = tuple(acronym for acronym, text in vocabulary.folded.items() if literal_in(term, text))
            if len(vocabulary.containing) >= MAX_CACHED_TERMS:
                vocabulary.containing.clear()
            vocabulary.containing[term] = found
        return found

    def contains(self, term: str) -> bool:
        """Whether a concept appears literally in any document."""
        return bool(self.containing(term))

    def vocabulary_vectors(self, embedder: Embedder) -> np.ndarray:
        """The vocabulary embedded (rows in ``vocabulary`` order), once per embedder model."""
        vocabulary = self._vocab()
        vectors = vocabulary.vectors.get(embedder.model_id)
        if vectors is not None:
            return vectors
        with self._lock:
            vectors = vocabulary.vectors.get(embedder.model_id)
            if vectors is None:
                texts = [concept_phrase(t) if " " not in t else t for t in vocabulary.terms]
                vectors = embedder.embed(texts) if texts else np.zeros((0, embedder.dim), dtype=np.float32)
                vocabulary.vectors[embedder.model_id] = vectors
            return vectors


def load_documents(
    directory: str | Path, *, limits: AuditLimits = DEFAULT_AUDIT_LIMITS, norms: NormsConfig = DEFAULT_NORMS
) -> DocumentSet:
    """Every ``.md`` / ``.markdown`` / ``.txt`` file of a folder (not recursive) as a :class:`DocumentSet`, parsed
    and ordered for ``norms`` (default: the spec's documents; :meth:`DocumentSet.configured` re-reads them for
    another configuration).

    Raises:
        InvalidInputError: no such folder, no documents, a file that resolves outside the folder (a symlink out),
            a file that cannot be read or is not UTF-8, or a document without an acronym.
        LimitExceededError: more files than ``limits.max_documents``, or one larger than
            ``limits.max_document_bytes`` (both checked before reading).
    """
    folder = Path(directory)
    if not folder.is_dir():
        raise InvalidInputError(
            "the documents folder does not exist or is not a folder", source=str(folder), hint="pass --docs DIR"
        )
    candidates = [
        path
        for path in sorted(folder.iterdir())
        if path.suffix.lower() in DOCUMENT_SUFFIXES and not path.name.startswith(".")
    ]
    if len(candidates) > limits.max_documents:
        raise limit_error(
            "documents folder", len(candidates), "files", "max_documents", limits.max_documents, source=str(folder)
        )
    documents = []
    for path in candidates:
        try:
            real = resolve_within(folder, path.name, what="document")
        except InvalidInputError as exc:  # a symlink that leads out of the folder
            exc.source = str(path)
            exc.hint = "documents must be files inside the documents folder; copy the file in instead of linking it"
            raise
        if not real.is_file():
            continue
        documents.append(parse_document(_read_document(real, path, limits), path.name, path, norms=norms))
    if not documents:
        raise InvalidInputError("no normative documents (.md) in the folder", source=str(folder))
    return DocumentSet(documents, norms=norms)


def _read_document(real: Path, path: Path, limits: AuditLimits) -> str:
    """The text of one document file, its size checked before reading (and again while reading)."""
    limit = limits.max_document_bytes
    try:
        size = real.stat().st_size
        if size > limit:
            raise limit_error("document", size, "bytes", "max_document_bytes", limit, source=str(path))
        with real.open("rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise InvalidInputError(f"cannot read the document: {exc.strerror or exc}", source=str(path)) from None
    if len(data) > limit:  # grew since stat, or a special file that reports no size
        raise limit_error("document", None, "bytes", "max_document_bytes", limit, source=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(f"not valid UTF-8 at byte {exc.start}", source=str(path)) from None
