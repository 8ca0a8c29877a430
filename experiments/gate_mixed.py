"""The rulebook gate for mixed traffic: near misses (held-out intents of the same domain) and off-topic messages
(another domain's queries), chosen by minimax over the two kinds on tune draws only, reported on fresh draws.

Ran against commit b54a7ef (the library before the typed gate): check it out in a worktree and run there, after
``pip download chatterbot-corpus --no-deps -d /tmp/cc`` (the background; its text is built from the wheel)::

    PYTHONPATH=src:benchmarks .venv/bin/python experiments/gate_mixed.py build    # embed + pickle draws
    PYTHONPATH=src:benchmarks .venv/bin/python experiments/gate_mixed.py analyse  # choose and report

Conclusions (docs/design/040-matching.md, "The gate for mixed traffic"); tables: gate_mixed_tables.md.
"""

from __future__ import annotations

import glob
import itertools
import pickle
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from _devsets import banking77_subset, dev_sets, foreign, fresh_sets  # noqa: E402

BACKGROUND = HERE / "background.txt"
PICKLE = Path(sys.argv[2] if len(sys.argv) > 2 else "/tmp/gate_mixed_draws.pkl")
WHEEL_DIR = Path("/tmp/cc")
SUBSETS = ((12, 4), (25, 6), (40, 8))
K = 10  # candidates kept per message (as the harness)


# ---------------------------------------------------------------- background
def background() -> tuple[list[str], list[str]]:
    """English chatterbot-corpus statements (every line of every conversation), whitespace-normalised, deduplicated
    case-insensitively, 2-300 characters; with each text's category (its YAML file)."""
    import yaml

    wheels = sorted(WHEEL_DIR.glob("chatterbot_corpus-*.whl"))
    if not wheels:
        raise SystemExit("pip download chatterbot-corpus --no-deps -d /tmp/cc first")
    texts, cats, seen = [], [], set()
    with zipfile.ZipFile(wheels[-1]) as z:
        for name in sorted(n for n in z.namelist() if "/data/english/" in n and n.endswith(".yml")):
            data = yaml.safe_load(z.read(name).decode("utf-8"))
            for conv in data.get("conversations") or []:
                for x in conv:
                    if not isinstance(x, str):
                        continue
                    t = " ".join(x.split())
                    if not 2 <= len(t) <= 300 or t.lower() in seen:
                        continue
                    seen.add(t.lower())
                    texts.append(t)
                    cats.append(Path(name).stem)
    return texts, cats


# ---------------------------------------------------------------- draws
@dataclass
class Rec:
    name: str
    kind: str  # held-out / foreign
    dataset: str
    sims: np.ndarray  # (n, K) similarity of the ranked candidates (by final score), -inf padded
    right: np.ndarray  # (n, K) candidate is an expected rule
    inside: np.ndarray  # (n,) message expects some rule
    oracle: float
    oracle_t: float
    probes: np.ndarray
    first: np.ndarray
    second: np.ndarray
    sorted_sims: np.ndarray  # (n, K) similarities sorted descending
    bcat: np.ndarray  # (n, C) best similarity to the background texts of each category
    bgprobe: np.ndarray  # (B,) each background text's best similarity to the rulebook
    cand: np.ndarray | None = None  # (n, K) rule index of each candidate (-1 padding)
    rule_own: np.ndarray | None = None  # (R,) median leave-one-out similarity of a rule's examples to its other texts
    rule_rival: np.ndarray | None = None  # (R,) median best similarity of a rule's examples to other rules' texts
    texts_top: np.ndarray | None = None  # (n, 10) the message's 10 best similarities to single rulebook texts
    texts_same: np.ndarray | None = None  # (n, 10) whether each of those texts belongs to the nearest text's rule


def dataset_of(name: str) -> str:
    head = name.split("/")[0]
    if head == "banking77":
        return "banking77"
    if head.startswith("banking77-"):
        return "banking77-sub"
    return head


