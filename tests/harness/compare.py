"""Compares toolsmith's harness capabilities with the real pydantic-ai-harness on the scenarios.

    py="$(scripts/harness-venv.sh)"
    cargo build -p toolsmith --example harness_runner
    python3 tests/harness/compare.py --runner target/debug/examples/harness_runner --python "$py"

Each scenario runs on the harness (run_harness.py, in the pinned venv) and on toolsmith (the
`harness_runner` example); the two normalised results must be equal. Without `--python` the
toolsmith result is compared with the scenario's `NAME.expected.json` (the harness's result,
written by `--update`). Prints one line per failing scenario with its first differences, then
`N passed, M failed`; exits 1 when any failed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


def diffs(a: Any, b: Any, path: str = '$') -> list[str]:
    if type(a) is not type(b):
        return [f'{path}: harness {json.dumps(a)[:300]} != toolsmith {json.dumps(b)[:300]}']
    if isinstance(a, dict):
        out = []
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                out.append(f'{path}.{k}: only in {"harness" if k in a else "toolsmith"}')
            else:
                out.extend(diffs(a[k], b[k], f'{path}.{k}'))
        return out
    if isinstance(a, list):
        out = [f'{path}: {len(a)} items (harness) != {len(b)} (toolsmith)'] if len(a) != len(b) else []
        for i, (x, y) in enumerate(zip(a, b)):
            out.extend(diffs(x, y, f'{path}[{i}]'))
        return out
    return [] if a == b else [f'{path}: harness {json.dumps(a)[:300]} != toolsmith {json.dumps(b)[:300]}']


def run(cmd: list[str]) -> Any:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return {'runner_failed': p.stderr.strip()[-2000:]}
    return json.loads(p.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument('--runner', required=True, help='the harness_runner example binary')
    ap.add_argument('--python', help="the harness venv's python (scripts/harness-venv.sh); without it, NAME.expected.json")
    ap.add_argument('--dir', default=os.path.join(HERE, 'scenarios'))
    ap.add_argument('--update', action='store_true', help='write NAME.expected.json from the harness')
    ap.add_argument('-j', type=int, default=2)
    ap.add_argument('names', nargs='*')
    args = ap.parse_args()

    names = args.names or sorted(f[:-5] for f in os.listdir(args.dir) if f.endswith('.json') and not f.endswith('.expected.json'))

    def one(name: str) -> tuple[str, list[str]]:
        path = os.path.join(args.dir, f'{name}.json')
        expected_path = os.path.join(args.dir, f'{name}.expected.json')
        if args.python:
            harness = run([args.python, os.path.join(HERE, 'run_harness.py'), path])
            if args.update and 'runner_failed' not in harness:
                with open(expected_path, 'w', encoding='utf-8') as f:
                    json.dump(harness, f, sort_keys=True, indent=1, ensure_ascii=False)
                    f.write('\n')
        else:
            with open(expected_path, encoding='utf-8') as f:
                harness = json.load(f)
        toolsmith = run([args.runner, path])
        return name, diffs(harness, toolsmith)

    failed = 0
    with ThreadPoolExecutor(max_workers=args.j) as pool:
        for name, problems in pool.map(one, names):
            if problems:
                failed += 1
                print(f'FAIL {name}')
                for line in problems[:5]:
                    print(f'  {line}')
            else:
                print(f'ok   {name}')
    print(f'{len(names) - failed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
