"""Compares the UI protocol adapters with Pydantic AI's, scenario by scenario.

    python3 compare.py --python VENV_PYTHON --runner PATH/TO/ui_differential [--scenario NAME]

Each scenario of scenarios/ runs on both sides for each protocol it has requests for (ag_ui,
vercel_ai_v5, vercel_ai_v6); the normalised event lists must be equal. Prints one line per pair,
the first difference of a failing pair, and `N passed, M failed` last; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

here = Path(__file__).parent
sys.path.insert(0, str(here))
from normalize import normalize  # noqa: E402


def first_difference(a: list, b: list) -> str:
    for t, (ta, tb) in enumerate(zip(a, b)):
        for i in range(max(len(ta), len(tb))):
            ea = ta[i] if i < len(ta) else None
            eb = tb[i] if i < len(tb) else None
            if ea != eb:
                return f'request {t + 1}, event {i + 1}:\n  pydantic-ai: {json.dumps(ea, sort_keys=True)}\n  toolsmith:   {json.dumps(eb, sort_keys=True)}'
    return f'{len(a)} requests on the reference side, {len(b)} here'


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument('--python', required=True)
    parser.add_argument('--runner', required=True)
    parser.add_argument('--scenario')
    args = parser.parse_args()
    passed = failed = 0
    for path in sorted((here / 'scenarios').glob('*.json')):
        if args.scenario and path.stem != args.scenario:
            continue
        scenario = json.loads(path.read_text())
        for protocol in scenario['requests']:
            ref = subprocess.run([args.python, str(here / 'reference.py'), str(path), protocol], capture_output=True, text=True)
            ours = subprocess.run([args.runner, str(path), protocol], capture_output=True, text=True)
            if ref.returncode != 0 or ours.returncode != 0:
                failed += 1
                print(f'FAIL {path.stem} {protocol}: a runner failed\n{ref.stderr[-2000:]}{ours.stderr[-2000:]}')
                continue
            expected = json.loads(ref.stdout)
            actual = normalize(json.loads(ours.stdout))
            if expected == actual:
                passed += 1
                print(f'ok   {path.stem} {protocol}')
            else:
                failed += 1
                print(f'FAIL {path.stem} {protocol}: {first_difference(expected, actual)}')
    print(f'{passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
