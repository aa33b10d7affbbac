#!/usr/bin/env python3
"""../shared/conformance/compare.py with the project's one added rule (tests/differential/relax.py):
the message of a run-ending error in a hook-log line is compared by its facts, like
`runs[N].error.message`. Same arguments and output as compare.py:

    scripts/compare-scenarios.py --dir tests/scenarios --runner target/release/conformance -j 2

COMPARE_PY=path picks another compare.py (default: ../shared/conformance/compare.py beside the
checkout).
"""
from __future__ import annotations

import importlib.util
import os
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, 'tests', 'differential'))
import relax  # noqa: E402

path = os.environ.get('COMPARE_PY', os.path.join(root, '..', 'shared', 'conformance', 'compare.py'))
spec = importlib.util.spec_from_file_location('compare', path)
if spec is None or spec.loader is None:
    sys.exit(f'cannot load {path}')
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)

exact_diff = compare.diff


def diff(expected, actual, path='$', out=None, limit=compare.MAX_DIFFS):
    if path == '$' and out is None:
        relax.relax_hook_log_errors(compare, expected, actual)
    return exact_diff(expected, actual, path, out, limit)


compare.diff = diff
sys.exit(compare.main(sys.argv[1:]))
