#!/usr/bin/env python3
"""Runs many conformance scenarios through the reference runner in one Python process.

    python reference_batch.py [--reference PATH] [--out DIR] [-j N] SCENARIO.json|DIR ...

For every scenario (a DIR stands for its NAME.json files, NAME.expected.json excluded) writes
NAME.expected.json (into --out, or beside the scenario) with exactly the bytes that
`python run_pydantic_ai.py NAME.json > NAME.expected.json` writes: the reference runner is
imported once (importing Pydantic AI takes seconds) and its `run_scenario` / `normalise_ids` are
called per scenario. A scenario on which the reference runner raises (a setup error: the runner
itself would exit with a traceback) gets no expected file; it is reported on stderr and the exit
status is 1.

Run it with the reference venv's python (the one with `pydantic-ai-slim` installed). `-j N` forks
N workers after the import.

As a module: `load_reference(path)` imports the reference runner, `run_reference(ref, scenario)`
returns the normalised result as text (what the runner prints), `run_raw(ref, scenario)` the
result before ids are normalised.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import sys
import traceback
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_REFERENCE = os.path.join(os.path.dirname(ROOT), 'shared', 'conformance', 'reference', 'run_pydantic_ai.py')


def default_reference() -> str:
    return os.environ.get('REFERENCE_RUNNER', DEFAULT_REFERENCE)


def load_reference(path: str | None = None) -> Any:
    """Import the reference runner module (once per process)."""
    path = os.path.abspath(path or default_reference())
    cached = sys.modules.get('run_pydantic_ai')
    if cached is not None and os.path.abspath(getattr(cached, '__file__', '')) == path:
        return cached
    spec = importlib.util.spec_from_file_location('run_pydantic_ai', path)
    if spec is None or spec.loader is None:
        raise ImportError(f'cannot import the reference runner {path}')
    module = importlib.util.module_from_spec(spec)
    sys.modules['run_pydantic_ai'] = module
    spec.loader.exec_module(module)
    # What the runner's main() does before running a scenario.
    warnings.simplefilter('ignore')
    return module


def run_raw(ref: Any, scenario: dict[str, Any]) -> dict[str, Any]:
    """The reference result with raw tool-call ids (before `normalise_ids`)."""
    warnings.simplefilter('ignore')
    return asyncio.run(ref.run_scenario(scenario))


def render(result: dict[str, Any]) -> str:
    """The text the runner prints for a normalised result (print adds the newline)."""
    return json.dumps(result, sort_keys=True, indent=1, ensure_ascii=False) + '\n'


def run_reference(ref: Any, scenario: dict[str, Any]) -> str:
    """The normalised result as the reference runner prints it."""
    return render(ref.normalise_ids(run_raw(ref, scenario)))


def scenario_files(args: list[str]) -> list[str]:
    files: list[str] = []
    for a in args:
        if os.path.isdir(a):
            files += sorted(
                os.path.join(a, n) for n in os.listdir(a) if n.endswith('.json') and not n.endswith('.expected.json')
            )
        else:
            files.append(a)
    return files


def expected_path(scenario_path: str, out_dir: str | None) -> str:
    name = os.path.basename(scenario_path)[: -len('.json')]
    return os.path.join(out_dir or os.path.dirname(scenario_path), name + '.expected.json')


_REF: Any = None


def _work(job: tuple[str, str | None]) -> tuple[str, str | None]:
    """Run one scenario file; return (path, error text or None)."""
    path, out_dir = job
    try:
        with open(path, encoding='utf-8') as f:
            scenario = json.load(f)
        text = run_reference(_REF, scenario)
    except Exception:  # noqa: BLE001 - reported per scenario
        return path, traceback.format_exc()
    with open(expected_path(path, out_dir), 'w', encoding='utf-8', newline='\n') as f:
        f.write(text)
    return path, None


def main(argv: list[str]) -> int:
    global _REF
    parser = argparse.ArgumentParser(description='Run many scenarios on the reference runner in one process.')
    parser.add_argument('paths', nargs='+', metavar='SCENARIO.json|DIR')
    parser.add_argument('--reference', default=None, help='path of run_pydantic_ai.py (default: ../shared beside the checkout)')
    parser.add_argument('--out', default=None, help='folder for NAME.expected.json (default: beside each scenario)')
    parser.add_argument('-j', '--jobs', type=int, default=1, help='worker processes, forked after the import (default 1)')
    parser.add_argument('-q', '--quiet', action='store_true', help='no line per scenario')
    args = parser.parse_args(argv)
    _REF = load_reference(args.reference)
    files = scenario_files(args.paths)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    jobs = [(p, args.out) for p in files]
    if args.jobs > 1 and len(jobs) > 1:
        import multiprocessing

        with multiprocessing.get_context('fork').Pool(args.jobs) as pool:
            results = list(pool.imap(_work, jobs, chunksize=4))
    else:
        results = [_work(j) for j in jobs]
    failed = 0
    for path, err in results:
        if err is None:
            if not args.quiet:
                print(f'ok {path}', flush=True)
        else:
            failed += 1
            print(f'SETUP ERROR {path}:\n{err}', file=sys.stderr, flush=True)
    print(f'{len(results) - failed} written, {failed} setup errors')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