def build() -> None:
    from matching_gate import CACHE, Draw
    from norma.embeddings import CachedEmbedder, EmbeddingCache, get_embedder

    CACHE.parent.mkdir(exist_ok=True)
    embedder = CachedEmbedder(get_embedder(), EmbeddingCache(CACHE))
    texts, cats = background()
    BACKGROUND.write_text("\n".join(texts) + "\n", encoding="utf-8")
    categories = sorted(set(cats))
    cat_idx = np.array([categories.index(c) for c in cats])
    bg = np.asarray(embedder.embed(texts), dtype=np.float32)
    print(f"background: {len(texts)} texts, {len(categories)} categories", flush=True)

    tune = [*dev_sets("tune")] + [
        banking77_subset(s, "tune", kept=k, held_out=h) for k, h in SUBSETS for s in (101, 102, 103)
    ]
    fresh = fresh_sets()
    out: dict[str, list[Rec]] = {"tune": [], "fresh": []}
    started = time.time()
    for part, devs in (("tune", tune), ("fresh", fresh)):
        for dev in devs:
            for kind, d in (("held-out", dev), ("foreign", foreign(dev))):
                draw = Draw(d, embedder)
                n = len(draw.expected)
                sims = np.full((n, K), -np.inf)
                right = np.zeros((n, K), dtype=bool)
                slot = {r.id: i for i, r in enumerate(d.rules)}
                cand = np.full((n, K), -1)
                for m, (want, cands) in enumerate(zip(draw.expected, draw.ranked, strict=True)):
                    for j, c in enumerate(cands[:K]):
                        sims[m, j] = c[1]
                        right[m, j] = c[0] in want
                        cand[m, j] = slot[c[0]]
                vecs = np.asarray(embedder.embed([x.text for x in d.messages]), dtype=np.float32)
                cos = vecs @ bg.T
                bcat = np.stack([cos[:, cat_idx == c].max(axis=1) for c in range(len(categories))], axis=1)
                per_rule = [np.asarray(draw.matcher.vectors_for(r.id), dtype=np.float32) for r in d.rules]
                rulevecs = np.concatenate(per_rule)
                owner = np.concatenate([np.full(len(v), i) for i, v in enumerate(per_rule)])
                rule_own, rule_rival = np.zeros(len(per_rule)), np.zeros(len(per_rule))
                for i, v in enumerate(per_rule):
                    c = v[1:] @ rulevecs.T  # the examples (the first vector is the condition text)
                    own = c[:, owner == i].copy()
                    own[np.arange(len(own)), np.arange(len(own)) + 1] = -np.inf  # leave the example itself out
                    rule_own[i] = np.median(own.max(axis=1)) if len(own) else np.nan
                    rule_rival[i] = np.median(c[:, owner != i].max(axis=1)) if len(own) else np.nan
                bgprobe = (bg @ rulevecs.T).max(axis=1)
                tc = vecs @ rulevecs.T
                order = np.argsort(-tc, axis=1)[:, :10]
                texts_top = np.take_along_axis(tc, order, axis=1)
                texts_same = owner[order] == owner[order[:, :1]]
                out[part].append(
                    Rec(
                        d.name, kind, dataset_of(d.name), sims, right,
                        np.array([bool(e) for e in draw.expected]), draw.oracle, draw.oracle_threshold,
                        draw.probes, draw.first, draw.second, -np.sort(-sims, axis=1), bcat, bgprobe,
                        cand, rule_own, rule_rival, texts_top, texts_same,
                    )
                )
                print(f"{part} {d.name} {kind}: {n} msgs oracle {draw.oracle:.3f} "
                      f"({time.time() - started:.0f}s)", flush=True)
            with PICKLE.open("wb") as f:
                pickle.dump({"records": out, "categories": categories, "cat_idx": cat_idx}, f)
    print("done", time.time() - started)


if __name__ == "__main__":
    if sys.argv[1:2] == ["build"]:
        build()


# ---------------------------------------------------------------- evaluation
SUBSETS_BG = {
    "all": None,  # every category
    "no-money": ("money",),  # excluded categories
    "smalltalk": "ai botprofile conversations emotion gossip greetings humor psychology".split(),  # kept only
}


