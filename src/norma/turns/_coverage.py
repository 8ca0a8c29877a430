"""What a rulebook covers on recorded traffic (issue #60): :func:`coverage` of the messages of recorded turns.

Every message is embedded once (the matcher's embedder; each distinct text once) and matched with those vectors
(:meth:`~norma.matching.RuleMatcher.match_many` with ``query_vectors``), with the turn's session when it has one; a
message longer than the model's window is matched as the matcher matches it, on its windows (embedded apart). A
match *governs* its message when :attr:`~norma.matching.MatchedRule.enforced` (its confidence reaches
:data:`~norma.matching.GOVERNS`, as a turn check decides); a match that does not govern is a *neighbour*. From the
results, :class:`Coverage` gives:

1. each rule's share of the turns (:class:`RuleCoverage`): the turns it governs, the turns where it matched as a
   neighbour only;
2. the enabled rules that govern no turn (:attr:`Coverage.never_governs`) and those that never even matched
   (:attr:`Coverage.never_matched`), by id;
3. the messages no rule governs, clustered (:class:`UngovernedCluster`), largest first: the gaps of the rulebook;
4. the pairs of rules that compete for the same messages (:class:`CompetingRules`), most contested first.

**Clustering** (average linkage on cosine, cut at :data:`CLUSTER_SIMILARITY`; deterministic): the distinct texts of
the ungoverned messages are sorted (the input order does not matter), each weighted by how many ungoverned messages
carry it. Two clusters merge while the mean cosine between their messages reaches :data:`CLUSTER_SIMILARITY`, the
most similar pair first (a text no other text comes that close to stays alone). On BANKING77 with 10 intents left
out of the rulebook (three draws), its clusters agree better with the intents than leader clustering's at any
threshold (pair F1 0.445 against 0.368 at best) and hold more of the missing intents: docs/diff.md "Coverage". A
cluster's examples are its distinct texts closest to its
centroid (the normalised mean of its messages' vectors), up to :data:`EXAMPLES`; its label (``terms``) is the words
(lower-cased ``\\w\\w+`` runs, English stop words left out) in at least a quarter of its messages, ranked by that
share times their inverse document frequency over every message of the input, up to :data:`LABEL_TERMS`; its
nearest rule is the enabled rule with the highest mean similarity over the cluster's messages (a message's
similarity to a rule: its best cosine to the rule's texts, as the matcher measures it). A cluster of one message is
not listed: :attr:`Coverage.other_ungoverned` counts them.

**Competing rules**: rules ``a`` and ``b`` (``a`` < ``b`` by id) compete for a message when both govern it, or
when one is the top candidate and the other the second with similarities (:attr:`~norma.matching.MatchedRule.
similarity_score`) within :data:`CONTEST_MARGIN` of each other: the message's first two candidates without a gate
(two rules that say nearly the same thing split the confidence, so often neither governs nor passes the gate), the
top one at least :data:`CONTEST_CONFIDENCE` (0.5) sure to be the message's rule (so rules far from a message do not
compete for it). A
pair is listed when both govern some message, or when each is the top over the other on some message (they swap
the top place); ``messages`` counts the messages where they compete in either way, and the example is the one where
their similarities are closest.

The result and its JSON: :mod:`norma.turns._coverage_report`.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from norma.errors import InvalidInputError, LimitExceededError
from norma.matching import MatchResult, SessionState
from norma.turns._checker import checked_message, refuse_unknown_fields
from norma.turns._clustering import cluster_rows, label_terms, words
from norma.turns._coverage_report import (
    CLUSTER_SIMILARITY,
    CONTEST_CONFIDENCE,
    CONTEST_MARGIN,
    CompetingRules,
    Coverage,
    CoverageExample,
    RuleCoverage,
    UngovernedCluster,
)
from norma.turns._opened import Opened

if TYPE_CHECKING:
    from norma.embeddings import Embedder

__all__ = ["EXAMPLES", "LABEL_TERMS", "Progress", "coverage"]

EXAMPLES = 3
"""Example messages per cluster."""
LABEL_TERMS = 3
"""Words per cluster label."""
_CHUNK = 256  # messages embedded and matched per step (a progress report after each)
_BLOCK = 1024  # rows of a similarity block


Progress = Callable[[int, int], None]
"""Called with (messages done, messages in all) as the messages are embedded and matched."""


# -- the input ------------------------------------------------------------------------------------------------------


def _message_of(item: object, index: int) -> tuple[str, SessionState | None]:
    """Item ``index`` of the messages: a message, or a turn record (``output`` optional), checked."""
    where = f"messages[{index}]"
    if isinstance(item, str):
        return checked_message(item, where, "give the user's message"), None
    if not isinstance(item, Mapping):
        raise InvalidInputError(
            f"a message is text or a turn record, not {type(item).__name__}",
            location=where,
            hint='write "hi" or {"message": "hi", "session": {}}',
        )
    refuse_unknown_fields(item, where)
    if "message" not in item:
        raise InvalidInputError('a turn record needs "message"', location=where, hint='write {"message": "..."}')
    text = checked_message(item["message"], f"{where}.message", "give the user's message")
    session = item.get("session")
    if session is None or isinstance(session, SessionState):
        return text, session
    if not isinstance(session, Mapping):
        raise InvalidInputError(
            f"a session must be a mapping of fields, got {type(session).__name__}",
            location=f"{where}.session",
            hint="run `norma docs matching` for the session fields",
        )
    try:
        return text, SessionState.from_mapping(session)
    except InvalidInputError as exc:  # a session that does not fit: say where it is
        exc.location = f"{where}.session"
        raise


def _messages(messages: object, max_chars: int) -> list[tuple[str, SessionState | None]]:
    """Every message checked before any is embedded."""
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable):
        raise InvalidInputError(
            f"coverage() takes a list of messages, not {type(messages).__name__}",
            location="messages",
            hint="give the recorded messages (texts or turn records) as a list",
        )
    items = [_message_of(item, index) for index, item in enumerate(messages)]
    for index, (text, _) in enumerate(items):
        if len(text) > max_chars:
            raise LimitExceededError(
                f"the message is {len(text):,} characters, over the limit of {max_chars:,}",
                location=f"messages[{index}]",
                hint="shorten the message, or raise MatchConfig.max_message_chars",
            )
    return items


# -- embedding and matching -----------------------------------------------------------------------------------------


def _windowed(embedder: Embedder, texts: Sequence[str]) -> set[str]:
    """The texts the matcher splits into windows (``long_messages="chunk"``): those the model would truncate. A
    token takes at least one character, so only texts about as long as the window are counted."""
    count = getattr(embedder, "token_counts", None)
    window = getattr(embedder, "max_seq_length", None)
    if count is None or not isinstance(window, int):
        return set()
    long = [text for text in texts if len(text) + 2 >= window]
    return {text for text, tokens in zip(long, count(long) if long else [], strict=True) if tokens >= window}


def _match_all(
    norma: Opened, items: list[tuple[str, SessionState | None]], progress: Progress | None
) -> tuple[list[MatchResult], list[MatchResult], dict[str, np.ndarray]]:
    """Each message's match result, its first two candidates without a gate, and each distinct text's vector: a
    text is embedded once, a message matched once per session it comes with (recorded traffic repeats itself: "hi",
    "thanks")."""
    matcher = norma.matcher
    open_two = matcher.config.with_(threshold=None, max_matched=2)
    embedder = norma.embedder if norma.embedder is not None else matcher.embedder
    chunked = matcher.config.long_messages == "chunk"
    vectors: dict[str, np.ndarray] = {}
    windowed: set[str] = set()  # texts the matcher splits into windows: it embeds them itself
    matched: dict[tuple[str, str | None], tuple[MatchResult, MatchResult]] = {}
    results: list[tuple[MatchResult, MatchResult]] = []
    for start in range(0, len(items), _CHUNK):
        chunk = items[start : start + _CHUNK]
        new = list(dict.fromkeys(text for text, _ in chunk if text not in vectors))
        if new:
            vectors.update(zip(new, embedder.embed(new), strict=True))
            windowed |= _windowed(embedder, new) if chunked else set()
        keys = [(text, None if session is None else session.model_dump_json()) for text, session in chunk]
        todo = {key: item for key, item in zip(keys, chunk, strict=True) if key not in matched}
        whole = [key for key in todo if key[0] not in windowed]
        if whole:
            texts, sessions = [todo[key][0] for key in whole], [todo[key][1] for key in whole]
            queries = [vectors[key[0]] for key in whole]
            found = matcher.match_many(texts, sessions, query_vectors=queries)
            first_two = matcher.match_many(texts, sessions, query_vectors=queries, config=open_two)
            matched.update(zip(whole, zip(found, first_two, strict=True), strict=True))
        long = [key for key in todo if key[0] in windowed]
        if long:
            texts, sessions = [todo[k][0] for k in long], [todo[k][1] for k in long]
            found = matcher.match_many(texts, sessions, embedder=embedder)
            first_two = matcher.match_many(texts, sessions, embedder=embedder, config=open_two)
            matched.update(zip(long, zip(found, first_two, strict=True), strict=True))
        results += [matched[key] for key in keys]
        if progress is not None:
            progress(start + len(chunk), len(items))
    return [gated for gated, _ in results], [two for _, two in results], vectors


# -- clustering -----------------------------------------------------------------------------------------------------


def _nearest(
    clusters: list[list[int]], matrix: np.ndarray, weights: np.ndarray, norma: Opened
) -> list[tuple[str | None, float | None]]:
    """For each cluster (rows of ``matrix``, unit vectors, each standing for ``weights`` messages), the enabled rule
    with the highest weighted mean similarity over its messages, and that mean. Small clusters are taken together,
    a block of rows at a time: a few large products rather than one small one per cluster."""
    ids = [rule.id for rule in norma.rules if rule.enabled]
    if not ids:
        return [(None, None)] * len(clusters)
    blocks = [norma.matcher.vectors_for(rule_id) for rule_id in ids]
    starts = np.cumsum([0, *(len(block) for block in blocks[:-1])]).astype(np.intp)
    columns = np.ascontiguousarray(np.concatenate(blocks).T)  # a transposed view is multiplied far slower
    found: list[tuple[str | None, float | None]] = []

    def best(rows: np.ndarray) -> np.ndarray:
        """Each row's best cosine to each rule's texts, weighted by its messages."""
        similarity = np.maximum.reduceat(matrix[rows] @ columns, starts, axis=1)
        weighted: np.ndarray = similarity.astype(np.float64) * weights[rows, None]
        return weighted

    def take(means: np.ndarray) -> None:
        for mean in means:
            chosen = int(np.argmax(mean))  # the first of equals: the smallest id
            found.append((ids[chosen], float(mean[chosen])))

    batch: list[list[int]] = []
    for cluster in [*clusters, None]:
        if batch and (cluster is None or sum(map(len, batch)) + len(cluster) > _BLOCK):
            rows = np.concatenate([np.asarray(c, dtype=np.intp) for c in batch])
            bounds = np.cumsum([0, *map(len, batch[:-1])]).astype(np.intp)
            totals = np.add.reduceat(best(rows), bounds, axis=0)
            take(totals / np.asarray([weights[c].sum() for c in batch])[:, None])
            batch = []
        if cluster is None:
            break
        if len(cluster) <= _BLOCK:
            batch.append(cluster)
            continue
        total = sum(
            best(np.asarray(cluster[i : i + _BLOCK], dtype=np.intp)).sum(axis=0) for i in range(0, len(cluster), _BLOCK)
        )
        take(np.asarray([total / weights[cluster].sum()]))
    return found


def _clusters(
    norma: Opened,
    items: list[tuple[str, SessionState | None]],
    ungoverned: list[int],
    vectors: Mapping[str, np.ndarray],
) -> tuple[list[UngovernedCluster], int]:
    """The clusters of two or more ungoverned messages, largest first, and how many are in none."""
    counts = Counter(items[i][0] for i in ungoverned)
    texts = sorted(counts)
    if not texts:
        return [], 0
    places: dict[str, list[int]] = {}
    for i in ungoverned:
        places.setdefault(items[i][0], []).append(i)
    matrix = np.stack([vectors[text] for text in texts]).astype(np.float32)
    weights = np.asarray([counts[text] for text in texts], dtype=np.float64)
    documents = Counter(word for text, _ in items for word in words(text))
    idf = {word: math.log((1 + len(items)) / (1 + df)) + 1.0 for word, df in documents.items()}
    clusters = cluster_rows(matrix, weights, CLUSTER_SIMILARITY)
    kept = [members for members in clusters if weights[members].sum() >= 2]
    alone = int(sum(weights[members].sum() for members in clusters if weights[members].sum() < 2))
    found: list[UngovernedCluster] = []
    for members, (nearest, similarity) in zip(kept, _nearest(kept, matrix, weights, norma), strict=True):
        centroid = weights[members] @ matrix[members].astype(np.float64)
        centroid /= np.linalg.norm(centroid) or 1.0
        closeness = matrix[members].astype(np.float64) @ centroid
        ranked = sorted(zip(-closeness, (texts[m] for m in members), strict=True))[:EXAMPLES]
        examples = tuple(CoverageExample(places[text][0], text) for _, text in ranked)
        member_texts = [texts[m] for m in members]
        label = label_terms(member_texts, [counts[t] for t in member_texts], idf, LABEL_TERMS)
        indexes = tuple(sorted(i for text in member_texts for i in places[text]))
        size = int(weights[members].sum())
        found.append(UngovernedCluster(size, examples, label, nearest, similarity, indexes))
    found.sort(key=lambda c: (-c.size, c.examples[0].message))
    return found, alone


# -- competing rules ------------------------------------------------------------------------------------------------


@dataclass
class _Contest:
    both: int = 0
    a_first: int = 0
    b_first: int = 0
    messages: int = 0
    example: tuple[float, int] = (math.inf, -1)  # (similarity gap, message index)


def _competing(
    items: list[tuple[str, SessionState | None]], results: list[MatchResult], first_two: list[MatchResult]
) -> list[CompetingRules]:
    """The pairs of competing rules (see the module docstring), the most contested first: ``results`` the gated
    matches, ``first_two`` each message's first two candidates without a gate."""
    contests: dict[tuple[str, str], _Contest] = {}
    for index, (gated, result) in enumerate(zip(results, first_two, strict=True)):
        similarity = {m.rule.id: m.similarity_score for m in (*gated, *result)}
        governing = sorted(m.rule.id for m in gated if m.enforced)
        here: dict[tuple[str, str], _Contest] = {}
        for i, a in enumerate(governing):
            for b in governing[i + 1 :]:
                contest = here[(a, b)] = contests.setdefault((a, b), _Contest())
                contest.both += 1
        close = len(result) >= 2 and abs(result[0].similarity_score - result[1].similarity_score) <= CONTEST_MARGIN
        if close and result[0].confidence >= CONTEST_CONFIDENCE:
            top, second = result[0].rule.id, result[1].rule.id
            pair = (min(top, second), max(top, second))
            contest = here[pair] = contests.setdefault(pair, _Contest())
            if top == pair[0]:
                contest.a_first += 1
            else:
                contest.b_first += 1
        for (a, b), contest in here.items():
            contest.messages += 1
            gap = abs(similarity[a] - similarity[b])
            if gap < contest.example[0]:
                contest.example = (gap, index)
    found = [
        CompetingRules(
            a, b, c.messages, c.both, c.a_first, c.b_first, CoverageExample(c.example[1], items[c.example[1]][0])
        )
        for (a, b), c in contests.items()
        if c.both or (c.a_first and c.b_first)
    ]
    found.sort(key=lambda c: (-c.messages, -c.both_govern, c.rule_a, c.rule_b))
    return found


