"""Adapting the encoder to a rulebook (``adapt_encoder``, ``norma rules adapt``): the real model, real torch."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from norma.embeddings import (
    ADAPTED_FILE,
    MODEL_DIR_ENV,
    THREADS_ENV,
    AdaptOptions,
    BertEmbedder,
    CachedEmbedder,
    EmbeddingCache,
    adapt_encoder,
    adapted_info,
)
from norma.embeddings._adapt import _held_out
from norma.errors import ConfigError, InvalidInputError, MissingDependencyError
from norma.matching import (
    CalibratedGate,
    ConfidenceGate,
    HeldOut,
    Rule,
    RuleMatcher,
    diagnose_rulebook,
    read_held_out,
)
from norma.matching._gate import default_held_out
from tests.conftest import CliResult

pytestmark = [pytest.mark.model, pytest.mark.slow]

Run = Callable[..., CliResult]

GROUPS = [
    ["The user lost their bank card", "I lost my card", "my debit card is gone", "can't find my card anywhere"],
    ["The user wants a refund", "give me my money back", "I want to return this and get refunded", "refund please"],
    ["The user asks about the weather", "will it rain tomorrow", "how hot is it today", "is it sunny outside"],
]
# few steps, a high rate: enough to move the vectors measurably in a second or two
QUICK = AdaptOptions(epochs=3, learning_rate=2e-4, pairs_per_text=2, threads=1)
# the cheapest run (a sixth of QUICK's steps): for what holds of any run, whatever it learnt (seeds, replacing)
ONE = AdaptOptions(epochs=1, pairs_per_text=1, threads=1)


# 8 rules with 10 examples each: 3 held out per rule (30 %), 24 in all, enough for a stored gate
PHRASES = [
    "block my lost card", "get a refund", "check the weather", "book a table", "reset my password",
    "change my address", "cancel my flight", "track my parcel",
]  # fmt: skip
OPENERS = [
    "please", "hi, I need to", "can you", "I want to", "help me", "urgent:", "how do I", "is it possible to",
    "quick question, can I", "hello, I would like to",
]  # fmt: skip
GATE_GROUPS = [[f"The user wants to {phrase}.", *(f"{o} {phrase}" for o in OPENERS)] for phrase in PHRASES]
GATED = AdaptOptions(epochs=1, learning_rate=1e-4, pairs_per_text=1, threads=1)


def _margin(embedder: BertEmbedder) -> float:
    """Mean cosine within a group minus mean cosine across groups."""
    texts = [t for g in GROUPS for t in g]
    owner = np.array([i for i, g in enumerate(GROUPS) for _ in g])
    vectors = embedder.embed(texts)
    sims = vectors @ vectors.T
    same = owner[:, None] == owner[None, :]
    off = ~np.eye(len(texts), dtype=bool)
    return float(sims[same & off].mean() - sims[~same].mean())


@pytest.fixture(scope="module")
def adapted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("adapted") / "encoder"
    adapt_encoder(GROUPS, out, options=QUICK, label="three rules")
    return out


@pytest.fixture(scope="module")
def one_epoch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one-epoch") / "encoder"
    adapt_encoder(GROUPS, out, options=ONE)
    return out


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("gated") / "encoder"
    report = adapt_encoder(GATE_GROUPS, out, options=GATED, label="eight rules")
    assert report.held_out_probes == 24
    return out


def _gate_rules() -> list[Rule]:
    return [Rule(id=f"r{i}", condition_text=group[0], examples=group[1:]) for i, group in enumerate(GATE_GROUPS)]


def _held(model_dir: Path) -> HeldOut:
    held = read_held_out(model_dir)
    assert held is not None
    return held


def test_held_out_examples_are_a_fixed_share_and_never_the_rule_text() -> None:
    ten = [f"example {k}" for k in range(10)]
    groups = [["rule a", "a1", "a2", "a3", "a4"], ["rule b", "b1"], ["rule c", *ten]]
    held = _held_out(groups, 0.3)
    assert sorted(g for g, _ in held) == [0, 2, 2, 2]  # int(0.3 * 4) = 1, int(0.3 * 1) = 0, int(0.3 * 10) = 3
    assert all(text != groups[g][0] and text in groups[g] for g, text in held)
    shuffled = [["rule a", "a3", "a1", "a4", "a2"], ["rule b", "b1"], ["rule c", *reversed(ten)]]
    assert sorted(_held_out(shuffled, 0.3)) == sorted(held)  # chosen by the texts, not their order
    assert len(_held_out([["rule", "x1", "x2"]], 0.9)) == 1  # one example always stays
    assert _held_out(groups, 0.0) == []


def test_adapting_stores_its_held_out_examples_and_matchers_keep_the_one_decision(gated: Path) -> None:
    info = adapted_info(gated)
    assert info is not None
    assert info["held_out"]["examples"] == 24
    assert info["held_out"]["share"] == 0.3
    assert info["held_out"]["rules"] == 8
    held = _held(gated)
    similarities = list(held.similarities)
    assert len(similarities) == 24
    assert (held.rules, held.trained_texts) == (8, 88)
    assert similarities == sorted(similarities)
    assert similarities[0] >= -1.0
    assert similarities[-1] <= 1.0
    assert len(set(similarities)) > 1

    embedder = CachedEmbedder(BertEmbedder(gated), EmbeddingCache())
    matcher = RuleMatcher(_gate_rules(), embedder=embedder, gate=held)
    assert matcher.gate() == ConfidenceGate()  # no gate of its own: the same decision as the base encoder
    assert matcher.held_out is held
    result = matcher.match("please block my lost card", explain=True)
    assert result.gate == ConfidenceGate()
    assert result
    assert (result[0].rule.id, result[0].enforced) == ("r0", True)

    calibrated = CalibratedGate(0.5, "precision", messages=3, goal=0.9, model=matcher.model_id)
    matcher.set_gate(calibrated)
    assert matcher.gate() is calibrated  # a tenant's calibration comes first
    assert matcher.held_out is held  # and the encoder's held-out figures stay


def test_the_held_out_probes_are_stored_by_owner_and_give_the_adapted_matchers_statistics(gated: Path) -> None:
    from norma.embeddings import text_key
    from norma.matching._confidence import PRIOR, SHRINK

    held = _held(gated)
    assert len(held.owners) == 24  # the same probes as the gate's similarities
    keys = {text_key(group[0]): i for i, group in enumerate(GATE_GROUPS)}
    assert {key for key, _, _ in held.owners} <= set(keys)
    best = sorted(max(v for v in (own, other) if v is not None) for _, own, other in held.owners)
    assert best == pytest.approx(list(held.similarities), abs=1e-4)  # best of own and other: the gate's similarity
    embedder = CachedEmbedder(BertEmbedder(gated), EmbeddingCache())
    rules = _gate_rules()
    matcher = RuleMatcher(rules, embedder=embedder, gate=held)
    stats = matcher.stats()
    matcher.set_gate(CalibratedGate(0.5, "best_f1", 3, model=matcher.model_id))  # a tenant's calibration
    assert matcher.stats() == stats  # the encoder's own figures stay, whatever gate comes next

    def shrunk(values: list[float], prior: float) -> float:
        return (len(values) * float(np.median(values)) + SHRINK * prior) / (len(values) + SHRINK)

    assert stats.texts == 24
    assert stats.probe == pytest.approx(shrunk(best, PRIOR["probe"]), abs=1e-9)
    owns = [own for _, own, _ in held.owners if own is not None]
    book_in = shrunk(owns, PRIOR["inside"])
    first = text_key(GATE_GROUPS[0][0])
    mine = [own for key, own, _ in held.owners if key == first and own is not None]
    assert mine  # three of the first rule's ten examples were held out
    assert stats.inside["r0"] == pytest.approx(shrunk(mine, book_in), abs=1e-9)
    measured = RuleMatcher(rules, embedder=embedder).stats()  # on the texts it was trained on: they run higher
    assert measured.probe > stats.probe
    new = Rule(id="new", condition_text="The user wants a new thing.", examples=["a new thing please"])
    with_new = RuleMatcher([*rules, new], embedder=embedder, gate=held).stats()
    assert with_new.inside["new"] == pytest.approx(book_in, abs=1e-9)  # never held out: its rulebook's figure


def test_the_doctor_says_when_the_rulebook_moved_on_from_the_adapted_encoder(gated: Path) -> None:
    info = adapted_info(gated)
    assert info is not None
    assert info["held_out"]["texts"] == 88  # 8 rules x (rule text + 10 examples), all distinct
    assert len(info["held_out"]["sketch"]) == 88
    matcher = RuleMatcher(_gate_rules(), embedder=BertEmbedder(gated), gate=_held(gated))
    assert diagnose_rulebook(matcher).counts()["encoder_stale"] == 0
    others = ["pay a bill", "open an account", "order a pizza", "rent a car", "find a doctor", "learn spanish",
              "sell my house", "fix my bike"]  # fmt: skip
    new = [Rule(id=f"n{i}", condition_text=f"The user wants to {p}.", examples=[f"{o} {p}" for o in OPENERS])
           for i, p in enumerate(others)]  # fmt: skip
    matcher.upsert(new)  # 88 new texts beside the 88 it was adapted on
    stale = [f for f in diagnose_rulebook(matcher).findings if f.kind == "encoder_stale"]
    assert [(f.severity, f.rule_ids, f.numbers) for f in stale] == [("warning", (), {"trained_share": 0.5})]
    assert stale[0].message.startswith("the encoder was adapted on 50% of these rules' texts")
    matcher.remove([r.id for r in new])
    assert diagnose_rulebook(matcher).counts()["encoder_stale"] == 0
    matcher.upsert(new[:1])  # 11 new texts of 99: any share below 1 is stale
    stale = [f for f in diagnose_rulebook(matcher).findings if f.kind == "encoder_stale"]
    assert [f.numbers for f in stale] == [{"trained_share": round(88 / 99, 3)}]


def test_the_gate_run_leaves_the_final_encoder_as_without_it(
    gated: Path, tmp_path: Path, embedder: BertEmbedder
) -> None:
    plain = tmp_path / "plain"
    report = adapt_encoder(GATE_GROUPS, plain, options=AdaptOptions(**{**GATED.__dict__, "holdout": 0.0}))
    assert report.held_out_probes == 0
    assert (plain / "model.safetensors").read_bytes() == (gated / "model.safetensors").read_bytes()
    assert "held_out" not in (adapted_info(plain) or {})
    assert read_held_out(plain) is None
    # without held-out examples the statistics are measured on the rules' own texts, as with the base encoder
    unheld = RuleMatcher(_gate_rules(), embedder=BertEmbedder(plain), gate=read_held_out(plain))
    assert (unheld.gate(), unheld.held_out) == (ConfidenceGate(), None)


def test_the_stored_gate_is_read_from_the_folder_and_the_environment(
    gated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(MODEL_DIR_ENV, str(gated))
    assert default_held_out() == read_held_out(gated)  # the default embedder's folder, read without loading it
    monkeypatch.delenv(MODEL_DIR_ENV)
    assert default_held_out() is None  # the packaged all-MiniLM-L6-v2
    broken = tmp_path / "broken"
    broken.mkdir()
    record = {"made_by": "norma adapt", "gate": {"similarities": [0.5] * 19 + ["high"]}}
    (broken / ADAPTED_FILE).write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ConfigError, match="malformed gate"):
        read_held_out(broken)
    record["gate"] = {"similarities": [0.5] * 20, "sketch": ["not a key"]}
    (broken / ADAPTED_FILE).write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ConfigError, match="malformed gate"):
        read_held_out(broken)
    (broken / ADAPTED_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=f"cannot read {ADAPTED_FILE}"):
        read_held_out(broken)
    record["gate"] = {"similarities": [0.5] * 19}  # too few to be a gate
    (broken / ADAPTED_FILE).write_text(json.dumps(record), encoding="utf-8")
    assert read_held_out(broken) is None
    record["gate"] = {"similarities": [0.9, 0.5] * 10, "rules": 4, "texts": 3, "sketch": [7, 1, 3]}
    (broken / ADAPTED_FILE).write_text(json.dumps(record), encoding="utf-8")
    assert read_held_out(broken) == HeldOut((0.5,) * 10 + (0.9,) * 10, 4, 3, frozenset({1, 3, 7}))  # sorted
    # "gate" is the key an earlier norma wrote (read above); "held_out" today's, read first
    record["held_out"] = {"similarities": [0.7] * 20, "rules": 5}
    (broken / ADAPTED_FILE).write_text(json.dumps(record), encoding="utf-8")
    assert read_held_out(broken) == HeldOut((0.7,) * 20, 5)
    del record["gate"]
    (broken / ADAPTED_FILE).write_text(json.dumps(record), encoding="utf-8")
    assert read_held_out(broken) == HeldOut((0.7,) * 20, 5)
    assert read_held_out(tmp_path / "nowhere") is None
    record["held_out"] = {"similarities": [0.7] * 20, "rules": 5, "by_rule": {"12": [[0.7, 0.5], [None, 0.6]]}}
    (broken / ADAPTED_FILE).write_text(json.dumps(record), encoding="utf-8")
    assert read_held_out(broken) == HeldOut((0.7,) * 20, 5, owners=((12, 0.7, 0.5), (12, None, 0.6)))
    record["held_out"]["by_rule"] = {"twelve": [[0.7, 0.5]]}
    (broken / ADAPTED_FILE).write_text(json.dumps(record), encoding="utf-8")
    with pytest.raises(ConfigError, match="malformed by_rule"):
        read_held_out(broken)


def test_torch_encoder_equals_the_onnx_encoder(model_dir: Path, embedder: BertEmbedder) -> None:
    import torch

    from norma.embeddings._adapt import _tensors, _TorchBert
    from norma.embeddings._model_files import load_model_files
    from norma.embeddings._tokenize import WordPieces

    files = load_model_files(model_dir)
    model = _TorchBert(files, torch)
    texts = ["hello world", "I lost my card yesterday, can you block it?", "¿Dónde está mi tarjeta?"]
    with torch.no_grad():
        mine = model.encode(
            *_tensors(WordPieces(files.tokenizer_path, files.max_seq_length), texts, torch), train=False
        )
    assert np.abs(mine.numpy() - embedder.embed(texts)).max() < 1e-5


def test_encoding_in_chunks_of_similar_length_gives_the_vectors_of_the_whole_batch(
    model_dir: Path, embedder: BertEmbedder
) -> None:
    import torch

    from norma.embeddings._adapt import _CHUNK, _encode, _TorchBert
    from norma.embeddings._model_files import load_model_files
    from norma.embeddings._tokenize import WordPieces

    files = load_model_files(model_dir)
    model = _TorchBert(files, torch)
    words = [
        "please",
        "block",
        "the",
        "card",
        "I",
        "lost",
        "on",
        "the",
        "bus",
        "near",
        "the",
        "station",
        "yesterday",
        "evening",
    ]
    texts = [" ".join(words[: 1 + (7 * i) % len(words)]) for i in range(2 * _CHUNK + 3)]  # lengths out of order
    with torch.no_grad():
        chunked = _encode(model, WordPieces(files.tokenizer_path, 64), texts, torch, train=False).numpy()
    assert chunked.shape == (len(texts), 384)
    assert np.abs(chunked - embedder.embed(texts)).max() < 1e-5  # each text its own vector, in the given order


def test_adapted_model_loads_and_pulls_each_rule_together(adapted: Path, embedder: BertEmbedder) -> None:
    tuned = BertEmbedder(adapted)
    assert tuned.model_id.startswith("encoder@")
    assert tuned.model_id != embedder.model_id
    before, after = _margin(embedder), _margin(tuned)
    assert after > before + 0.05, (before, after)
    info = adapted_info(adapted)
    assert info is not None
    assert info["base_model_id"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert info["label"] == "three rules"
    assert info["groups"] == 3
    assert info["texts"] == 12
    assert info["options"]["epochs"] == 3
    assert info["last_loss"] < info["first_loss"]
    assert {p.name for p in adapted.iterdir()} >= {"config.json", "tokenizer.json", "model.safetensors", ADAPTED_FILE}


def test_same_seed_same_weights_other_seed_other_weights(one_epoch: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    adapt_encoder(GROUPS, again, options=ONE)
    assert (again / "model.safetensors").read_bytes() == (one_epoch / "model.safetensors").read_bytes()
    other = tmp_path / "other"
    adapt_encoder(GROUPS, other, options=AdaptOptions(**{**ONE.__dict__, "seed": 1}))
    assert (other / "model.safetensors").read_bytes() != (one_epoch / "model.safetensors").read_bytes()


def test_replacing_an_adapted_model_and_a_failure_leaves_the_old_one(one_epoch: Path, tmp_path: Path) -> None:
    out = tmp_path / "encoder"
    adapt_encoder(GROUPS, out, options=AdaptOptions(**{**ONE.__dict__, "seed": 1}))
    first = (out / "model.safetensors").read_bytes()
    assert first != (one_epoch / "model.safetensors").read_bytes()  # so the replacement below shows

    def stop(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        adapt_encoder(GROUPS, out, options=ONE, progress=stop)
    assert (out / "model.safetensors").read_bytes() == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["encoder"]  # no staging folder left behind
    adapt_encoder(GROUPS, out, options=ONE)
    assert (out / "model.safetensors").read_bytes() == (one_epoch / "model.safetensors").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["encoder"]


def test_bad_input_is_refused_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="at least 2 rules with 2 or more distinct texts"):
        adapt_encoder([["only one rule", "with two texts"], ["lonely"]], tmp_path / "a")
    with pytest.raises(InvalidInputError, match="not a list of texts"):
        adapt_encoder(["a string", "another"], tmp_path / "a")
    with pytest.raises(InvalidInputError, match="epochs"):
        adapt_encoder(GROUPS, tmp_path / "a", options=AdaptOptions(epochs=0))
    with pytest.raises(InvalidInputError, match="learning_rate"):
        adapt_encoder(GROUPS, tmp_path / "a", options=AdaptOptions(learning_rate=-1.0))
    for share in (1.0, -0.1, True, "0.3"):
        with pytest.raises(InvalidInputError, match="holdout"):
            adapt_encoder(GROUPS, tmp_path / "a", options=AdaptOptions(holdout=share))  # type: ignore[arg-type]
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(ConfigError, match="not empty and holds no adapted model"):
        adapt_encoder(GROUPS, busy)
    assert [p.name for p in busy.iterdir()] == ["notes.txt"]
    assert not (tmp_path / "a").exists()


def test_without_torch_the_error_says_how_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # what Python does for a module that cannot be imported
    with pytest.raises(MissingDependencyError, match="torch") as caught:
        adapt_encoder(GROUPS, tmp_path / "a")
    assert caught.value.extra == "adapt"
    assert "pip install 'norma-rules[adapt]'" in str(caught.value)
    assert not (tmp_path / "a").exists()


def test_cli_adapt_then_match_and_eval_with_it(run_cli: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(MODEL_DIR_ENV, raising=False)
    monkeypatch.setenv(THREADS_ENV, "1")  # torch's spinning threads crawl when the machine is busy
    rulebook = tmp_path / "rules.yaml"
    rulebook.write_text(
        "rules:\n"
        + "".join(
            f"  - id: r{i}\n    condition_text: {json.dumps(group[0])}\n    examples: {json.dumps(group[1:])}\n"
            for i, group in enumerate(GROUPS)
        ),
        encoding="utf-8",
    )
    out = tmp_path / "encoder"
    result = run_cli("rules", "adapt", "--rules", str(rulebook), "--out", str(out), "--epochs", "1",
                     "--learning-rate", "1e-4", "--format", "json")  # fmt: skip
    assert result.code == 0, result.err
    payload = json.loads(result.out)
    assert payload["rulebook"] == str(rulebook)
    assert payload["groups"] == 3
    assert payload["texts"] == 12
    assert payload["options"]["epochs"] == 1  # not the default 2
    assert payload["options"]["learning_rate"] == 1e-4
    assert payload["held_out_probes"] == 0  # 3 examples a rule: none held out
    assert (out / "model.safetensors").is_file()

    db = f"sqlite:///{tmp_path}/norma.db"
    assert run_cli("rules", "import", str(rulebook), "--tenant", "shop", "--db", db).code == 0
    shown = run_cli("rules", "adapt", "--tenant", "shop", "--db", db, "--out", str(tmp_path / "t"), "--epochs", "1")
    assert shown.code == 0, shown.err
    assert "encoder adapted to tenant shop" in shown.out
    assert "norma match --model-dir" in shown.out
    assert "none (too few examples" in shown.out  # 3 examples a rule: nothing held out
    assert adapted_info(tmp_path / "t")["label"] == "tenant shop"  # type: ignore[index]

    matched = run_cli("match", "--rules", str(rulebook), "--model-dir", str(out), "--format", "json",
                      "somebody took my card")  # fmt: skip
    assert matched.code == 0, matched.err
    assert json.loads(matched.out)["matches"][0]["rule_id"] == "r0"

    labelled = tmp_path / "labelled.jsonl"
    labelled.write_text(
        '{"message": "where is my card", "expected": ["r0"]}\n{"message": "money back now", "expected": ["r1"]}\n',
        encoding="utf-8",
    )
    evaluated = run_cli("rules", "eval", "--rules", str(rulebook), "--model-dir", str(out), "--messages",
                        str(labelled), "--format", "json")  # fmt: skip
    assert evaluated.code == 0, evaluated.err
    assert json.loads(evaluated.out)["accuracy_at_1"] == 1.0
    assert MODEL_DIR_ENV not in os.environ  # --model-dir holds for the command only


def test_cli_adapt_refuses_bad_sources(run_cli: Run, tmp_path: Path) -> None:
    both = run_cli("rules", "adapt", "--out", str(tmp_path / "x"))
    assert both.code == 2
    assert "--rules FILE or --tenant TENANT" in both.err
    empty = run_cli("rules", "adapt", "--tenant", "nobody", "--db", f"sqlite:///{tmp_path}/none.db",
                    "--out", str(tmp_path / "x"))  # fmt: skip
    assert empty.code == 2
    assert "no store" in empty.err.lower() or "not found" in empty.err.lower()
    assert not (tmp_path / "x").exists()


def test_cli_defaults_are_the_library_defaults() -> None:
    from norma.cli._adapt import _DEFAULTS

    defaults = AdaptOptions()
    assert {
        "epochs": defaults.epochs,
        "learning_rate": defaults.learning_rate,
        "seed": defaults.seed,
        "holdout": defaults.holdout,
    } == _DEFAULTS