class Ev:
    """A record's arrays for fast evaluation of per-message limits."""

    def __init__(self, r: Rec, categories: list[str]) -> None:
        self.r = r
        self.n = len(r.inside)
        self._q: dict[float, float] = {}
        self._p: dict[float, float] = {}
        self.b: dict[str, np.ndarray] = {}
        for key, spec in SUBSETS_BG.items():
            if spec is None:
                cols = list(range(len(categories)))
            elif key == "no-money":
                cols = [i for i, c in enumerate(categories) if c not in spec]
            else:
                cols = [i for i, c in enumerate(categories) if c in spec]
            self.b[key] = r.bcat[:, cols].max(axis=1)
        self.bgcols: dict[str, np.ndarray] = {}
        s = r.sorted_sims
        self.marg = {
            "s2": r.first - r.second,
            "s3": s[:, 0] - s[:, 2],
            "mean2-5": s[:, 0] - np.where(np.isfinite(s[:, 1:5]), s[:, 1:5], np.nan).mean(axis=1),
        }
        for v in self.marg.values():
            v[~np.isfinite(v)] = 1.0

    def q(self, quantile: float | None) -> float:
        if quantile is None:
            return -np.inf
        if quantile not in self._q:
            self._q[quantile] = round(float(np.quantile(self.r.probes, quantile)), 4)
        return self._q[quantile]

    def objective(self, limits: np.ndarray | float) -> float:
        r = self.r
        lim = np.asarray(limits, dtype=float)
        if lim.ndim == 2:  # per candidate
            passing = r.sims >= lim
        else:
            passing = r.sims >= np.broadcast_to(lim, (self.n,))[:, None]
        has = passing.any(axis=1)
        idx = passing.argmax(axis=1)
        correct = has & r.right[np.arange(self.n), idx]
        acc = correct[r.inside].mean() if r.inside.any() else 0.0
        rej = (~has)[~r.inside].mean() if (~r.inside).any() else 0.0
        return float(min(acc, rej))

    def gap(self, limits: np.ndarray | float) -> float:
        return self.r.oracle - self.objective(limits)


def bgprobe_q(ev: Ev, key: str, p: float, cat_idx: np.ndarray, categories: list[str]) -> float:
    k = (key, p)
    if k not in ev._p:
        spec = SUBSETS_BG[key]
        if spec is None:
            mask = np.ones(len(cat_idx), dtype=bool)
        elif key == "no-money":
            mask = np.array([categories[c] not in spec for c in cat_idx])
        else:
            mask = np.array([categories[c] in spec for c in cat_idx])
        ev._p[k] = round(float(np.quantile(ev.r.bgprobe[mask], p)), 4)
    return ev._p[k]


# Decision rules: each returns per-message limits (the similarity the top passing candidate must reach).
def lim_single(ev: Ev, q: float) -> np.ndarray | float:
    return ev.q(q)


def lim_band(ev: Ev, q: float, band: float | None, margin: float, mkey: str = "s2") -> np.ndarray | float:
    gate = ev.q(q)
    if band is None:
        return gate
    lo = ev.q(band)
    f = ev.r.first
    lowered = (f >= lo) & (f < gate) & (ev.marg[mkey] >= margin)
    return np.where(lowered, lo, gate)


def lim_bg(ev: Ev, hi: float, lo: float | None, d: float, key: str) -> np.ndarray:
    """match iff s1 >= T_hi, or (s1 >= T_lo and s1 - b >= d)."""
    t_hi, t_lo = ev.q(hi), ev.q(lo)
    f = ev.r.first
    ok = (f >= t_lo) & (f - ev.b[key] >= d)
    return np.where(ok, min(t_lo, t_hi) if np.isfinite(t_lo) else -1.0, t_hi)


def lim_band_or_bg(ev: Ev, q, band, margin, lo, d, key) -> np.ndarray:
    a = np.asarray(lim_band(ev, q, band, margin), dtype=float) * np.ones(ev.n)
    b = lim_bg(ev, q, lo, d, key)
    return np.minimum(a, b)


def lim_band_and_bg(ev: Ev, q, band, margin, d, key) -> np.ndarray:
    gate, lo = ev.q(q), ev.q(band)
    f = ev.r.first
    lowered = (f >= lo) & (f < gate) & (ev.marg["s2"] >= margin) & (f - ev.b[key] >= d)
    return np.where(lowered, lo, gate)


def lim_relative(ev: Ev, qlo, qhi, p, key, band, margin, cat_idx, categories) -> np.ndarray | float:
    """Gate = clip(p-quantile of the background texts' best similarity to the rulebook, [G(qlo), G(qhi)]); the
    band (below the gate, at or above G(band), margin above the second rule) as usual."""
    gate = min(ev.q(qhi), max(ev.q(qlo), bgprobe_q(ev, key, p, cat_idx, categories)))
    if band is None:
        return gate
    lo = min(ev.q(band), gate)
    f = ev.r.first
    lowered = (f >= lo) & (f < gate) & (ev.marg["s2"] >= margin)
    return np.where(lowered, lo, gate)


