"""Adapting the encoder to one rulebook: contrastive fine-tuning on the rulebook's own texts (needs torch).

A rulebook's texts come in groups (one rule's condition and examples). Fine-tuning pulls each text towards the
other texts of its group and away from every other group in the batch (in-batch negatives, a symmetric
cross-entropy over scaled cosines), which is how few-shot intent detectors adapt a sentence encoder to their
classes. The result is an ordinary sentence-transformers model directory (the base model's configuration and
tokenizer, new ``model.safetensors``, and ``norma_adapted.json`` recording how it was made) that every part of
norma loads like any other: ``$NORMA_MODEL_DIR``, ``--model-dir`` or ``get_embedder(model_dir)``. Inference stays on
onnxruntime without torch; only adapting needs it (``pip install 'norma-rules[adapt]'``).

Determinism: with the same texts, options, seed, torch build and thread count the weights are the same (batches
and pairs come from a seeded ``random.Random``; torch's CPU kernels are deterministic for a fixed thread count).
The defaults (``AdaptOptions``) were chosen on development draws only; see docs/design/040-matching.md.

Held-out similarities (cross-fitting): how close an example the encoder never saw comes to the other texts of its
rulebook can only be measured on examples left out of its training. With ``holdout`` > 0 (the default), adapting
first trains on the rulebook without a fixed part of its examples (chosen by CRC-32 of the text, so any run holds
out the same ones), measures each held-out example's best cosine to every other text of the rulebook with that
encoder (:func:`~norma.embeddings.probe_similarities`, the measurement the matcher takes on a rulebook's own
examples), then trains the final encoder on every text (with the same seed: the weights are those of a run without
holdout). Those similarities are stored in ``norma_adapted.json`` (``held_out``, with a sketch of the trained
texts) as data; what a reader makes of them is its own business (the matcher: :func:`norma.matching.read_held_out`).
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from norma.embeddings._model_files import ModelFiles, load_model_files, read_weights
from norma.embeddings._probes import (
    MAX_PROBES,
    MIN_PROBES,
    pick_probes,
    probe_similarities,
    probe_similarities_by_owner,
    text_key,
)
from norma.embeddings._tokenize import WordPieces
from norma.errors import ConfigError, InvalidInputError, MissingDependencyError

__all__ = [
    "ADAPTED_FILE",
    "AdaptOptions",
    "AdaptReport",
    "adapt_encoder",
    "adapted_info",
]

ADAPTED_FILE = "norma_adapted.json"
"""The file in an adapted model directory that records its base model, options and training figures."""

_COPIED = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "modules.json",
)
_TORCH_INSTALL = "pip install 'norma-rules[adapt]' (torch==2.13.0, the CPU build)"


@dataclass(frozen=True)
class AdaptOptions:
    """How to fine-tune. The defaults were chosen on development draws (docs/design/040-matching.md)."""

    epochs: int = 2
    learning_rate: float = 5e-5
    batch_size: int = 32
    """Pairs per step; each batch holds at most one pair per group, so every other pair is a true negative."""
    pairs_per_text: int = 1
    """Positive partners drawn for each text per epoch (another text of its group)."""
    scale: float = 20.0
    """Cosines are multiplied by this before the cross-entropy (a temperature of 0.05)."""
    max_tokens: int = 64
    """Training truncation in word pieces (rule texts are short; the saved model keeps the base window)."""
    seed: int = 0
    holdout: float = 0.3
    """Share of each rule's examples held out of a first training run, to measure how close examples the encoder
    never saw come to the rest of the rulebook (cross-fitting; at most all but one example of a rule, and at least
    :data:`~norma.embeddings.MIN_PROBES` held out in all, else nothing is stored); 0 skips it and halves the time."""
    threads: int | None = None
    """torch intra-op threads (default: ``$NORMA_EMBEDDINGS_THREADS`` or the usable cores, max 8)."""

    def check(self) -> None:
        """An :class:`InvalidInputError` naming the first option out of range."""
        for name, low in (("epochs", 1), ("batch_size", 2), ("pairs_per_text", 1), ("max_tokens", 8)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidInputError(f"{name} must be an integer >= {low}, not {value!r}", location=name)
        for name in ("learning_rate", "scale"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1e3:
                raise InvalidInputError(f"{name} must be a positive number, not {value!r}", location=name)
        holdout = self.holdout
        if isinstance(holdout, bool) or not isinstance(holdout, int | float) or not 0 <= holdout < 1:
            raise InvalidInputError(f"holdout must be a number in [0, 1), not {holdout!r}", location="holdout")
        if self.threads is not None and (not isinstance(self.threads, int) or self.threads < 1):
            raise InvalidInputError(f"threads must be a positive integer, not {self.threads!r}", location="threads")


@dataclass(frozen=True)
class AdaptReport:
    """What :func:`adapt_encoder` did."""

    directory: Path
    base_model_id: str
    groups: int
    texts: int
    pairs: int
    steps: int
    seconds: float
    first_loss: float
    last_loss: float
    options: AdaptOptions
    held_out_probes: int = 0
    """Held-out examples whose similarities were stored (0: none, see ``holdout``)."""
    held_out_median: float | None = None
    """Their median similarity (for a glance; a reader takes its own quantile)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = asdict(self)
        out["directory"] = str(self.directory)
        out["seconds"] = round(self.seconds, 2)
        out["first_loss"] = round(self.first_loss, 4)
        out["last_loss"] = round(self.last_loss, 4)
        out["seconds_per_run"] = round(self.seconds / (2 if self.held_out_probes else 1), 2)
        return out


