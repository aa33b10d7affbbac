"""The one rule the project adds to ../shared/conformance/compare.py: a run-ending error's message
in a hook-log line is compared by its facts, like `runs[N].error.message`.

Used by fuzz.py and by scripts/compare-scenarios.py (compare.py with this rule, for the project's
own scenarios).
"""
from __future__ import annotations

import re
from typing import Any


# A hook-log line that carries a run-ending error: `LABEL.HOOK [TOOL] TYPE: MESSAGE`.
_HOOK_ERROR = re.compile(r'^(.*? )(UserError|UnexpectedModelBehavior|UsageLimitExceeded): (.*)$', re.S)


def relax_hook_log_errors(compare: Any, expected: Any, actual: Any) -> None:
    """Compares the message of a run-ending error in a hook-log line like `runs[N].error.message`.

    SCENARIOS.md compares a run's error message by its facts (the quoted values and numbers of the
    reference's message), since the message is written for a Rust user; the same error logged by a
    HookLog hook (`on_run_error`, `on_tool_execute_error`, `wrap_*!`) is the same message. A line
    whose prefix and error type are the reference's and whose message has every fact of the
    reference's is taken as equal (it is replaced by the expected line before the comparison);
    anything else (ModelRetry text, which the model sees, other types) stays exact.
    """
    if not isinstance(expected, dict) or not isinstance(actual, dict):
        return
    exp, act = expected.get('hook_log'), actual.get('hook_log')
    if not isinstance(exp, list) or not isinstance(act, list):
        return
    for i in range(min(len(exp), len(act))):
        if not isinstance(exp[i], str) or not isinstance(act[i], str) or exp[i] == act[i]:
            continue
        me, ma = _HOOK_ERROR.match(exp[i]), _HOOK_ERROR.match(act[i])
        if me and ma and me.group(1) == ma.group(1) and me.group(2) == ma.group(2):
            if not compare._missing_facts(me.group(3), ma.group(3)):
                act[i] = exp[i]
