"""What an output cites and decides: normative references, technical decisions and claims about the norms.

* References (IR.0.01, §7.01): a document acronym and a section, or a bare rule id — for the spec's documents its
  pattern ``(DNS|DR|ICR|RED|IRA)\\s+§?\\d+(\\.\\d+)?`` or ``R\\d+\\.\\d+`` (deeper numbers like ``§3.01.2`` are read
  to their end; ``DR R2.01`` is one reference); the acronyms and rule-id prefixes come from the norms
  configuration and the acronyms the loaded documents declare (:class:`CitationSyntax`); any other acronym
  followed by ``§`` and a number (``PLT §2.1``) is a reference too, to a norm nobody declared, which IR.0.03
  reports with what would make it known. Plus the configured ``reference_patterns``: RE2 expressions (linear
  time) with a named group ``sec`` (the section) and optionally ``doc`` (the document's acronym, upper-cased).
  Text matched by two patterns counts once (the match that starts first wins; the built-in pattern wins a tie).
* Technical decisions (IR.5.02, §7.01): in prose, each sentence (or bullet) outside code that contains a design
  verb (``design_verbs.txt``, Spanish and English). In code: each declared type
  (``class|interface|record|struct|enum Name``); each method, constructor, property, field or function declared
  at a block's top level (a snippet of members, not the members of a declared type); and a block that declares
  nothing but holds more than obvious syntax is one decision itself (a code block is at least one decision).
  A declaration whose name an earlier prose decision named is not counted again (announcing a type and then
  declaring it is one decision). *Major* decisions (IR.0.01): every code decision, and the sentences whose
  design verb is a major one (``!``-marked in the list: implement, create, define, introduce, design, split,
  extract, replace, inherit). ``using`` and ``namespace`` lines are never decisions (IR.0.01's exception for
  obvious C# syntax).
* Claims (IR.4.02): "según DNS §2.03, ...", "DNS §2.03 dice que ...", "according to RED, ...", "the DNS says
  that ...", "as RED §1.01 states: ...", with the
  quoted text in quotes when there are quotes, else the rest of the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from norma._safety import Pattern, compile_pattern
from norma.audit._lexicon import Lexicon
from norma.audit._norms import SPEC_PRIORITY, NormsConfig
from norma.audit._text import Line, ParsedText, PhraseMatcher, fold, sentences, shorten
from norma.errors import InvalidInputError

__all__ = [
    "CitationSyntax",
    "Claim",
    "Decision",
    "REFERENCE_GROUPS",
    "Reference",
    "citation_syntax",
    "compile_reference_pattern",
    "declared_names",
    "find_claims",
    "find_decisions",
    "find_references",
    "syntax_for",
]

REFERENCE_GROUPS = ("doc", "sec")
"""The named groups a configured reference pattern may have: ``sec`` (required) and ``doc``."""

_TYPE_DECL = re.compile(r"\b(class|interface|record|struct|enum)\s+([A-Z]\w*)")
_MODIFIERS = (
    r"(?:(?:public|private|protected|internal|static|virtual|override|abstract|sealed|async|extern|unsafe|new|"
    r"partial|readonly|const|volatile|required|final|export|default)\s+)"
)
_MEMBER_DECL = re.compile(
    rf"^\s*(?:\[[^\]]*\]\s*)*(?:{_MODIFIERS}*[\w<>\[\],.?]+\s+(?P<method>[A-Za-z_]\w*)\s*(?:<[^<>()]*>)?\s*\("
    rf"|{_MODIFIERS}+[\w<>\[\],.?]+\s+(?P<member>[A-Za-z_]\w*)\s*(?:\{{|=>|=|;)"
    r"|(?:async\s+)?(?:def|function|fn|func)\s+(?P<function>[A-Za-z_]\w*))"
)
"""A method, constructor, property, field or function declared on a line of code (not a call: a call has no
type before its name)."""
_NOT_MEMBER_WORDS = frozenset(
    {"return", "new", "await", "throw", "if", "else", "while", "for", "foreach", "switch", "using", "lock", "catch",
     "case", "yield", "var", "let", "const", "goto", "is", "as", "in", "out", "ref", "typeof", "nameof", "sizeof",
     "when", "and", "or", "not", "with", "from", "select", "where", "print", "echo", "assert", "del", "import"}
)  # fmt: skip
"""Words before a name and a parenthesis that make it a statement, not a declaration."""
_CODE_TRIVIAL = re.compile(r"^\s*(?:[{}()\[\];,]*\s*|//.*|/\*.*|\*.*|#.*|--.*)$")
"""A code line that decides nothing: braces, punctuation, a comment."""
_CLAIM_WORDS = PhraseMatcher(
    ["según", "segun", "acuerdo", "conforme", "establece", "indica", "dice", "exige", "prescribe", "señala",
     "dispone", "determina", "tal", "according", "stated", "required", "defined", "specified", "per", "says",
     "states", "requires", "reads", "mandates", "specifies", "stipulates", "prescribes", "establishes"]
)  # fmt: skip
"""Every claim pattern contains one of these words (a cheap test before the regexes)."""
_IDENTIFIER = re.compile(r"[A-Z]\w+")
_CITABLE = re.compile(r"[A-Z][A-Z0-9]{0,15}")
"""An acronym that can be cited as ``PLT §2.1`` (what ``norms.priority`` accepts)."""
_ANNOUNCED = re.compile(r"`([A-Za-z_]\w*)(?:\(\))?`")
"""A name in backticks, whatever its case (`get_fare`, `get_fare()`): prose that names it announces its code."""
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+")
_CODE_OBVIOUS = re.compile(r"^\s*(using\s|namespace\s|```|~~~)")
_FENCE_LINE = re.compile(r"^\s*(```|~~~)")
_QUOTED = re.compile(r"[\"“«'‘](?P<q>[^\"”»'’]{8,})[\"”»'’]")
_CLAIM_OPENERS = (
    r"según|segun|de acuerdo con|conforme a|conforme al|como (?:establece|indica|dice|exige|señala|dispone)|"
    r"tal (?:y )?como (?:establece|indica|dice|exige|señala|dispone)|"
    r"according to|as (?:stated|required|defined|specified) (?:in|by)|per"
)
_CLAIM_VERBS = (
    r"dice|establece|indica|exige|prescribe|señala|dispone|determina|"
    r"says|states|requires|reads|mandates|specifies|stipulates|prescribes|establishes"
)


@dataclass(frozen=True)
class CitationSyntax:
    """How the output cites the norms in force (built from :class:`~norma.audit.NormsConfig`, once per set)."""

    reference: re.Pattern[str]
    """A document acronym and a section (``DNS §2.03``, ``DR R2.01``), or a bare rule id (``R2.01``)."""
    may_cite: re.Pattern[str]
    """A cheap test: an acronym or a rule prefix followed by a digit."""
    claims: tuple[re.Pattern[str], ...]
    """IR.4.02's "según DNS §2.03, ..." and "DNS §2.03 dice que ..." forms."""
    letters: str
    """First letters of every acronym and rule prefix (a line with none of them cites nothing)."""