def lim_per_rule(ev: Ev, q, beta, gamma, band, margin) -> np.ndarray:
    """Per-rule gate: G(q) + beta * (rule's own leave-one-out median - the rulebook's median of those)
    + gamma * (rule's rival median - the rulebook's median of those); with the band (per message) as usual."""
    r = ev.r
    own = np.nan_to_num(r.rule_own - np.nanmedian(r.rule_own))
    riv = np.nan_to_num(r.rule_rival - np.nanmedian(r.rule_rival))
    t_rule = ev.q(q) + beta * own + gamma * riv
    lim = np.where(r.cand >= 0, t_rule[np.maximum(r.cand, 0)], np.inf)
    if band is None:
        return lim
    lo = ev.q(band)
    lowered = (r.first >= lo) & (ev.marg["s2"] >= margin)
    return np.where(lowered[:, None], np.minimum(lim, lo), lim)


def lim_sloped(ev: Ev, q, lam, floor) -> np.ndarray:
    """Match iff s1 + lam * (s1 - s2) >= G(q) and s1 >= G(floor): per message, the limit G(q) - lam * margin."""
    lim = ev.q(q) - lam * np.minimum(ev.marg["s2"], 0.5)
    return np.maximum(lim, ev.q(floor))


def lim_purity(ev: Ev, q, lam, centre, mu, k=5) -> np.ndarray:
    """Match iff s1 + lam * (purity - centre) + mu * min(s1 - s2, 0.5) >= G(q), purity: the share of the message's
    k nearest rulebook texts that belong to its nearest text's rule."""
    purity = ev.r.texts_same[:, :k].mean(axis=1)
    return ev.q(q) - lam * (purity - centre) - mu * np.minimum(ev.marg["s2"], 0.5)


def score(evs: list[Ev], fn, params) -> tuple[float, float, dict[str, list[float]]]:
    per: dict[str, list[float]] = {}
    for ev in evs:
        per.setdefault(ev.r.kind, []).append(ev.gap(fn(ev, *params)))
    worst = max(max(v) for v in per.values())
    mean = float(np.mean([g for v in per.values() for g in v]))
    return round(worst, 6), round(mean, 6), per


def choose(evs: list[Ev], fn, grid) -> tuple[tuple, tuple[float, float]]:
    best, best_key = None, (9.0, 9.0)
    for params in grid:
        w, m, _ = score(evs, fn, params)
        if (w, m) < best_key:
            best, best_key = params, (w, m)
    return best, best_key


def rng(a: float, b: float, step: float) -> list[float]:
    return [round(x, 3) for x in np.arange(a, b + step / 2, step)]


# ---------------------------------------------------------------- analysis
DATASETS = ("banking77", "banking77-sub", "nlupp-banking", "nlupp-hotels")
KINDS = ("held-out", "foreign")


