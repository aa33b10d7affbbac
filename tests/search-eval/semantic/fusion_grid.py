"""Scores reciprocal-rank fusions of two rankings of the same requests, over a grid of settings.

    python3 fusion_grid.py QUERIES.jsonl LEXICAL.jsonl DENSE.jsonl [--json]

LEXICAL and DENSE are `toolsmith search --k 100` outputs (one `{"id", "ranked"}` line per
request, in the order of QUERIES). For each dense weight w in WEIGHTS and RRF constant k in KS,
each tool scores 1/(k + BM25 rank) + w/(k + dense rank) (ranks from 1, over each list's first
DEPTH), ties to the tool ranked better by BM25 then by the dense list, as the library's fusion
breaks them by catalogue position. Prints R@1, R@5, R@10 and MRR@10 per setting, as
`toolsmith search-eval` computes them.
"""
import json
import sys

WEIGHTS = [0.0, 0.25, 0.5, 0.75, 1.0, 1.5]
KS = [60]
DEPTH = 100


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def metrics(queries, rankings):
    r1 = r5 = r10 = mrr = 0.0
    n = 0
    for q, ranked in zip(queries, rankings):
        rel = set(q.get("relevant") or [])
        if not rel:
            continue
        n += 1
        r1 += len(rel & set(ranked[:1])) / len(rel)
        r5 += len(rel & set(ranked[:5])) / len(rel)
        r10 += len(rel & set(ranked[:10])) / len(rel)
        mrr += next((1 / (i + 1) for i, n in enumerate(ranked[:10]) if n in rel), 0.0)
    return {"r1": r1 / n, "r5": r5 / n, "r10": r10 / n, "mrr10": mrr / n}


def fuse(lexical, dense, w, k):
    scores = {}
    for r, name in enumerate(lexical[:DEPTH]):
        scores[name] = scores.get(name, 0.0) + 1 / (k + r + 1)
    for r, name in enumerate(dense[:DEPTH]):
        scores[name] = scores.get(name, 0.0) + w / (k + r + 1)
    return sorted(scores, key=lambda n: -scores[n])[:10]


def main():
    queries = load(sys.argv[1])
    lexical = [r["ranked"] for r in load(sys.argv[2])]
    dense = [r["ranked"] for r in load(sys.argv[3])]
    assert len(lexical) == len(dense) == len(queries), (len(lexical), len(dense), len(queries))
    out = {"bm25": metrics(queries, lexical), "semantic": metrics(queries, dense)}
    for k in KS:
        for w in WEIGHTS:
            out[f"rrf k={k} w={w}"] = metrics(queries, [fuse(a, b, w, k) for a, b in zip(lexical, dense)])
    if "--json" in sys.argv:
        print(json.dumps(out))
        return
    for name, m in out.items():
        print(f"{name:<18} {m['r1']:.3f} {m['r5']:.3f} {m['r10']:.3f} {m['mrr10']:.3f}")


if __name__ == "__main__":
    main()