# -- the report -----------------------------------------------------------------------------------------------------


def coverage(
    norma: Opened, messages: Iterable[str | Mapping[str, Any]], *, progress: Progress | None = None
) -> Coverage:
    """What the rules of ``norma`` cover on recorded ``messages``: each rule's share of the turns, the rules that
    govern none, the ungoverned messages clustered, the rules that compete (see the module docstring).

    Args:
        norma: the rulebook or tenant (:func:`norma.open`).
        messages: the recorded messages: texts, or turn records as ``norma check --batch`` reads them
            (``{"message", "session"?, "output"?, "id"?}``; the session scopes the match, the rest is not used).
        progress: called with (messages done, messages in all) as they are embedded and matched.

    Raises:
        InvalidInputError: ``messages`` is not a list of those, or message ``i`` is empty or its session does not
            fit (``location``: ``messages[i]``...); nothing is matched then.
        LimitExceededError: a message over the matcher's size limit.
    """
    items = _messages(messages, norma.matcher.config.max_message_chars)
    results, first_two, vectors = _match_all(norma, items, progress)
    governs: Counter[str] = Counter()
    neighbour: Counter[str] = Counter()
    governed = neighbour_only = 0
    ungoverned: list[int] = []
    for index, result in enumerate(results):
        ruling = {m.rule.id for m in result if m.enforced}
        governs.update(ruling)
        neighbour.update({m.rule.id for m in result} - ruling)
        if ruling:
            governed += 1
            continue
        ungoverned.append(index)
        neighbour_only += bool(result)
    shares = [RuleCoverage(r.id, r.enabled, governs[r.id], neighbour[r.id]) for r in norma.rules]
    shares.sort(key=lambda r: (-r.governs, -r.neighbour, r.rule_id))
    clusters, alone = _clusters(norma, items, ungoverned, vectors)
    return Coverage(
        tenant_id=norma.tenant_id,
        rules_version=norma.rules_version,
        turns=len(items),
        governed=governed,
        neighbour_only=neighbour_only,
        unmatched=len(items) - governed - neighbour_only,
        rules=tuple(shares),
        clusters=tuple(clusters),
        other_ungoverned=alone,
        competing=tuple(_competing(items, results, first_two)),
    )
