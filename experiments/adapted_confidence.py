"""The adapted encoder under the shipped confidence, its statistics from the examples it held out (issue #56).

Iteration 11 of docs/design/040 ("One calibrated confidence"). An adapted encoder's similarities among the texts it
was trained on run higher than a message's will, so the rulebook's statistics measured on them (probe, each rule's
inside and outside) make the shipped coefficients read a right match as doubtful (iteration 10: bad answers caught
0.51 / 0.50). Here the statistics come from the cross-fitted run instead: the examples held out of a first training
(``AdaptOptions.holdout``), measured by the encoder that never saw them (``norma_adapted.json``'s ``by_rule``).

Per draw (the report draws nlupp-banking/201 and nlupp-hotels/201 of iteration 10, plus banking77-25/201 and
banking77-12/202), with norma's own matcher and the shipped decision (a rule governs from 0.7): the turn figures of
``experiments/turn_enforcement.py`` for the base encoder, the adapted one with statistics measured on its own texts
(today), and the adapted one with cross-fitted statistics; both kinds of out-of-scope traffic; ECE of the top
candidate and of all candidates. Declared before measuring: cross-fitted statistics are kept if the worst, over the
draws and kinds, of min(good not failed, bad caught, out-of-scope not failed) is above today's by 0.02 or more.

Usage: .venv/bin/python experiments/adapted_confidence.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "experiments"))

from refit import ece  # noqa: E402
from turn_enforcement import figures as turn_figures  # noqa: E402

from _devsets import DevSet, banking77_subset, dev_sets, foreign  # noqa: E402
from norma.embeddings import (  # noqa: E402
    AdaptOptions,
    BertEmbedder,
    CachedEmbedder,
    EmbeddingCache,
    adapt_encoder,
    get_embedder,
)
from norma.matching import GOVERNS, MatchConfig, RuleMatcher, read_held_out  # noqa: E402
from norma.rules import rule_texts  # noqa: E402

CACHE = REPO / ".cache" / "matching_bench.sqlite"


def measure(dev: DevSet, embedder: object, given: object | None) -> dict[str, float]:
    matcher = RuleMatcher(dev.rules, MatchConfig(threshold=None, max_matched=len(dev.rules)), embedder=embedder)
    if given is not None:
        matcher.set_gate(given)
    out: dict[str, float] = {}
    confs, rights, tops, top_rights = [], [], [], []
    for kind, messages in (
        ("held-out", dev.messages),
        ("off-topic", [m for m in foreign(dev).messages if not m.expected]),
    ):
        found = matcher.match_many([m.text for m in messages])
        chosen = []
        for labelled, result in zip(messages, found, strict=True):
            chosen.append(SimpleNamespace(
                expected=labelled.expected,
                ids=sorted(m.rule.id for m in result if m.confidence >= GOVERNS),
            ))  # fmt: skip
            for i, m in enumerate(result):
                confs.append(m.confidence)
                rights.append(m.rule.id in labelled.expected)
                if i == 0:
                    tops.append(m.confidence)
                    top_rights.append(m.rule.id in labelled.expected)
        f = turn_figures(chosen, lambda view: set(range(len(view.ids))), np.random.default_rng(7))  # type: ignore[arg-type]
        if kind == "held-out":
            out.update(good=f["good"], bad=f["bad"], multi=f["multi"], near=f["oos"])
        else:
            out["off"] = f["oos"]
    out["ece"] = ece(np.array(confs), np.array(rights, dtype=float))
    out["top_ece"] = ece(np.array(tops), np.array(top_rights, dtype=float))
    out["worst"] = min(out["good"], out["bad"], out["near"], out["off"])
    return out


def main() -> None:
    base = CachedEmbedder(get_embedder(), EmbeddingCache(str(CACHE)))
    draws = [d for d in dev_sets("report") if d.name in ("nlupp-banking/201", "nlupp-hotels/201")]
    draws += [
        banking77_subset(201, "report", kept=25, held_out=6),
        banking77_subset(202, "report", kept=12, held_out=4),
    ]
    print(
        "| draw | encoder | good not failed | bad caught | multi missing one | near misses not failed | "
        "off-topic not failed | worst | ECE all / top |"
    )
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    for dev in draws:
        folder = Path(tempfile.mkdtemp(prefix="adapted-"))
        try:
            started = time.perf_counter()
            adapt_encoder([rule_texts(rule) for rule in dev.rules], folder / "model", options=AdaptOptions())
            took = time.perf_counter() - started
            held = read_held_out(folder / "model")
            assert held is not None, "no held-out figures stored"
            assert held.owners, "no cross-fitted figures stored"
            adapted = CachedEmbedder(BertEmbedder(folder / "model"), EmbeddingCache())
            rows = (
                ("base", base, None),
                (f"adapted, own texts ({took:.0f} s)", adapted, replace(held, owners=())),
                ("adapted, cross-fitted", adapted, held),
            )
            for name, embedder, given in rows:
                f = measure(dev, embedder, given)
                print(
                    f"| {dev.name} | {name} | {f['good']:.3f} | {f['bad']:.3f} | {f['multi']:.3f} | {f['near']:.3f} "
                    f"| {f['off']:.3f} | {f['worst']:.3f} | {f['ece']:.3f} / {f['top_ece']:.3f} |",
                    flush=True,
                )
        finally:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