def adapted_info(model_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The ``norma_adapted.json`` record of a model directory, or None when it was not made by :func:`adapt_encoder`."""
    path = Path(model_dir) / ADAPTED_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {ADAPTED_FILE}: {exc}", source=str(path)) from exc
    return data if isinstance(data, dict) else None


_SKETCH_SIZE = 4096  # the smallest CRC-32 keys of the trained texts kept with the held-out similarities


def _held_out(groups: list[list[str]], share: float) -> list[tuple[int, str]]:
    """(group, text) of the examples held out of the first training run: per group, the ``share`` of its examples
    (its texts after the first, which is the rule's own text) with the smallest CRC-32 keys (:func:`pick_probes`),
    rounded down and leaving at least one example in the group."""
    held: list[tuple[int, str]] = []
    for index, group in enumerate(groups):
        examples = group[1:]
        count = min(int(share * len(examples) + 1e-9), len(examples) - 1)
        if count > 0:
            held.extend((index, text) for text in pick_probes(((t, t) for t in examples), count))
    return held


def _check_groups(groups: Sequence[Sequence[str]]) -> list[list[str]]:
    cleaned: list[list[str]] = []
    for index, group in enumerate(groups):
        if isinstance(group, str):
            raise InvalidInputError(
                f"group {index} is a string, not a list of texts", location=f"groups[{index}]", hint="wrap it in a list"
            )
        texts: list[str] = []
        for text in group:
            if not isinstance(text, str):
                raise InvalidInputError(f"group {index} holds a {type(text).__name__}", location=f"groups[{index}]")
            if text.strip() and text.strip() not in texts:
                texts.append(text.strip())
        cleaned.append(texts)
    usable = [g for g in cleaned if len(g) >= 2]
    if len(usable) < 2:
        raise InvalidInputError(
            f"adapting needs at least 2 rules with 2 or more distinct texts each; {len(usable)} have",
            location="groups",
            hint="give the rules examples (a condition plus at least one example each)",
        )
    return cleaned


def _pairs(groups: list[list[str]], options: AdaptOptions, rng: random.Random) -> list[tuple[int, str, str]]:
    """(group, anchor, positive) for one epoch: every text of a group with 2+ texts, ``pairs_per_text`` times."""
    pairs: list[tuple[int, str, str]] = []
    for index, group in enumerate(groups):
        if len(group) < 2:
            continue
        for anchor in group:
            others = [text for text in group if text != anchor]
            pairs.extend((index, anchor, rng.choice(others)) for _ in range(options.pairs_per_text))
    rng.shuffle(pairs)
    return pairs


def _batches(pairs: list[tuple[int, str, str]], size: int) -> list[list[tuple[int, str, str]]]:
    """Consecutive batches of at most ``size`` pairs, never two pairs of one group in a batch (greedy, in order)."""
    batches: list[list[tuple[int, str, str]]] = []
    pending = pairs
    while pending:
        batch: list[tuple[int, str, str]] = []
        seen: set[int] = set()
        rest: list[tuple[int, str, str]] = []
        for item in pending:
            if len(batch) < size and item[0] not in seen:
                batch.append(item)
                seen.add(item[0])
            else:
                rest.append(item)
        if len(batch) >= 2:
            batches.append(batch)
        pending = rest if len(batch) >= 2 else []
    return batches


def _shared_masks(batch: list[tuple[int, str, str]], members: list[set[str]], torch: Any) -> tuple[Any, Any]:
    """Which off-diagonal pairs are not true negatives: a text that is also one of the other row's rule's texts
    (multi-label rulebooks share examples between rules). ``forward`` masks anchor-to-positive logits, ``backward``
    positive-to-anchor ones."""
    n = len(batch)
    forward = np.zeros((n, n), dtype=bool)
    backward = np.zeros((n, n), dtype=bool)
    for i, (group, _, _) in enumerate(batch):
        for j, (_, anchor, positive) in enumerate(batch):
            if i != j:
                forward[i, j] = positive in members[group]
                backward[i, j] = anchor in members[group]
    return torch.from_numpy(forward), torch.from_numpy(backward)


class _TorchBert:
    """A BERT encoder in torch with the parameter names of a sentence-transformers ``model.safetensors``."""

    def __init__(self, files: ModelFiles, torch: Any) -> None:
        self.torch = torch
        self.config = files.config
        self.params = {
            name: torch.nn.Parameter(torch.from_numpy(np.array(value, dtype=np.float32)))
            for name, value in read_weights(files).items()
        }

    def encode(self, input_ids: Any, mask: Any, *, train: bool) -> Any:
        torch, f, p, c = self.torch, self.torch.nn.functional, self.params, self.config
        drop = 0.1 if train else 0.0
        width = input_ids.shape[1]
        x = (
            p["embeddings.word_embeddings.weight"][input_ids]
            + p["embeddings.position_embeddings.weight"][:width].unsqueeze(0)
            + p["embeddings.token_type_embeddings.weight"][0]
        )
        x = f.layer_norm(
            x, (c.hidden_size,), p["embeddings.LayerNorm.weight"], p["embeddings.LayerNorm.bias"], c.layer_norm_eps
        )
        x = f.dropout(x, drop, train)
        batch, heads, size = input_ids.shape[0], c.num_attention_heads, c.head_size
        bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * -1e4
        for i in range(c.num_hidden_layers):
            q = f"encoder.layer.{i}."

            def lin(name: str, v: Any, q: str = q) -> Any:
                return f.linear(v, p[f"{q}{name}.weight"], p[f"{q}{name}.bias"])

            def split(v: Any) -> Any:
                return v.view(batch, width, heads, size).transpose(1, 2)

            scores = split(lin("attention.self.query", x)) @ split(lin("attention.self.key", x)).transpose(-1, -2)
            probs = f.dropout(torch.softmax(scores / math.sqrt(size) + bias, dim=-1), drop, train)
            context = (probs @ split(lin("attention.self.value", x))).transpose(1, 2).reshape(batch, width, -1)
            attended = f.dropout(lin("attention.output.dense", context), drop, train)
            x = f.layer_norm(
                attended + x,
                (c.hidden_size,),
                p[f"{q}attention.output.LayerNorm.weight"],
                p[f"{q}attention.output.LayerNorm.bias"],
                c.layer_norm_eps,
            )
            hidden = f.dropout(lin("output.dense", f.gelu(lin("intermediate.dense", x))), drop, train)
            x = f.layer_norm(
                hidden + x,
                (c.hidden_size,),
                p[f"{q}output.LayerNorm.weight"],
                p[f"{q}output.LayerNorm.bias"],
                c.layer_norm_eps,
            )
        weights = mask.unsqueeze(-1).to(x.dtype)
        pooled = (x * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
        return f.normalize(pooled, dim=-1)

    def numpy_weights(self) -> dict[str, np.ndarray]:
        return {name: value.detach().cpu().numpy().astype(np.float32) for name, value in self.params.items()}


_CHUNK = 16
"""Texts encoded together in a training step: a batch's texts sorted by length and cut into chunks of this many,
each padded to its own longest, so a step computes on about 1.7 times the real tokens instead of 2.5 times (rule
texts are short, a batch's longest is not); the vectors are those of the batch encoded whole, up to rounding.
On a 150-rule rulebook on 2 cores (``benchmarks/matching_adapt_speed.py``; two rounds in one run, a shared machine)
a step took 2.17-2.27 s whole, 1.59-1.75 s in chunks of 16 and 1.32-1.69 s in chunks of 8: smaller chunks pad less
but multiply smaller matrices, and the noise hides which of 8 and 16 is faster."""


def _encode(model: _TorchBert, pieces: WordPieces, texts: Sequence[str], torch: Any, *, train: bool) -> Any:
    """The vectors of ``texts`` (in their order), encoded in chunks of similar length (:data:`_CHUNK`)."""
    ids = pieces.encode(texts)
    order = sorted(range(len(ids)), key=lambda i: (len(ids[i]), i))
    parts = [model.encode(*_padded([ids[i] for i in order[at : at + _CHUNK]], torch), train=train)
             for at in range(0, len(order), _CHUNK)]  # fmt: skip
    inverse = torch.empty(len(order), dtype=torch.long)
    inverse[torch.tensor(order, dtype=torch.long)] = torch.arange(len(order))
    return torch.cat(parts)[inverse]


def _tensors(pieces: WordPieces, texts: Sequence[str], torch: Any) -> tuple[Any, Any]:
    return _padded(pieces.encode(texts), torch)


def _padded(ids: list[list[int]], torch: Any) -> tuple[Any, Any]:
    width = max(len(row) for row in ids)
    input_ids = np.zeros((len(ids), width), dtype=np.int64)
    mask = np.zeros((len(ids), width), dtype=np.int64)
    for row, values in enumerate(ids):
        input_ids[row, : len(values)] = values
        mask[row, : len(values)] = 1
    return torch.from_numpy(input_ids), torch.from_numpy(mask)


def _import_torch() -> Any:
    try:
        import torch
    except ImportError as exc:
        raise MissingDependencyError("adapting an encoder (torch)", install=_TORCH_INSTALL, extra="adapt") from exc
    return torch


def _prepare_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError("the output path exists and is not a folder", source=str(out_dir), hint="choose another path")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / ADAPTED_FILE).is_file():
        raise ConfigError(
            "the output folder is not empty and holds no adapted model",
            source=str(out_dir),
            hint="choose an empty or new folder (an adapted model's folder is replaced)",
        )


def adapt_encoder(
    groups: Sequence[Sequence[str]],
    out_dir: str | os.PathLike[str],
    *,
    options: AdaptOptions | None = None,
    model_dir: str | os.PathLike[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    label: str = "",
) -> AdaptReport:
    """Fine-tune the encoder on ``groups`` (one list of texts per rule) and write it to ``out_dir``.

    Args:
        groups: the texts of each rule (its condition and examples); rules with fewer than 2 distinct texts only
            serve as negatives. At least 2 rules need 2 or more texts.
        out_dir: a new or empty folder, or one holding an earlier adapted model (replaced as a whole: the new model
            is written beside it and moved in place, so a failure leaves the old one intact).
        options: :class:`AdaptOptions` (the defaults were chosen on development draws).
        model_dir: the base model (default: ``$NORMA_MODEL_DIR``, else all-MiniLM-L6-v2).
        progress: called with (steps done, steps in all) after every step.
        label: a free text stored in ``norma_adapted.json`` (e.g. the rulebook or tenant it was adapted to).

    Raises:
        MissingDependencyError: torch is not installed. InvalidInputError: too few usable rules, bad options.
        ConfigError: ``out_dir`` is not usable.
    """
    options = options or AdaptOptions()
    options.check()
    cleaned = _check_groups(groups)
    target = Path(out_dir)
    _prepare_out_dir(target)
    torch = _import_torch()
    files = load_model_files(model_dir)
    from norma.embeddings._session import default_threads

    previous_threads = torch.get_num_threads()
    torch.set_num_threads(options.threads or default_threads())
    pieces = WordPieces(files.tokenizer_path, min(options.max_tokens, files.max_seq_length))
    held = _held_out(cleaned, options.holdout) if options.holdout > 0 else []
    if len(held) < MIN_PROBES:
        held = []
    held_set = set(held)
    first = [[t for t in g if (i, t) not in held_set] for i, g in enumerate(cleaned)]
    plans = [_plan(first, options)] if held else []
    plans.append(_plan(cleaned, options))
    total = sum(len(epoch) for plan in plans for epoch in plan)
    started = time.perf_counter()
    measured: dict[str, Any] | None = None
    try:
        done = 0
        if held:
            crossfit = _TorchBert(files, torch)
            _train(crossfit, plans[0], first, options, pieces, torch, progress, done, total)
            done += sum(len(epoch) for epoch in plans[0])
            measured = _measure_held_out(crossfit, pieces, cleaned, held, options, torch)
            del crossfit
        model = _TorchBert(files, torch)
        losses = _train(model, plans[-1], cleaned, options, pieces, torch, progress, done, total)
    finally:
        torch.set_num_threads(previous_threads)
    seconds = time.perf_counter() - started
    plan = plans[-1]
    report = AdaptReport(
        directory=target,
        base_model_id=files.model_id,
        groups=len(cleaned),
        texts=sum(len(g) for g in cleaned),
        pairs=sum(len(b) for epoch in plan for b in epoch),
        steps=sum(len(epoch) for epoch in plan),
        seconds=seconds,
        first_loss=losses[0] if losses else math.nan,
        last_loss=float(np.mean(losses[-5:])) if losses else math.nan,
        options=options,
        held_out_probes=len(measured["similarities"]) if measured else 0,
        held_out_median=float(np.median(measured["similarities"])) if measured else None,
    )
    _write_model(files, model.numpy_weights(), target, report, label, measured)
    return report


def _plan(groups: list[list[str]], options: AdaptOptions) -> list[list[list[tuple[int, str, str]]]]:
    """The batches of every epoch, drawn from a fresh ``random.Random(seed)`` (so a run is reproducible)."""
    rng = random.Random(options.seed)
    return [_batches(_pairs(groups, options, rng), options.batch_size) for _ in range(options.epochs)]


def _train(
    model: _TorchBert,
    plan: list[list[list[tuple[int, str, str]]]],
    groups: list[list[str]],
    options: AdaptOptions,
    pieces: WordPieces,
    torch: Any,
    progress: Callable[[int, int], None] | None,
    done: int,
    total: int,
) -> list[float]:
    """Run ``plan`` on ``model`` (AdamW, 10 % linear warm-up then linear decay); the losses of every step."""
    torch.manual_seed(options.seed)
    steps = sum(len(epoch) for epoch in plan)
    optimizer = torch.optim.AdamW(list(model.params.values()), lr=options.learning_rate, weight_decay=0.01)
    warmup = max(1, math.ceil(0.1 * steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / warmup) * max(0.0, (steps - step) / steps)
    )
    members = [set(group) for group in groups]
    losses: list[float] = []
    for epoch in plan:
        for batch in epoch:
            anchors = _encode(model, pieces, [item[1] for item in batch], torch, train=True)
            positives = _encode(model, pieces, [item[2] for item in batch], torch, train=True)
            logits = options.scale * anchors @ positives.T
            labels = torch.arange(len(batch))
            forward, backward = _shared_masks(batch, members, torch)
            loss = (
                torch.nn.functional.cross_entropy(logits.masked_fill(forward, -1e4), labels)
                + torch.nn.functional.cross_entropy(logits.T.masked_fill(backward, -1e4), labels)
            ) / 2
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(float(loss.detach()))
            done += 1
            if progress is not None:
                progress(done, total)
    return losses


def _measure_held_out(
    model: _TorchBert,
    pieces: WordPieces,
    groups: list[list[str]],
    held: list[tuple[int, str]],
    options: AdaptOptions,
    torch: Any,
) -> dict[str, Any]:
    """With the encoder trained without ``held``: each held-out example's best cosine to every other text of the
    rulebook (:func:`probe_similarities`; at most :data:`MAX_PROBES` of them, :func:`pick_probes`), rounded to 4
    digits, and what a reader needs beside them (the ``held_out`` record of ``norma_adapted.json``); ``by_rule``:
    the same probes split by owner (:func:`probe_similarities_by_owner`: [best to another text of its rule, best to
    another rule's text], None where there is none), keyed by the CRC-32 key of its rule's first text."""
    texts = sorted({t for group in groups for t in group})
    vectors = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, len(texts), 64):
            chunk = texts[start : start + 64]
            vectors[start : start + len(chunk)] = _encode(model, pieces, chunk, torch, train=False).numpy()
    row = {text: i for i, text in enumerate(texts)}
    probes = pick_probes(((t, t) for t in {text for _, text in held}), MAX_PROBES)
    similarities = [round(float(v), 4) for v in probe_similarities(vectors, texts, [row[t] for t in probes])]
    group_of = {text: index for index, text in held}
    owner: dict[str, int] = {}
    for index, group in enumerate(groups):
        for text in group:
            owner.setdefault(text, index)
    own, other = probe_similarities_by_owner(
        vectors, texts, [row[t] for t in probes], np.array([owner[t] for t in texts], dtype=np.intp)
    )
    by_rule: dict[str, list[list[float | None]]] = {}
    for text, mine, theirs in zip(probes, own.tolist(), other.tolist(), strict=True):
        key = str(text_key(groups[group_of[text]][0]))
        by_rule.setdefault(key, []).append([_rounded(mine), _rounded(theirs)])
    return {
        "share": options.holdout,
        "probes": len(similarities),
        "examples": len(held),
        "rules": len(groups),
        "similarities": sorted(similarities),
        "texts": len(texts),
        "sketch": sorted({text_key(t) for t in texts})[:_SKETCH_SIZE],
        "by_rule": by_rule,
    }


def _rounded(value: float) -> float | None:
    return round(value, 4) if math.isfinite(value) else None


def _write_model(
    files: ModelFiles,
    weights: dict[str, np.ndarray],
    target: Path,
    report: AdaptReport,
    label: str,
    held_out: dict[str, Any] | None,
) -> None:
    """Write the model folder beside ``target`` and move it in place (the old folder, if any, goes last)."""
    from safetensors.numpy import save_file

    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for name in _COPIED:
            source = files.directory / name
            if source.is_file():
                shutil.copy2(source, staging / name)
        pooling = files.directory / "1_Pooling"
        if pooling.is_dir():
            shutil.copytree(pooling, staging / "1_Pooling")
        save_file(weights, str(staging / "model.safetensors"), metadata={"format": "pt"})
        record = {
            "made_by": "norma adapt",
            "made_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "label": label,
            "base_model_id": files.model_id,
            "base_fingerprint": files.fingerprint,
            **{k: v for k, v in report.to_dict().items() if k != "directory"},
        }
        if held_out is not None:
            record["held_out"] = held_out
        (staging / ADAPTED_FILE).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            target.rename(old)
        staging.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
