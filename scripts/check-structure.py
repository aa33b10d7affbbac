#!/usr/bin/env python3
"""Checks two structural rules of the workspace (docs/ARCHITECTURE.md), and exits 1 when either fails:

1. No library source file is over 800 lines (tests aside: `tests.rs` files, `tests/` folders and a
   file's inline test module).
2. The top-level modules of the `toolsmith` crate import one another in one direction: the graph of
   `crate::<module>` references in code (doc comments and comments aside) has no cycle. A file
   compiled into two modules with `#[path]` counts for the module that declares it.

    python3 scripts/check-structure.py
"""
from __future__ import annotations

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_LINES = 800
LIB = os.path.join(ROOT, 'crates', 'toolsmith', 'src')


def library_files() -> list[str]:
    out = []
    crates = os.path.join(ROOT, 'crates')
    for crate in sorted(os.listdir(crates)):
        src = os.path.join(crates, crate, 'src')
        for folder, dirs, files in os.walk(src):
            dirs[:] = [d for d in dirs if d != 'tests']
            out.extend(os.path.join(folder, f) for f in files if f.endswith('.rs') and f != 'tests.rs')
    return sorted(out)


def long_files() -> list[str]:
    problems = []
    for path in library_files():
        with open(path, encoding='utf-8') as f:
            lines = f.read().split('\n')
        # Tests aside: a file's inline test module (`#[cfg(test)]` at the top level) is not counted.
        n = next((i for i, line in enumerate(lines) if line.startswith('#[cfg(test)]')), len(lines))
        if n > MAX_LINES:
            problems.append(f'{os.path.relpath(path, ROOT)}: {n} lines (at most {MAX_LINES}: split it by concern)')
    return problems


CRATE_PATH = re.compile(r'\bcrate::([a-z_][a-z0-9_]*)')
USE_GROUP = re.compile(r'\buse\s+crate::\{([^;]*)\}', re.S)


def code_of(text: str) -> str:
    """The text without comments (line, doc and block comments) and string literals."""
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    lines = []
    for line in text.splitlines():
        line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
        i = line.find('//')
        lines.append(line if i < 0 else line[:i])
    return '\n'.join(lines)


def top_module(path: str) -> str:
    rel = os.path.relpath(path, LIB)
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith('.rs') else first


def module_graph() -> dict[str, set[str]]:
    modules = {top_module(os.path.join(LIB, e)) for e in os.listdir(LIB) if e.endswith('.rs') or os.path.isdir(os.path.join(LIB, e))}
    modules.discard('lib')
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for folder, dirs, files in os.walk(LIB):
        dirs[:] = [d for d in dirs if d != 'tests']
        for f in files:
            if not f.endswith('.rs') or f == 'tests.rs':
                continue
            path = os.path.join(folder, f)
            here = top_module(path)
            if here == 'lib':
                continue
            with open(path, encoding='utf-8') as fh:
                code = code_of(fh.read())
            # Test modules inside a file are not part of the library's structure.
            cut = code.find('#[cfg(test)]')
            if cut >= 0:
                code = code[:cut]
            targets = set(CRATE_PATH.findall(code))
            for group in USE_GROUP.findall(code):
                targets.update(re.findall(r'(?:^|[,{\s])([a-z_][a-z0-9_]*)\s*(?:::|,|\}|$)', group))
            for t in targets:
                if t in graph and t != here:
                    graph[here].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main() -> int:
    problems = long_files()
    graph = module_graph()
    for comp in cycles(graph):
        edges = [f'{a} -> {b}' for a in comp for b in sorted(graph[a]) if b in comp]
        problems.append('toolsmith modules import each other in a circle: ' + ', '.join(edges))
    for p in problems:
        print(p)
    print(f'structure: {len(library_files())} library files, {len(graph)} top-level modules, {len(problems)} problems')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
