#!/usr/bin/env python3
"""Differential fuzzer: generated scenarios on the reference runner and on the project's runner.

    python fuzz.py --seed S --count N [--keep DIR] [-j JOBS] [--shrink K] [--shrink-dir DIR]
    python fuzz.py --shrink-file SCENARIO.json [--shrink-dir DIR]

Run it with the reference venv's python (scripts/differential.sh does). For each index 0..N-1 it
generates a valid scenario for (S, index) (generate.py; the reference runner is imported once per
process, reference_batch.py), writes NAME.json and the reference runner's NAME.expected.json (into
--keep DIR, else a temporary folder), runs the project's runner (`--runner`, default
target/release/conformance) on NAME.json and compares the two results with the rules of
../shared/conformance/compare.py (its `diff` function). It prints one FAIL line per difference,
the failures grouped by the path of their first difference, the failing names, and closes with
`N passed, M failed`. The exit status is 1 when a scenario failed.

--shrink K shrinks up to K failures (one per group of first-difference path first) with shrink.py,
re-running the reference on each candidate, and writes NAME_min.json with its reference
NAME_min.expected.json into --shrink-dir (default target/differential/shrunk).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import generate as gen  # noqa: E402
import reference_batch  # noqa: E402
import shrink as shrinker  # noqa: E402

SHARED = os.path.join(os.path.dirname(ROOT), 'shared', 'conformance')


def load_compare(path: str | None = None) -> Any:
    path = path or os.environ.get('CONFORMANCE_COMPARE', os.path.join(SHARED, 'compare.py'))
    spec = importlib.util.spec_from_file_location('conformance_compare', path)
    if spec is None or spec.loader is None:
        raise ImportError(f'cannot import {path}')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def signature(first_diff: str) -> str:
    """A failure's group: the JSON path of its first difference, indices and ids blurred."""
    path = first_diff.split(':', 1)[0]
    path = re.sub(r'\[\d+\]', '[]', path)
    return path


def shrink_signature(first_diff: str) -> str:
    """What a shrunk scenario must keep: the path and the start of the difference, numbers blurred."""
    path, _, detail = first_diff.partition(': ')
    return signature(path) + ': ' + re.sub(r'\d+', 'N', detail)[:48]