@lru_cache(maxsize=64)
def citation_syntax(
    acronyms: tuple[str, ...] = SPEC_PRIORITY, rule_prefixes: tuple[str, ...] = ("R",)
) -> CitationSyntax:
    """The reference and claim patterns for these acronyms and rule-id prefixes (escaped literals: linear time).

    The spec's set gives its pattern ``(DNS|DR|ICR|RED|IRA)\\s+§?\\d+(\\.\\d+)?`` or ``R\\d+\\.\\d+`` (numbers read to
    their end, ``DR R2.01`` one reference)."""
    norms = NormsConfig(priority=acronyms, rule_prefixes=rule_prefixes)
    doc = "|".join(re.escape(a) for a in sorted(acronyms, key=len, reverse=True))
    rule = norms.rule_id_regex()
    prefixes = "|".join(re.escape(p) for p in sorted(rule_prefixes, key=len, reverse=True))
    section = rf"(?:(?:{prefixes})?\d+(?:\.\d+)*)" if prefixes else r"\d+(?:\.\d+)*"
    reference = re.compile(
        rf"(?<![\w.])(?P<doc>{doc})\s+(?:§\s*)?(?P<sec>{section})(?![\w])|(?<![\w.])(?P<rule>{rule})(?![\w])"
        rf"|(?<![\w.])(?P<other>[A-Z][A-Z0-9]{{1,15}})\s*§\s*(?P<other_sec>\d+(?:\.\d+)*)(?![\w])"
    )
    may_cite = rf"(?<![\w.])(?:{doc})(?![\w])"
    if prefixes:
        may_cite += rf"|(?<![\w.])(?:{prefixes})\d"
    ref_text = rf"(?P<doc>{doc})(?:\s+(?:§\s*)?(?P<sec>{section}))?|(?P<rule>{rule})"
    claims = (
        re.compile(
            rf"(?:^[\s\-*•\d.)]*|[,;:]\s+)(?i:{_CLAIM_OPENERS})\s+(?i:el\s+|la\s+|the\s+)?(?:{ref_text})"
            rf"\s*[,:]?\s*(?P<rest>.+)",
        ),
        re.compile(rf"(?:{ref_text})\s+(?i:{_CLAIM_VERBS})(?:\s+(?i:que|that))?\s*[,:]?\s*(?P<rest>.+)"),
    )
    letters = "".join(sorted({a[0] for a in acronyms} | {p[0] for p in rule_prefixes}))
    return CitationSyntax(reference, re.compile(may_cite), claims, letters)


