"""Greedy shrinking of a scenario while a predicate (the difference persists) holds.

    shrink(scenario, still_fails) -> smaller scenario

Candidates remove one thing at a time: a run, a scripted response, a response part, a tool, a toolset
or one of its tools, an external tool definition, a capability, a HookLog rule, an optional key of
the agent, a tool entry or a toolset, a deferred result, a property of a structured output, or
simplify tool-call arguments. The first candidate for which `still_fails` holds is kept and the
search starts again from it, until no candidate holds. `still_fails` is expected to re-run the
reference runner on the candidate (and refuse candidates it does not accept).
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Iterator

Scenario = dict[str, Any]

AGENT_KEYS = [
    'usage_limits',
    'model_settings',
    'system_prompt',
    'tool_timeout',
    'output_retries',
    'retries',
    'end_strategy',
    'parallel_mode',
    'deps',
    'capabilities',
    'output',
]
TOOL_KEYS = ['name', 'description', 'retries', 'timeout', 'requires_approval', 'sequential', 'defer_loading', 'prepare', 'args_validator']
TOOLSET_KEYS = ['filter_out', 'approval_required', 'defer_loading', 'prefix', 'max_retries', 'timeout']


def _removals(items: list[Any]) -> Iterator[int]:
    """Indices to try removing, last first (later items depend on earlier ones more often than not)."""
    return iter(range(len(items) - 1, -1, -1))


def candidates(sc: Scenario) -> Iterator[Scenario]:
    runs = sc.get('runs') or []
    # whole runs (keep at least one)
    if len(runs) > 1:
        for i in _removals(runs):
            c = copy.deepcopy(sc)
            del c['runs'][i]
            yield c
    script = sc.get('model', {}).get('script') if isinstance(sc.get('model'), dict) else None
    if script:
        for k in _removals(script):
            c = copy.deepcopy(sc)
            del c['model']['script'][k]
            yield c
        for k, resp in enumerate(script):
            for j in _removals(resp):
                c = copy.deepcopy(sc)
                del c['model']['script'][k][j]
                yield c
    for i in _removals(sc.get('toolsets') or []):
        c = copy.deepcopy(sc)
        del c['toolsets'][i]
        if not c['toolsets']:
            del c['toolsets']
        yield c
    for i in _removals(sc.get('tools') or []):
        c = copy.deepcopy(sc)
        del c['tools'][i]
        if not c['tools']:
            del c['tools']
        yield c
    for i, ts in enumerate(sc.get('toolsets') or []):
        key = 'tools' if ts.get('kind', 'function') == 'function' else 'tool_defs'
        for j in _removals(ts.get(key) or []):
            c = copy.deepcopy(sc)
            del c['toolsets'][i][key][j]
            yield c
    agent = sc.get('agent') or {}
    caps = agent.get('capabilities') or []
    for i in _removals(caps):
        c = copy.deepcopy(sc)
        del c['agent']['capabilities'][i]
        if not c['agent']['capabilities']:
            del c['agent']['capabilities']
        yield c
    for i, cap in enumerate(caps):
        if 'HookLog' in cap:
            for key in ('fail_on', 'recover_on'):
                rules = cap['HookLog'].get(key)
                if rules is None:
                    continue
                c = copy.deepcopy(sc)
                del c['agent']['capabilities'][i]['HookLog'][key]
                yield c
                if isinstance(rules, list):
                    for j in _removals(rules):
                        c = copy.deepcopy(sc)
                        del c['agent']['capabilities'][i]['HookLog'][key][j]
                        yield c
                    if len(rules) == 1:
                        c = copy.deepcopy(sc)
                        c['agent']['capabilities'][i]['HookLog'][key] = rules[0]
                        yield c
                elif 'times' in rules:
                    c = copy.deepcopy(sc)
                    del c['agent']['capabilities'][i]['HookLog'][key]['times']
                    yield c
    for key in AGENT_KEYS:
        if key in agent:
            c = copy.deepcopy(sc)
            del c['agent'][key]
            if not c['agent']:
                del c['agent']
            yield c
    output = agent.get('output')
    if isinstance(output, dict):
        (okind, schema), = output.items()
        if okind.endswith('_or_deferred'):
            c = copy.deepcopy(sc)
            c['agent']['output'] = {'structured': schema}
            yield c
        for p in list(schema.get('properties', {}))[::-1]:
            if len(schema['properties']) > 1:
                c = copy.deepcopy(sc)
                s = c['agent']['output'][okind]
                del s['properties'][p]
                if p in s.get('required', []):
                    s['required'].remove(p)
                    if not s['required']:
                        del s['required']
                yield c
        for key in ('title', 'description'):
            if key in schema:
                c = copy.deepcopy(sc)
                del c['agent']['output'][okind][key]
                yield c
    elif output == 'text_or_deferred':
        c = copy.deepcopy(sc)
        c['agent']['output'] = 'text'
        yield c
    for i, t in enumerate(sc.get('tools') or []):
        for key in TOOL_KEYS:
            if key in t:
                c = copy.deepcopy(sc)
                del c['tools'][i][key]
                yield c
    for i, ts in enumerate(sc.get('toolsets') or []):
        for key in TOOLSET_KEYS:
            if key in ts:
                c = copy.deepcopy(sc)
                del c['toolsets'][i][key]
                yield c
        for j, t in enumerate(ts.get('tools') or []):
            for key in TOOL_KEYS:
                if key in t:
                    c = copy.deepcopy(sc)
                    del c['toolsets'][i]['tools'][j][key]
                    yield c
    for i, run in enumerate(runs):
        if 'deps' in run:
            c = copy.deepcopy(sc)
            del c['runs'][i]['deps']
            yield c
        dtr = run.get('deferred_tool_results')
        if dtr:
            for section in ('approvals', 'calls', 'metadata'):
                for cid in list(dtr.get(section) or {})[::-1]:
                    c = copy.deepcopy(sc)
                    del c['runs'][i]['deferred_tool_results'][section][cid]
                    yield c
                if section in dtr and not dtr[section]:
                    c = copy.deepcopy(sc)
                    del c['runs'][i]['deferred_tool_results'][section]
                    yield c
            for section in ('approvals', 'calls'):
                for cid, v in (dtr.get(section) or {}).items():
                    if v is not True and v != 'ok':
                        c = copy.deepcopy(sc)
                        c['runs'][i]['deferred_tool_results'][section][cid] = True if section == 'approvals' else 'ok'
                        yield c
    if script:
        for k, resp in enumerate(script):
            for j, part in enumerate(resp):
                tc = part.get('tool_call')
                if tc is None:
                    continue
                args = tc.get('args')
                if isinstance(args, dict):
                    for key in list(args)[::-1]:
                        c = copy.deepcopy(sc)
                        del c['model']['script'][k][j]['tool_call']['args'][key]
                        yield c
                if isinstance(args, str):
                    c = copy.deepcopy(sc)
                    c['model']['script'][k][j]['tool_call']['args'] = {}
                    yield c
            for j, part in enumerate(resp):
                if 'text' in part and part['text'] not in ('', 'done'):
                    c = copy.deepcopy(sc)
                    c['model']['script'][k][j]['text'] = 'done'
                    yield c


def shrink(sc: Scenario, still_fails: Callable[[Scenario], bool], max_steps: int = 2000) -> Scenario:
    current = copy.deepcopy(sc)
    steps = 0
    progress = True
    while progress and steps < max_steps:
        progress = False
        for cand in candidates(current):
            steps += 1
            if still_fails(cand):
                current = cand
                progress = True
                break
            if steps >= max_steps:
                break
    return current
