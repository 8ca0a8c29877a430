"""The editable word lists under ``norma/audit/data/`` (keywords, whitelist, phrase lists), loaded once.

Each file is UTF-8, one entry per line; a line starting with ``#`` is a comment (``C#`` inside an entry
is kept). A ``data_dir`` (config ``data_dir``) may hold
files of the same names that replace the packaged ones, so a team edits its lists without touching norma. The
organisation's own technical keywords (``NormsConfig.technical_keywords``: its documents' acronyms, product names)
are added to ``technical_keywords.txt``, which holds only general words. Every list holds Spanish and English.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from norma.audit._norms import DEFAULT_NORMS
from norma.audit._text import PhraseMatcher, fold
from norma.errors import ConfigError

__all__ = ["DATA_FILES", "Lexicon", "get_lexicon", "read_list"]

DATA_FILES = (
    "conversational_keywords.txt",
    "design_verbs.txt",
    "evaluative_terms.txt",
    "fail_markers.txt",
    "formal_markers.txt",
    "frustration_phrases.txt",
    "history_phrases.txt",
    "modal_phrases.txt",
    "reformulation_markers.txt",
    "requirement_phrases.txt",
    "suggestion_markers.txt",
    "technical_keywords.txt",
    "verdict_markers.txt",
    "whitelist.txt",
)


def read_list(name: str, data_dir: str | Path | None = None) -> list[str]:
    """The entries of one data file (the ``data_dir`` copy when it has one)."""
    if name not in DATA_FILES:
        raise ConfigError(f"unknown audit data file {name!r}", hint=f"one of {', '.join(DATA_FILES)}")
    text: str
    if data_dir is not None and (Path(data_dir) / name).is_file():
        path = Path(data_dir) / name
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"cannot read the audit data file: {exc}", source=str(path)) from None
    else:
        text = resources.files("norma.audit").joinpath("data").joinpath(name).read_text(encoding="utf-8")
    entries = []
    for raw in text.splitlines():
        entry = raw.strip()
        if entry.startswith("#"):
            continue
        if entry:
            entries.append(entry)
    return entries


@dataclass(frozen=True)
class Lexicon:
    """Every list compiled into matchers."""

    technical: PhraseMatcher
    conversational: PhraseMatcher
    evaluative: PhraseMatcher
    formal: PhraseMatcher
    modals: PhraseMatcher
    requirements: PhraseMatcher
    suggestion_markers: PhraseMatcher
    history: PhraseMatcher
    frustration: PhraseMatcher
    fail_markers: PhraseMatcher
    reformulation: PhraseMatcher
    design_verbs: PhraseMatcher
    major_verbs: PhraseMatcher
    verdicts: PhraseMatcher
    """An audit's verdict in the output ("cumple", "viola", "complies", "PASS"): the output is an audit."""
    whitelist: frozenset[str]
    """Folded whitelist terms."""

    def whitelisted(self, term: str) -> bool:
        """Whether a term is standard knowledge (whole term, case- and accent-insensitive; generics stripped)."""
        key = fold(term.split("<", 1)[0].strip().strip("`"))
        if key in self.whitelist:
            return True
        return key.startswith(("system.", "microsoft."))


def _build(data_dir: str | Path | None, keywords: tuple[str, ...]) -> Lexicon:
    def matcher(name: str) -> PhraseMatcher:
        return PhraseMatcher(read_list(name, data_dir))

    verbs = read_list("design_verbs.txt", data_dir)
    return Lexicon(
        technical=PhraseMatcher([*read_list("technical_keywords.txt", data_dir), *keywords]),
        conversational=matcher("conversational_keywords.txt"),
        evaluative=matcher("evaluative_terms.txt"),
        formal=matcher("formal_markers.txt"),
        modals=matcher("modal_phrases.txt"),
        requirements=matcher("requirement_phrases.txt"),
        suggestion_markers=matcher("suggestion_markers.txt"),
        history=matcher("history_phrases.txt"),
        frustration=matcher("frustration_phrases.txt"),
        fail_markers=matcher("fail_markers.txt"),
        reformulation=matcher("reformulation_markers.txt"),
        design_verbs=PhraseMatcher(v.lstrip("!") for v in verbs),
        major_verbs=PhraseMatcher(v[1:] for v in verbs if v.startswith("!")),
        verdicts=matcher("verdict_markers.txt"),
        whitelist=frozenset(fold(term) for term in read_list("whitelist.txt", data_dir)),
    )


_CACHE: dict[tuple[str, tuple[str, ...]], Lexicon] = {}
_LOCK = threading.Lock()


def get_lexicon(data_dir: str | Path | None = None, keywords: tuple[str, ...] | None = None) -> Lexicon:
    """The lists for ``data_dir`` (``None``: the packaged ones) with ``keywords`` added to the technical ones
    (``None``: the default norms', the spec's acronyms plus Engine and NetShaper), built once per process, directory
    and keywords."""
    words = DEFAULT_NORMS.technical_keywords if keywords is None else tuple(keywords)
    key = (str(Path(data_dir).resolve()) if data_dir is not None else "", words)
    lexicon = _CACHE.get(key)
    if lexicon is not None:
        return lexicon
    with _LOCK:
        lexicon = _CACHE.get(key)
        if lexicon is None:
            lexicon = _build(data_dir, words)
            _CACHE[key] = lexicon
        return lexicon