def syntax_for(norms: NormsConfig, declared: Sequence[str] = ()) -> CitationSyntax:
    """The :class:`CitationSyntax` of a norms configuration and the acronyms the loaded documents declare (a
    document that declares ``acronym: PLT`` is cited as ``PLT §2.1`` whether or not ``priority`` lists it)."""
    extra = tuple(a for a in dict.fromkeys(declared) if a not in norms.priority and _CITABLE.fullmatch(a))
    return citation_syntax((*norms.priority, *extra), norms.rule_prefixes)


@dataclass(frozen=True)
class Reference:
    """One normative reference in the output."""

    document: str | None
    """The acronym, or ``None`` for a bare rule id (``R2.01``)."""
    section: str
    line: int
    text: str

    @cached_property
    def key(self) -> str:
        """What makes two references the same rule (for ``rules_referenced``)."""
        from norma.audit._documents import section_key

        return f"{self.document or '*'} {section_key(self.section)}"


@dataclass(frozen=True)
class Decision:
    """One technical decision."""

    line: int
    text: str
    major: bool
    kind: str
    """``"type"`` (a declared type in code) or ``"statement"`` (a prose sentence or bullet)."""


@dataclass(frozen=True)
class Claim:
    """A statement of what a norm says."""

    line: int
    document: str | None
    section: str | None
    quoted: str
    """The text attributed to the norm."""
    literal: bool
    """In quotes (a quotation) rather than the rest of the sentence."""
    reformulation: bool
    """Marked as a reformulation ("en otras palabras"): allowed by IR.4.02."""
    sentence: str


@lru_cache(maxsize=256)
def compile_reference_pattern(pattern: str) -> Pattern:
    """A configured reference pattern compiled with RE2 (linear time), once per process.

    Raises:
        InvalidInputError: not valid RE2 (back-references, look-arounds), no ``sec`` group, or another named group.
    """
    compiled = compile_pattern(pattern)
    groups = set(getattr(compiled, "groupindex", {}))
    hint = "name the section (?P<sec>...) and, optionally, the document's acronym (?P<doc>...)"
    unknown = sorted(groups.difference(REFERENCE_GROUPS))
    if unknown:
        raise InvalidInputError(
            f"reference pattern {pattern!r} has unknown named group(s) {', '.join(unknown)}",
            hint=hint + "; other groups must be unnamed",
        )
    if "sec" not in groups:
        raise InvalidInputError(f"reference pattern {pattern!r} has no named group 'sec'", hint=hint)
    return compiled


def find_references(
    parsed: ParsedText,
    lines: set[int] | None = None,
    patterns: Sequence[Pattern] = (),
    syntax: CitationSyntax | None = None,
) -> list[Reference]:
    """Every reference outside code blocks (of the given lines only, when given), in order.

    ``syntax``: the norms' citation syntax (default: the spec's); ``patterns`` are configured reference patterns
    (see :func:`compile_reference_pattern`), tried after it.
    """
    syntax = syntax or citation_syntax()
    letters = syntax.letters
    found: list[Reference] = []
    for line in parsed.lines:
        if line.code or (lines is not None and line.number not in lines):
            continue
        text = line.text
        candidates: list[tuple[int, int, int, Reference]] = []  # (start, pattern rank, end, reference)
        if "§" in text or any(letter in text for letter in letters):  # an acronym's first letter, or §
            for match in syntax.reference.finditer(text):
                if match.group("rule"):
                    reference = Reference(None, match.group("rule"), line.number, match.group(0))
                elif match.group("other"):  # an acronym the norms do not know: IR.0.03 says what would
                    reference = Reference(match.group("other"), match.group("other_sec"), line.number, match.group(0))
                else:
                    reference = Reference(match.group("doc"), match.group("sec"), line.number, match.group(0))
                candidates.append((match.start(), 0, match.end(), reference))
        for rank, pattern in enumerate(patterns, start=1):
            for match in pattern.finditer(text):
                section = (match.group("sec") or "").strip()
                if not section or match.end() == match.start():
                    continue
                document = (match.groupdict().get("doc") or "").strip().upper() or None
                reference = Reference(document, section, line.number, match.group(0))
                candidates.append((match.start(), rank, match.end(), reference))
        if not patterns:
            found.extend(candidate[3] for candidate in candidates)
            continue
        taken_until = -1
        for start, _rank, end, reference in sorted(candidates, key=lambda c: (c[0], c[1])):
            if start >= taken_until:  # overlapping matches of several patterns count once
                found.append(reference)
                taken_until = end
    return found