class Worker:
    """Everything one process needs: the reference runner, the comparison, the project's runner."""

    def __init__(self, runner: str, reference: str | None, compare_path: str | None, recheck: int = 0) -> None:
        self.recheck = recheck
        self.stats = gen.Stats()
        self.ref = gen.Reference(reference_batch.load_reference(reference), self.stats)
        self.compare = load_compare(compare_path)
        self.runner = runner

    def expected(self, sc: dict[str, Any]) -> tuple[str | None, str | None]:
        """(expected text, refusal): the reference result, or why the reference does not accept sc."""
        result, _, err = self.ref.execute(sc)
        if err is not None or result is None:
            return None, err or 'no result'
        return reference_batch.render(self.ref.ref.normalise_ids(result)), None

    def actual(self, path: str) -> tuple[Any, str | None]:
        try:
            proc = subprocess.run([self.runner, path], capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return None, 'runner timed out after 120 s'
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ['']
            return None, f'runner exited with {proc.returncode}: {tail[0][:300]}'
        try:
            return json.loads(proc.stdout), None
        except ValueError as e:
            return None, f'runner output is not JSON: {e}'

    def diffs(self, sc: dict[str, Any], expected_text: str, folder: str) -> list[str]:
        path = os.path.join(folder, sc['name'] + '.json')
        write_json(path, sc)
        actual, err = self.actual(path)
        if err is not None:
            return [f'$: ERROR {err}']
        expected = json.loads(expected_text)
        return self.compare.diff(expected, actual, limit=self.compare.MAX_DIFFS)


def write_json(path: str, value: Any) -> None:
    with open(path, 'w', encoding='utf-8') as f:
        f.write(json.dumps(value, indent=1, ensure_ascii=False) + '\n')


_W: Worker | None = None


def _init(runner: str, reference: str | None, compare_path: str | None, recheck: int = 0) -> None:
    global _W
    _W = Worker(runner, reference, compare_path, recheck)


def _one(job: tuple[int, int, str]) -> dict[str, Any]:
    seed, index, folder = job
    assert _W is not None
    t0 = time.monotonic()
    rejected_before = _W.stats.rejected
    reasons_before = len(_W.stats.reasons)
    try:
        sc = gen.generate(_W.ref, seed, index)
    except RuntimeError as e:
        return {'name': f'fz{seed}_{index:05d}', 'status': 'GENERATOR', 'detail': str(e), 'rejected': _W.stats.rejected - rejected_before}
    expected, refusal = _W.expected(sc)
    out: dict[str, Any] = {
        'name': sc['name'],
        'rejected': _W.stats.rejected - rejected_before,
        'reasons': _W.stats.reasons[reasons_before:],
    }
    if expected is None:
        out.update(status='GENERATOR', detail=f'the reference refused the final scenario: {refusal}')
        return out
    with open(os.path.join(folder, sc['name'] + '.expected.json'), 'w', encoding='utf-8', newline='\n') as f:
        f.write(expected)
    for _ in range(_W.recheck):
        again, _ = _W.expected(sc)
        if again != expected:
            write_json(os.path.join(folder, sc['name'] + '.json'), sc)
            out.update(status='UNSTABLE', detail='the reference runner gave two different results (timing-dependent scenario: a generator bug)')
            return out
    diffs = _W.diffs(sc, expected, folder)
    out['seconds'] = round(time.monotonic() - t0, 3)
    if diffs:
        out.update(status='FAIL', detail=diffs[0] + (f' (+{len(diffs) - 1} more)' if len(diffs) > 1 else ''), signature=signature(diffs[0]))
    else:
        out['status'] = 'PASS'
    return out


def shrink_one(w: Worker, sc: dict[str, Any], out_dir: str, scratch: str) -> tuple[dict[str, Any], str, str] | None:
    """Shrink sc while its first difference keeps the same signature; write NAME_min(.expected).json."""
    expected, _ = w.expected(sc)
    if expected is None:
        return None
    d = w.diffs(sc, expected, scratch)
    if not d:
        return None
    target = shrink_signature(d[0])

    def still_fails(cand: dict[str, Any]) -> bool:
        if gen.nondeterminism(cand) is not None:
            return False
        exp, refusal = w.expected(cand)
        if exp is None:
            return False
        cd = w.diffs(cand, exp, scratch)
        return bool(cd) and shrink_signature(cd[0]) == target

    small = shrinker.shrink(sc, still_fails)
    small['name'] = sc['name'] + '_min'
    exp, _ = w.expected(small)
    assert exp is not None
    dd = w.diffs(small, exp, scratch)
    small['note'] = f"minimized from {sc['name']}; first difference: {dd[0] if dd else '(none)'}"
    os.makedirs(out_dir, exist_ok=True)
    write_json(os.path.join(out_dir, small['name'] + '.json'), small)
    exp, _ = w.expected(small)
    assert exp is not None
    with open(os.path.join(out_dir, small['name'] + '.expected.json'), 'w', encoding='utf-8', newline='\n') as f:
        f.write(exp)
    return small, exp, dd[0] if dd else ''


def _check(job: tuple[str, str]) -> dict[str, Any]:
    path, scratch = job
    assert _W is not None
    with open(path, encoding='utf-8') as f:
        sc = json.load(f)
    with open(path[: -len('.json')] + '.expected.json', encoding='utf-8') as f:
        expected = f.read()
    name = os.path.basename(path)[: -len('.json')]
    sc['name'] = name
    diffs = _W.diffs(sc, expected, scratch)
    if diffs:
        return {'name': name, 'status': 'FAIL', 'detail': diffs[0] + (f' (+{len(diffs) - 1} more)' if len(diffs) > 1 else ''), 'signature': signature(diffs[0])}
    return {'name': name, 'status': 'PASS'}


def check_dir(args: argparse.Namespace) -> int:
    """Compare the kept pairs of a folder again (after an engine change), without generating."""
    files = reference_batch.scenario_files([args.check_dir])
    with tempfile.TemporaryDirectory(prefix='differential-check-') as scratch:
        jobs = [(f, scratch) for f in files]
        if args.jobs > 1:
            import multiprocessing

            reference_batch.load_reference(args.reference)
            with multiprocessing.get_context('fork').Pool(args.jobs, initializer=_init, initargs=(args.runner, args.reference, args.compare)) as pool:
                results = list(pool.imap(_check, jobs, chunksize=4))
        else:
            _init(args.runner, args.reference, args.compare)
            results = [_check(j) for j in jobs]
    failed = [r for r in results if r['status'] != 'PASS']
    if not args.quiet:
        for r in failed:
            print(f"{r['status']} {r['name']}: {r['detail']}")
    if failed:
        print('failing: ' + ' '.join(r['name'] for r in failed))
    print(f'{len(results) - len(failed)} passed, {len(failed)} failed')
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description='Differential fuzzing: the reference runner against the project runner.')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--count', type=int, default=100)
    parser.add_argument('--start', type=int, default=0, help='first index (default 0)')
    parser.add_argument('--keep', default=None, help='folder for the generated NAME.json / NAME.expected.json (kept)')
    parser.add_argument('-j', '--jobs', type=int, default=1, help='worker processes (default 1)')
    parser.add_argument('--runner', default=os.environ.get('CONFORMANCE_RUNNER', os.path.join(ROOT, 'target', 'release', 'conformance')))
    parser.add_argument('--reference', default=None, help='run_pydantic_ai.py (default ../shared/conformance/reference)')
    parser.add_argument('--compare', default=None, help='compare.py (default ../shared/conformance/compare.py)')
    parser.add_argument('--shrink', type=int, default=0, metavar='K', help='shrink up to K failures (one per group first)')
    parser.add_argument('--shrink-dir', default=os.path.join(ROOT, 'target', 'differential', 'shrunk'))
    parser.add_argument('--shrink-file', default=None, metavar='SCENARIO.json', help='only shrink this scenario')
    parser.add_argument('--recheck', type=int, default=0, metavar='K', help='run the reference K more times per scenario; a scenario whose result changes is UNSTABLE')
    parser.add_argument('--check-dir', default=None, metavar='DIR', help='only compare the NAME.json / NAME.expected.json pairs of DIR (no generation)')
    parser.add_argument('-q', '--quiet', action='store_true', help='no FAIL lines, only the summary')
    args = parser.parse_args(argv)

    if not os.access(args.runner, os.X_OK):
        print(f'no runner at {args.runner} (cargo build --release -p conformance)', file=sys.stderr)
        return 2

    if args.shrink_file:
        w = Worker(args.runner, args.reference, args.compare)
        with open(args.shrink_file, encoding='utf-8') as f:
            sc = json.load(f)
        with tempfile.TemporaryDirectory(prefix='differential-shrink-') as scratch:
            r = shrink_one(w, sc, args.shrink_dir, scratch)
        if r is None:
            print('no difference to shrink')
            return 0
        print(f"{r[0]['name']}: {r[2]}")
        return 1

    if args.check_dir:
        return check_dir(args)

    folder = args.keep or tempfile.mkdtemp(prefix='differential-')
    os.makedirs(folder, exist_ok=True)
    jobs = [(args.seed, i, folder) for i in range(args.start, args.start + args.count)]
    t0 = time.monotonic()
    if args.jobs > 1:
        import multiprocessing

        # Import the reference once, then fork the workers (each builds its own Worker).
        reference_batch.load_reference(args.reference)
        ctx = multiprocessing.get_context('fork')
        with ctx.Pool(args.jobs, initializer=_init, initargs=(args.runner, args.reference, args.compare, args.recheck)) as pool:
            results = list(pool.imap(_one, jobs, chunksize=2))
    else:
        _init(args.runner, args.reference, args.compare, args.recheck)
        results = [_one(j) for j in jobs]
    elapsed = time.monotonic() - t0

    failed = [r for r in results if r['status'] != 'PASS']
    rejected = sum(r.get('rejected', 0) for r in results)
    if not args.quiet:
        for r in failed:
            print(f"{r['status']} {r['name']}: {r['detail']}")
    groups: dict[str, list[str]] = {}
    for r in failed:
        groups.setdefault(r.get('signature') or r['status'], []).append(r['name'])
    if groups:
        print('failures by first difference:')
        for sig, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            print(f'  {len(names):4d}  {sig}')
    reasons = [x for r in results for x in r.get('reasons', [])]
    if rejected:
        print(f'generator: {rejected} candidates refused by the reference runner (generator bugs), replaced:')
        for x in reasons[:10]:
            print(f'  {x}')
    print(f'seed {args.seed}, {len(results)} scenarios in {elapsed:.1f} s' + (f', kept in {folder}' if args.keep else ''))

    if args.shrink and failed:
        w = _W or Worker(args.runner, args.reference, args.compare)
        picked: list[dict[str, Any]] = []
        seen: set[str] = set()
        for r in failed:  # one per group first
            if r.get('signature') and r['signature'] not in seen:
                seen.add(r['signature'])
                picked.append(r)
        for r in failed:
            if r not in picked:
                picked.append(r)
        with tempfile.TemporaryDirectory(prefix='differential-shrink-') as scratch:
            for r in picked[: args.shrink]:
                with open(os.path.join(folder, r['name'] + '.json'), encoding='utf-8') as f:
                    sc = json.load(f)
                res = shrink_one(w, sc, args.shrink_dir, scratch)
                if res is not None:
                    print(f"shrunk {r['name']} -> {args.shrink_dir}/{res[0]['name']}.json: {res[2][:200]}")

    if failed:
        print('failing: ' + ' '.join(r['name'] for r in failed))
    print(f'{len(results) - len(failed)} passed, {len(failed)} failed')
    if not args.keep:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
