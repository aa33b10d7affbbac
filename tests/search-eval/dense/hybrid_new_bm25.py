"""Dense (all-MiniLM-L6-v2) and rank-fusion hybrids against the library's BM25 ranking (the default
strategy), on four catalogues (A mcp-servers, B openapi, C bfcl, D stripe).

Run (see README.md for the environment):
  OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 VENV/bin/python tests/search-eval/dense/hybrid_new_bm25.py

Environment (defaults in brackets):
  TOOLSMITH [target/release/toolsmith]  the CLI whose `search --strategy bm25 --k 200` is the baseline
  CAT_A, CAT_B, CAT_D [tests/search-eval/{mcp-servers,openapi,stripe}]
  CAT_C [../shared/search-eval beside the checkout]
  SEM_CACHE [$TMPDIR/toolsmith-dense/cache]  embeddings (computed if absent)
  SEM_RUNS [$TMPDIR/toolsmith-dense/runs]    the CLI's rankings, bm25new_<cat>.jsonl
  REUSE_RUNS [0]             1 = use existing bm25new_<cat>.jsonl instead of running the CLI

Only rank-based fusion (the CLI prints no scores): RRF k=60, BM25 weight 1, dense weight
w in {0.25, 0.5, 1}, over the "full" and "short" tool texts of eval_dense.py, each list cut at 200.
Selection rule fixed in advance: the mean of R@5 and MRR@10 over A and C (equal weight);
B and D are held out. Writes results_hybrid_new.json into SEM_RUNS and prints the markdown tables.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The environment (one thread, offline model), the paths, tool texts, model, embedding and
# caching, metrics and bootstrap: all from eval_dense.
import eval_dense as ed  # noqa: E402

import numpy as np  # noqa: E402

REPO, WORK = ed.REPO, ed.WORK

TOOLSMITH = os.environ.get("TOOLSMITH", os.path.join(REPO, "target", "release", "toolsmith"))
CATS = {
    "A": ("mcp-servers", os.environ.get("CAT_A", os.path.join(REPO, "tests", "search-eval", "mcp-servers"))),
    "B": ("openapi", os.environ.get("CAT_B", os.path.join(REPO, "tests", "search-eval", "openapi"))),
    "C": ("bfcl (shared)", os.environ.get("CAT_C", os.path.join(REPO, "..", "shared", "search-eval"))),
    "D": ("stripe", os.environ.get("CAT_D", os.path.join(REPO, "tests", "search-eval", "stripe"))),
}
CACHE = os.environ.get("SEM_CACHE", os.path.join(WORK, "cache"))
RUNS = os.environ.get("SEM_RUNS", os.path.join(WORK, "runs"))
os.makedirs(CACHE, exist_ok=True)
os.makedirs(RUNS, exist_ok=True)
ed.CACHE = CACHE  # eval_dense's embed_* functions read and write here
TOPN = 200
SELECT_ON = ("A", "C")
HELD_OUT = ("B", "D")
WEIGHTS = (0.25, 0.5, 1.0)
BASE = "BM25 (new CLI)"
# the new BM25's R@1/R@5/R@10/MRR@10 given in the brief: the metric code must reproduce them
EXPECTED = {"A": (.477, .744, .811, .649), "B": (.364, .706, .819, .574),
            "C": (.635, .863, .912, .762), "D": (.186, .522, .649, .365)}
KEYS = ("R@1", "R@5", "R@10", "MRR@10")


def bm25_run(cat, d):
    out = os.path.join(RUNS, f"bm25new_{cat}.jsonl")
    if os.environ.get("REUSE_RUNS") != "1" or not os.path.exists(out):
        t0 = time.perf_counter()
        with open(out, "w") as f:
            subprocess.run([TOOLSMITH, "search", "--corpus", os.path.join(d, "corpus.jsonl"),
                            "--queries", os.path.join(d, "queries.jsonl"), "--strategy", "bm25",
                            "--k", str(TOPN)], stdout=f, check=True)
        print(f"<!-- {TOOLSMITH} bm25 on {cat}: {time.perf_counter() - t0:.2f} s -->", file=sys.stderr)
    return {r["id"]: r["ranked"] for r in ed.load(out)}


def main():
    os.makedirs(CACHE, exist_ok=True)
    os.makedirs(RUNS, exist_ok=True)
    tpath = os.path.join(CACHE, "timings.json")
    timings = json.load(open(tpath)) if os.path.exists(tpath) else {}
    results, perq, nq = {}, {}, {}

    def record(meth, cat, queries, ranked):
        results.setdefault(meth, {})[cat] = ed.metrics(queries, ranked)
        perq.setdefault(meth, {})[cat] = ed.per_query(queries, ranked)

    for cat, (_, d) in CATS.items():
        tools = ed.load(os.path.join(d, "corpus.jsonl"))
        queries = ed.load(os.path.join(d, "queries.jsonl"))
        nq[cat] = (len(tools), len(queries))
        names = [t["name"] for t in tools]
        cli = bm25_run(cat, d)
        record(BASE, cat, queries, cli)
        qe = ed.embed_queries(cat, queries, timings)
        for variant in ed.VARIANTS:
            ce = ed.embed_corpus(cat, variant, tools, timings)
            ed.token_stats(cat, variant, tools, timings)
            sims = qe @ ce.T
            order = np.argsort(-sims, axis=1, kind="stable")[:, :TOPN]
            dn = {q["id"]: [names[j] for j in order[i]] for i, q in enumerate(queries)}
            record(f"dense [{variant}]", cat, queries, dn)
            for w in WEIGHTS:
                fused = {q["id"]: ed.rrf(cli[q["id"]], dn[q["id"]], 1.0, w) for q in queries}
                record(f"RRF k=60, BM25 1 : dense {w:g} [{variant}]", cat, queries, fused)
        json.dump(timings, open(tpath, "w"), indent=1)

    # reproduce the expected new-BM25 numbers
    print("### Check: new BM25 metrics against the expected values\n")
    print("| catalogue | tools | requests | R@1 | R@5 | R@10 | MRR@10 | expected | match |")
    print("|---|---|---|---|---|---|---|---|---|")
    ok = True
    for c in CATS:
        m = results[BASE][c]
        got = tuple(round(m[k], 3) for k in KEYS)
        match = all(abs(g - e) < 0.0005 + 1e-9 for g, e in zip(got, EXPECTED[c]))
        ok &= match
        print(f"| {c} | {nq[c][0]} | {nq[c][1]} | {ed.fmt(m)} | {' / '.join(f'{e:.3f}' for e in EXPECTED[c])} | "
              f"{'yes' if match else 'NO'} |")
    if not ok:
        print("\n**The metric code does not reproduce the expected BM25 numbers.**")
    json.dump({"results": results, "timings": timings}, open(os.path.join(RUNS, "results_hybrid_new.json"), "w"), indent=1)
    report(results, perq, timings)


def ci_str(meth, c, col, base_m, m):
    key = ("R@5", "MRR@10")[col]
    lo, hi = ed.boot_ci(perq_g[meth][c][:, col], perq_g[BASE][c][:, col])
    return f"{m[key] - base_m[key]:+.3f} [{lo:+.3f}, {hi:+.3f}]"


perq_g = {}


def report(results, perq, timings):
    perq_g.update(perq)
    base = results[BASE]
    print("\n### Every setting on every catalogue (Δ against the new BM25, paired-bootstrap 95% interval, 2,000 resamples)")
    for c, (label, _) in CATS.items():
        held = " — held out" if c in HELD_OUT else ""
        print(f"\n#### {c}: {label}{held}\n")
        print("| method | R@1 | R@5 | R@10 | MRR@10 | Δ R@5 [95% CI] | Δ MRR@10 [95% CI] |")
        print("|---|---|---|---|---|---|---|")
        for meth, per in results.items():
            m = per[c]
            if meth == BASE:
                print(f"| {meth} | {ed.fmt(m)} | — | — |")
            else:
                print(f"| {meth} | {ed.fmt(m)} | {ci_str(meth, c, 0, base[c], m)} | {ci_str(meth, c, 1, base[c], m)} |")

    hybrids = {k: v for k, v in results.items() if k.startswith("RRF")}
    print("\n### Hybrid settings ranked by the pre-set selection score (mean of R@5 and MRR@10, A and C equal)\n")
    print("| hybrid | sel. score A+C | B Δ R@5 | B Δ MRR@10 | D Δ R@5 | D Δ MRR@10 |")
    print("|---|---|---|---|---|---|")
    for k in sorted(hybrids, key=lambda k: -ed.sel_equal(hybrids[k])):
        p = hybrids[k]
        print(f"| {k} | {ed.sel_equal(p):.4f} | " + " | ".join(
            f"{p[c][key] - base[c][key]:+.3f}" for c in HELD_OUT for key in ("R@5", "MRR@10")) + " |")
    print(f"\nNew BM25 selection score: {ed.sel_equal(base):.4f}; "
          f"dense [full] {ed.sel_equal(results['dense [full]']):.4f}, dense [short] {ed.sel_equal(results['dense [short]']):.4f}")

    best = max(hybrids, key=lambda k: ed.sel_equal(hybrids[k]))
    print(f"\n### Chosen setting: {best}\n")
    print("| catalogue | method | R@1 | R@5 | R@10 | MRR@10 | Δ R@5 [95% CI] | Δ MRR@10 [95% CI] |")
    print("|---|---|---|---|---|---|---|---|")
    for c in CATS:
        tag = f"{c}{' (held out)' if c in HELD_OUT else ''}"
        print(f"| {tag} | new BM25 | {ed.fmt(base[c])} | | |")
        m = results[best][c]
        print(f"| {tag} | {best} | {ed.fmt(m)} | {ci_str(best, c, 0, base[c], m)} | {ci_str(best, c, 1, base[c], m)} |")
    keep = {k: v for k, v in timings.items() if "_D" in k}
    print("\nCatalogue D timings and token lengths:", json.dumps(keep, indent=1))


if __name__ == "__main__":
    main()