def _statement_units(line: Line) -> list[tuple[str, str]]:
    """(unit, folded unit) pairs: the whole bullet, or each sentence of a prose line."""
    if _BULLET.match(line.text):
        return [(_BULLET.sub("", line.text), _BULLET.sub("", line.folded))]
    return _sentence_pairs(line)


_CLAIM_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=:)\s+(?![\"“«'‘])")
"""A claim runs on after a colon when a quotation follows (``DNS §3.01 states: "..."``)."""


def _sentence_pairs(line: Line, claims: bool = False) -> list[tuple[str, str]]:
    if claims:
        raw = [p for p in _CLAIM_SENTENCE_END.split(line.text) if p.strip()]
        folded = [p for p in _CLAIM_SENTENCE_END.split(line.folded) if p.strip()]
    else:
        raw, folded = sentences(line.text), sentences(line.folded)
    if len(raw) != len(folded):  # folding changed a sentence boundary (rare): fold each sentence instead
        folded = [fold(s) for s in raw]
    return list(zip(raw, folded, strict=True))


def _code_decisions(block: Sequence[Line], announced: set[str]) -> list[Decision]:
    """The decisions of one fenced code block: each declared type; each method, property, field or function
    declared at the block's top level (outside the braces of a type); and, when the block declares nothing but
    holds more than obvious syntax, the block itself (a code block is at least one decision)."""
    decisions: list[Decision] = []
    declares = False
    depth = 0
    first_code: Line | None = None
    for line in block:
        text = line.text
        code = text.split("//", 1)[0] if "//" in text else text
        if _CODE_OBVIOUS.match(text) or _CODE_TRIVIAL.match(text):
            if not text.lstrip().startswith(("//", "#", "*", "/*", "--")):
                depth = max(0, depth + code.count("{") - code.count("}"))
            continue
        first_code = first_code or line
        types = list(_TYPE_DECL.finditer(text))
        declares = declares or bool(types)
        for match in types:
            if match.group(2) not in announced:  # the prose already stated this decision
                decisions.append(Decision(line.number, f"{match.group(1)} {match.group(2)}", True, "type"))
        member = _MEMBER_DECL.match(code) if not types and depth == 0 else None
        if member is not None:
            name = member.group("method") or member.group("member") or member.group("function")
            before = code[: member.start("method")].split()[-1:] if member.group("method") else []
            if name not in _NOT_MEMBER_WORDS and not _NOT_MEMBER_WORDS.intersection(before):
                declares = True
                if name not in announced:
                    decisions.append(Decision(line.number, shorten(text.strip(), 80), True, "member"))
        depth = max(0, depth + code.count("{") - code.count("}"))
    if first_code is not None and not declares and not _announces_block(block, announced):
        decisions.append(Decision(first_code.number, shorten(first_code.text.strip(), 80), True, "code"))
    return decisions


_PARAMETERS = re.compile(r"\(([^()]*)\)")
_ASSIGNED = re.compile(
    r"^\s*(?:(?:const|let|var|val|final|static|readonly)\s+)*(?P<name>[A-Za-z_]\w*)\s*(?::[^=]+)?=(?![=>])"
)
"""A name given a value at the start of a line of code (``MAX_RETRIES = 3``, ``const baseFare = 2``)."""
_NAME = re.compile(r"[A-Za-z_]\w*")


def declared_names(parsed: ParsedText) -> frozenset[str]:
    """The names the text's own code declares, at any depth: types, methods, functions, constructors, properties
    and fields, their parameters, and names assigned at the start of a line. An output that declares a name
    introduces it: it is neither implicit context (IR.3.01) nor drift (IR.4.01)."""
    names: set[str] = set()
    for line in parsed.lines:
        if not line.code:
            continue
        text = line.text.split("//", 1)[0] if "//" in line.text else line.text
        names.update(match.group(2) for match in _TYPE_DECL.finditer(text))
        member = _MEMBER_DECL.match(text)
        if member is not None:
            group = "method" if member.group("method") else "member" if member.group("member") else "function"
            name = member.group(group)
            before = text[: member.start(group)].split()[-1:]
            if name not in _NOT_MEMBER_WORDS and not _NOT_MEMBER_WORDS.intersection(before):
                names.add(name)
                parameters = _PARAMETERS.search(text, member.end(group)) if group != "member" else None
                for parameter in parameters.group(1).split(",") if parameters else ():
                    declared = parameter.split("=", 1)[0]
                    declared = declared.split(":", 1)[0] if ":" in declared else declared
                    words = _NAME.findall(declared)
                    if words:
                        names.add(words[-1])
        assigned = _ASSIGNED.match(text)
        if assigned is not None and assigned.group("name") not in _NOT_MEMBER_WORDS:
            names.add(assigned.group("name"))
    return frozenset(names)


def _announces_block(block: Sequence[Line], announced: set[str]) -> bool:
    """Whether a block that declares nothing uses a name a prose decision already stated (one decision, not two)."""
    if not announced:
        return False
    return any(m.group(0) in announced for line in block for m in _IDENTIFIER.finditer(line.text))


def find_decisions(parsed: ParsedText, lexicon: Lexicon, lines: set[int] | None = None) -> list[Decision]:
    """Technical decisions, in order (see the module docstring for the heuristic)."""
    decisions: list[Decision] = []
    announced: set[str] = set()
    block: list[Line] = []
    for line in parsed.lines:
        if line.code:
            if lines is None or line.number in lines:
                block.append(line)
            if _FENCE_LINE.match(line.text) and len(block) > 1:  # a closing fence ends the block
                decisions.extend(_code_decisions(block, announced))
                block = []
            continue
        if block:  # an unclosed block ends with the code
            decisions.extend(_code_decisions(block, announced))
            block = []
        if line.blank or (lines is not None and line.number not in lines):
            continue
        if line.text.lstrip().startswith("#"):
            continue
        for unit, folded in _statement_units(line):
            if lexicon.design_verbs.search(unit, folded) is not None:
                major = lexicon.major_verbs.search(unit, folded) is not None
                decisions.append(Decision(line.number, unit.strip(), major, "statement"))
                announced.update(_IDENTIFIER.findall(unit), _ANNOUNCED.findall(unit))
    if block:
        decisions.extend(_code_decisions(block, announced))
    return decisions


def find_claims(
    parsed: ParsedText, lexicon: Lexicon, lines: set[int] | None = None, syntax: CitationSyntax | None = None
) -> list[Claim]:
    """Claims about what a norm says, outside code (``syntax``: the norms' citation syntax, default the spec's)."""
    syntax = syntax or citation_syntax()
    claims: list[Claim] = []
    previous_marked = False
    for line in parsed.lines:
        if line.code or line.blank or (lines is not None and line.number not in lines):
            previous_marked = False if line.blank else previous_marked
            continue
        if not syntax.may_cite.search(line.text):
            previous_marked = lexicon.reformulation.search(line.text, line.folded) is not None
            continue
        for sentence, folded in _sentence_pairs(line, claims=True):
            marked = lexicon.reformulation.search(sentence, folded) is not None
            if _CLAIM_WORDS.search(sentence, folded) is None:  # no claim verb or marker: skip the regexes
                previous_marked = marked
                continue
            for pattern in syntax.claims:
                match = pattern.search(sentence)
                if match is None:
                    continue
                rest = match.group("rest").strip()
                quoted = _QUOTED.search(rest)
                text = quoted.group("q") if quoted else rest
                if len(text.split()) < 3:
                    continue
                document = match.group("doc") or None
                section = match.group("sec") or match.group("rule")
                claims.append(
                    Claim(line.number, document, section, text.strip().rstrip("."), quoted is not None,
                          marked or previous_marked, sentence.strip())
                )  # fmt: skip
                break
            previous_marked = marked
    return claims
