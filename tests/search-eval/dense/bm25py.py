"""A Python port of toolsmith's BM25 (crates/toolsmith/src/search/bm25.rs at aec5d14), used only to
get BM25 *scores* for normalised score fusion (the CLI prints rankings, not scores).
Fields: 2 x name + description + parameter names + 0.5 x parameter text; k1 = 1.2, b = 0.75;
Snowball English (Porter 2) stems; identifier splitting with the whole word kept; digit-only
words dropped; query stop words dropped unless nothing else is left."""
import math

import snowballstemmer

STOP_WORDS = set("""a about above after again all also am an and any are as at be because been before
being below between both but by can could d did do does down during e each eg etc few for from further
g give had has have he help her here him his how i ie if in into is it its just know let like ll m may
me might more most must my need no nor not of off on once only or other our out over own per please re
s same shall she should show so some such t tell than that the their them then there these they this
those through to too under until up us use using ve very via want was we were what when where whether
which while who whom why will with would you your""".split())

MAX_SCHEMA_DEPTH = 6
MAX_ENUM_VALUES = 64


def _runs(text):
    run = []
    for c in text:
        if c.isalnum():
            run.append(c)
        elif run:
            yield "".join(run)
            run = []
    if run:
        yield "".join(run)


def words(text):
    """Lowercased words, identifiers split, the whole identifier also kept; digit-only dropped."""
    out = []
    for run in _runs(text):
        pieces = []
        start = 0
        for i in range(1, len(run)):
            p, c = run[i - 1], run[i]
            nxt = run[i + 1] if i + 1 < len(run) else None
            boundary = ((p.islower() and c.isupper()) or (p.isalpha() and c.isnumeric())
                        or (p.isnumeric() and c.isalpha())
                        or (p.isupper() and c.isupper() and nxt is not None and nxt.islower()))
            if boundary:
                pieces.append(run[start:i])
                start = i
        pieces.append(run[start:])
        if len(pieces) > 1:
            pieces.append(run)
        for piece in pieces:
            if all(ch.isnumeric() for ch in piece):
                continue
            out.append(piece.lower())
    return out


def identifier_words(name):
    """The split parts only (no whole word), for building embedding text."""
    ws = []
    for run in _runs(name):
        parts = words(run)
        ws.extend(parts[:-1] if len(parts) > 1 else parts)
    return ws


def schema_text(schema, names, text, depth=0):
    if depth > MAX_SCHEMA_DEPTH or not isinstance(schema, dict):
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, prop in props.items():
            names.append(name)
            if isinstance(prop, dict):
                d = prop.get("description")
                if isinstance(d, str):
                    text.append(d)
                vals = prop.get("enum")
                if isinstance(vals, list):
                    text.extend([v for v in vals if isinstance(v, str)][:MAX_ENUM_VALUES])
            schema_text(prop, names, text, depth + 1)
    items = schema.get("items")
    if items is not None:
        schema_text(items, names, text, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        v = schema.get(key)
        if isinstance(v, list):
            for x in v:
                schema_text(x, names, text, depth + 1)


class BM25:
    def __init__(self, tools, k1=1.2, b=0.75, weights=(2.0, 1.0, 1.0, 0.5)):
        self.stemmer = snowballstemmer.stemmer("english")
        self._stem_cache = {}
        docs = []
        for t in tools:
            names, text = [], []
            schema_text(t.get("parameters") or {}, names, text)
            fields = [t["name"], t.get("description") or "", "\n".join(names), "\n".join(text)]
            tf, length = {}, 0.0
            for field, w in zip(fields, weights):
                for word in words(field):
                    s = self.stem(word)
                    tf[s] = tf.get(s, 0.0) + w
                    length += w
            docs.append((tf, length))
        n = len(docs)
        avg = max(sum(d[1] for d in docs) / max(n, 1), 1e-6)
        df = {}
        for tf, _ in docs:
            for term in tf:
                df[term] = df.get(term, 0) + 1
        self.postings = {}
        for i, (tf, length) in enumerate(docs):
            norm = k1 * (1 - b + b * length / avg)
            for term, f in tf.items():
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                self.postings.setdefault(term, []).append((i, idf * f * (k1 + 1) / (f + norm)))
        self.n = n

    def stem(self, w):
        s = self._stem_cache.get(w)
        if s is None:
            s = self._stem_cache[w] = self.stemmer.stemWord(w)
        return s

    def query_terms(self, q):
        ws = words(q)
        keep = [w for w in ws if w not in STOP_WORDS]
        if not keep:
            keep = ws
        return sorted(set(self.stem(w) for w in keep))

    def search(self, q, k=200):
        scores = {}
        for term in self.query_terms(q):
            for doc, s in self.postings.get(term, ()):
                scores[doc] = scores.get(doc, 0.0) + s
        hits = sorted(scores.items(), key=lambda x: (-x[1], x[0]))
        return hits[:k]