def analyse(only: set[str] | None = None) -> None:
    with PICKLE.open("rb") as f:
        data = pickle.load(f)
    categories, cat_idx = data["categories"], data["cat_idx"]
    tune = [Ev(r, categories) for r in data["records"]["tune"]]
    fresh = [Ev(r, categories) for r in data["records"]["fresh"]]
    for ev in tune[:4] + fresh[:4]:  # the vectorised objective reproduces the harness's oracle
        from matching_gate import GRID

        o = max(ev.objective(float(t)) for t in GRID)
        assert abs(o - ev.r.oracle) < 1e-9, (ev.r.name, o, ev.r.oracle)
    print(f"tune draws {len(tune)}, fresh draws {len(fresh)}; background {len(cat_idx)} texts", flush=True)

    Q = rng(0.14, 0.40, 0.02)
    BANDQ = [None, *rng(0.02, 0.20, 0.02)]
    MARG = rng(0.02, 0.15, 0.01)
    results: list[tuple[str, str, object, tuple]] = []  # (label, rule text, fn, params)

    def add(label: str, fn, params, text: str) -> None:
        results.append((label, text, fn, params))
        w, m, per = score(tune, fn, params)
        shown = tuple(x for x in params if not isinstance(x, (list, np.ndarray)))
        print(f"[{time.strftime('%H:%M:%S')}] {label}: {shown} tune worst {w:.3f} mean {m:.3f}", flush=True)

    add("1a today's default", lim_band, (0.24, 0.12, 0.09), "q 0.24, band 0.12, margin 0.09")
    p, _ = choose(tune, lim_single, [(q,) for q in rng(0.02, 0.40, 0.01)])
    add("1b best single quantile", lim_single, p, f"q {p[0]}")
    grid2 = [(q, b, m) for q in Q for b in BANDQ for m in (MARG if b is not None else (0.0,)) if b is None or b < q]
    p2, _ = choose(tune, lim_band, grid2)
    add("2 band retuned", lim_band, p2, "q {}, band {}, margin {}".format(*p2))
    for mkey in ("s3", "mean2-5"):
        grid4 = [(q, b, m, mkey) for q in Q for b in BANDQ[1:] for m in rng(0.02, 0.30, 0.01) if b < q]
        p4, _ = choose(tune, lim_band, grid4)
        add(f"4{'a' if mkey == 's3' else 'b'} band, margin s1-{mkey}", lim_band, p4, "q {}, band {}, margin {} on {}".format(*p4))

    LO = [None, *rng(0.0, 0.20, 0.02)]
    D = rng(-0.10, 0.30, 0.02)
    grid3 = [(hi, lo, d, key) for hi in Q for lo in LO for d in D for key in SUBSETS_BG if lo is None or lo < hi]
    p3, _ = choose(tune, lim_bg, grid3)
    add("3a background lo/hi", lim_bg, p3, "s1>=G({}) or (s1>=G({}) and s1-b>={}), b on {}".format(*p3))
    key = p3[3]
    grid3b = [
        (q, b, m, lo, d, key)
        for q in rng(0.18, 0.34, 0.02)
        for b in (0.04, 0.08, 0.12, 0.16)
        for m in (0.03, 0.05, 0.07, 0.09, 0.12)
        for lo in (None, 0.0, 0.04, 0.08, 0.12)
        for d in [*rng(-0.05, 0.40, 0.05), 9.0]  # 9.0: the background test never passes (the band alone)
        if b < q
    ]
    p3b, _ = choose(tune, lim_band_or_bg, grid3b)
    add("3b band OR background", lim_band_or_bg, p3b,
        "G({0}); band G({1}) margin {2}; OR s1>=G({3}) and s1-b>={4} (b: {5})".format(*p3b))
    grid3c = [
        (q, b, m, d, k)
        for q in Q
        for b in rng(0.02, 0.20, 0.02)
        for m in rng(0.02, 0.15, 0.01)
        for d in rng(-0.05, 0.25, 0.05)
        for k in (key,)
        if b < q
    ]
    p3c, _ = choose(tune, lim_band_and_bg, grid3c)
    add("3c band AND background", lim_band_and_bg, p3c,
        "G({0}); band G({1}) if margin>={2} and s1-b>={3} (b: {4})".format(*p3c))
    grid3d = [
        (qlo, qhi, pp, k, b, m, cat_idx, categories)
        for qlo in (0.02, 0.06, 0.10, 0.14)
        for qhi in (0.20, 0.24, 0.28, 0.32, 0.40)
        for pp in (0.5, 0.75, 0.9, 0.95, 0.98, 0.99, 0.995, 1.0)
        for k in SUBSETS_BG
        for b, m in ((None, 0.0), (0.06, 0.06), (0.06, 0.09), (0.10, 0.06), (0.10, 0.09), (0.02, 0.09))
        if qlo < qhi
    ]
    p3d, _ = choose(tune, lim_relative, grid3d)
    add("3d rulebook-relative background", lim_relative, p3d,
        "gate clip(P{2}(bg->rulebook, {3}), G({0}), G({1})); band {4} margin {5}".format(*p3d))

    grid4c = [
        (q, beta, gamma, b, m)
        for q in rng(0.14, 0.34, 0.02)
        for beta in (-0.5, 0.0, 0.5, 1.0)
        for gamma in (-0.5, 0.0, 0.5, 1.0)
        for b, m in ((None, 0.0), (0.06, 0.06), (0.06, 0.09), (0.10, 0.06), (0.10, 0.09), (0.10, 0.12), (0.14, 0.09))
        if b is None or b < q
    ]
    p4c, _ = choose(tune, lim_per_rule, grid4c)
    add("4c per-rule gate + band", lim_per_rule, p4c,
        "G({0}) + {1}*(own_r - med own) + {2}*(rival_r - med rival); band G({3}) margin {4}".format(*p4c))
    grid4e = [(q, lam, fl) for q in rng(0.14, 0.50, 0.02) for lam in rng(0.0, 2.0, 0.1)
              for fl in (None, 0.0, 0.02, 0.05, 0.08, 0.12)]
    p4e, _ = choose(tune, lim_sloped, grid4e)
    add("4e sloped margin", lim_sloped, p4e, "s1 + {1}*(s1-s2) >= G({0}) and s1 >= G({2})".format(*p4e))

    grid4f = [(q, lam, c, mu) for q in Q for lam in rng(0.0, 0.30, 0.05) for c in (0.0, 0.4, 0.6, 0.8, 1.0)
              for mu in (0.0, 0.2, 0.4, 0.6)]
    p4f, _ = choose(tune, lim_purity, grid4f)
    add("4f nearest-text purity", lim_purity, p4f,
        "s1 + {1}*(purity5 - {2}) + {3}*min(s1-s2, 0.5) >= G({0})".format(*p4f))

    # the per-draw floors: the best single threshold / banded gate for BOTH kinds of one draw, tuned on that draw
    from matching_gate import GRID

    grid_floor = [(q, b, m) for q in rng(0.10, 0.40, 0.02) for b in [None, *rng(0.02, 0.20, 0.04)]
                  for m in (rng(0.03, 0.15, 0.03) if b is not None else (0.0,)) if b is None or b < q]
    for part, evs in (("tune", tune), ("fresh", fresh)):
        pairs: dict[str, dict[str, Ev]] = {}
        for ev in evs:
            pairs.setdefault(ev.r.name.replace(" foreign", ""), {})[ev.r.kind] = ev
        for label, fn, grid in (("single threshold", None, GRID), ("banded gate", lim_band, grid_floor)):
            byds: dict[str, list[float]] = {}
            for p in pairs.values():
                h, f = p["held-out"], p["foreign"]
                if fn is None:
                    best = min(max(h.gap(float(t)), f.gap(float(t))) for t in grid)
                else:
                    best = min(max(h.gap(fn(h, *g)), f.gap(fn(f, *g))) for g in grid)
                byds.setdefault(h.r.dataset, []).append(best)
            every = [x for v in byds.values() for x in v]
            cells = ", ".join(f"{k} {np.mean(v):.3f}/{max(v):.3f}" for k, v in sorted(byds.items()))
            print(f"floor ({part}, {label} tuned per draw on both kinds): mean {np.mean(every):.3f} worst "
                  f"{max(every):.3f}; mean/worst {cells}", flush=True)

    # ------------------------------------------------------------ tables
    lines = ["| candidate | rule | tune worst H / F | tune mean H / F | fresh worst H / F | fresh mean H / F | "
             "fresh min(acc,rej) mean H / F |", "|---|---|---|---|---|---|---|"]
    per_ds = ["| candidate | kind | " + " | ".join(f"{d} mean / worst / obj" for d in DATASETS) + " |",
              "|---|---|" + "---|" * len(DATASETS)]
    for label, text, fn, params in results:
        _, _, tper = score(tune, fn, params)
        fper: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for ev in fresh:
            obj = ev.objective(fn(ev, *params))
            fper.setdefault((ev.r.kind, ev.r.dataset), []).append((ev.r.oracle - obj, obj))
        fk = {k: [x for (kk, _), v in fper.items() if kk == k for x in v] for k in KINDS}
        lines.append(
            f"| {label} | {text} | {max(tper['held-out']):.3f} / {max(tper['foreign']):.3f} | "
            f"{np.mean(tper['held-out']):.3f} / {np.mean(tper['foreign']):.3f} | "
            f"{max(g for g, _ in fk['held-out']):.3f} / {max(g for g, _ in fk['foreign']):.3f} | "
            f"{np.mean([g for g, _ in fk['held-out']]):.3f} / {np.mean([g for g, _ in fk['foreign']]):.3f} | "
            f"{np.mean([o for _, o in fk['held-out']]):.3f} / {np.mean([o for _, o in fk['foreign']]):.3f} |"
        )
        for k in KINDS:
            cells = []
            for d in DATASETS:
                v = np.array(fper[(k, d)])
                cells.append(f"{v[:, 0].mean():.3f} / {v[:, 0].max():.3f} / {v[:, 1].mean():.3f}")
            per_ds.append(f"| {label.split()[0]} | {k} | " + " | ".join(cells) + " |")
    print("\n".join(lines))
    print()
    print("\n".join(per_ds))
    with (HERE / "gate_mixed_tables.md").open("w") as f:
        f.write("\n".join(lines) + "\n\n" + "\n".join(per_ds) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["analyse"]:
        analyse()
