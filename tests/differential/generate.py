"""Seeded generator of valid conformance scenarios (see ../shared/conformance/SCENARIOS.md).

    generate(ref, seed, index) -> scenario dict

The same (seed, index) always gives the same scenario (for the same reference runner). The generator
builds a scenario run by run and runs the reference runner (imported in-process, see
reference_batch.py) after each step to see where the conversation stands: which tools the model was
shown on the last request, which calls ended a run as deferred requests (so the next run can resume
them with every kind of result), whether a run ran out of script (then the script grows by a response,
biased towards ending the run). A candidate on which the reference runner fails to set up, or ends a
run with an error the catalogue does not produce (a Python TypeError, ZeroDivisionError, ...), is a
generator bug: it is dropped and counted in `Stats.rejected`, and another choice is tried.

Standard library only, plus the reference runner's own imports.
"""

from __future__ import annotations

import asyncio
import copy
import json
import random
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

# Error types a valid scenario may end a run with (SCENARIOS.md, normalised result).
KNOWN_ERRORS = {'UnexpectedModelBehavior', 'UsageLimitExceeded', 'UserError', 'ToolError', 'ScriptExhausted'}
# Error descriptions a HookLog line may carry.
KNOWN_HOOK_ERRORS = KNOWN_ERRORS | {'ValidationError', 'ModelRetry', 'ApprovalRequired', 'CallDeferred'}

TOOL_HOOKS = [
    'before_tool_validate',
    'after_tool_validate',
    'wrap_tool_validate',
    'on_tool_validate_error',
    'before_tool_execute',
    'after_tool_execute',
    'wrap_tool_execute',
    'on_tool_execute_error',
]

# Catalogue tools: parameter types ('int', 'float', 'str', 'dictlist', optional with '?').
PARAMS: dict[str, dict[str, str]] = {
    'roll_dice': {},
    'get_player_name': {},
    'add': {'x': 'int', 'y': 'int'},
    'add_numbers': {'x': 'int', 'y': 'int'},
    'greet': {'name': 'str'},
    'echo': {'message': 'str'},
    'foobar': {'a': 'int', 'b': 'str', 'c': 'dictlist'},
    'foobar_model': {'x': 'int', 'y': 'str', 'z': 'float?'},
    'get_user': {},
    'flaky': {'query': 'str'},
    'always_retry': {'reason': 'str'},
    'retry_until': {'n': 'int'},
    'retry_state': {},
    'slow': {'ms': 'int'},
    'boom': {},
    'launch_potato': {'target': 'str'},
    'delete_file': {'path': 'str'},
    'update_file': {'path': 'str', 'content': 'str'},
    'calculate_answer': {'question': 'str'},
    'click_and_capture': {'x': 'int', 'y': 'int'},
    'mortgage_calculator': {'principal': 'float', 'rate': 'float', 'years': 'int'},
}

# How often each catalogue tool is picked.
TOOL_WEIGHTS = {
    'roll_dice': 6,
    'get_player_name': 4,
    'add': 8,
    'add_numbers': 4,
    'greet': 5,
    'echo': 6,
    'foobar': 3,
    'foobar_model': 3,
    'get_user': 3,
    'flaky': 7,
    'always_retry': 5,
    'retry_until': 6,
    'retry_state': 5,
    'slow': 3,
    'boom': 3,
    'launch_potato': 4,
    'delete_file': 5,
    'update_file': 6,
    'calculate_answer': 6,
    'click_and_capture': 3,
    'mortgage_calculator': 4,
}

WORDS = ['alpha', 'beta', 'file', 'mortgage', 'potato', 'dice', 'hello', 'weather', 'sum', 'user', 'screenshot']
TEXTS = ['done', 'The answer is 42.', 'ok', 'All finished, thanks!', '', '  ', 'Let me think.', '{"value": 1}']
RETRY_MESSAGES = ['try again', 'No result for this tool call was found.', 'bad input, please retry']
DENY_MESSAGES = ['Deleting files is not allowed', 'denied by policy', 'no']
EXTERNAL_DEFS = [
    {
        'name': 'browser_click',
        'description': 'Click an element.',
        'parameters_json_schema': {'type': 'object', 'properties': {'selector': {'type': 'string'}}, 'required': ['selector']},
    },
    {
        'name': 'browser_type',
        'description': 'Type text.',
        'parameters_json_schema': {'type': 'object', 'properties': {'text': {'type': 'string'}}, 'required': ['text']},
    },
    {'name': 'ext_ping'},
    {
        'name': 'ext_lookup',
        'description': 'Look up a record by id.',
        'parameters_json_schema': {
            'type': 'object',
            'properties': {'id': {'type': 'integer'}, 'fields': {'type': 'array', 'items': {'type': 'string'}}},
            'required': ['id'],
        },
    },
]
FROM_SCHEMAS = [
    {
        'name': 'sum',
        'description': 'Sum two numbers.',
        'json_schema': {
            'additionalProperties': False,
            'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer'}},
            'required': ['a', 'b'],
            'type': 'object',
        },
        'returns': 'concat',
    },
    {
        'name': 'join',
        'description': 'Join two strings.',
        'json_schema': {'properties': {'a': {'type': 'string'}, 'b': {'type': 'string'}}, 'required': ['a', 'b'], 'type': 'object'},
        'returns': 'concat',
    },
    {
        'name': 'inspect',
        'description': 'Show the arguments.',
        'json_schema': {'properties': {'a': {'type': 'integer'}, 'b': {'type': 'integer'}}, 'type': 'object'},
        'returns': 'echo',
    },
    {
        'name': 'record',
        'json_schema': {
            'properties': {'tags': {'type': 'array', 'items': {'type': 'string'}}, 'meta': {'type': 'object'}},
            'required': ['tags'],
            'type': 'object',
        },
        'returns': 'echo',
    },
]


@dataclass
class Stats:
    rejected: int = 0
    reference_runs: int = 0
    reasons: list[str] = field(default_factory=list)


def problems(result: dict[str, Any]) -> list[str]:
    """Why a reference result shows a generator bug rather than a behaviour (empty when valid)."""
    out = []
    for i, run in enumerate(result.get('runs', [])):
        err = run.get('error')
        if err and err['type'] not in KNOWN_ERRORS:
            out.append(f"run {i} failed with {err['type']}: {err['message'][:200]}")
    for line in result.get('hook_log') or []:
        m = re.search(r' (\w+): ', line)
        if m and m.group(1) not in KNOWN_HOOK_ERRORS and '-> ModelRetry' not in line:
            out.append(f'hook line with an unexpected error: {line[:200]}')
    return out


# Catalogue tools whose execution can raise: boom's error ends the run, and a ModelRetry (flaky,
# always_retry, retry_until, a timed-out slow) ends it once the retries are used up.
RISKY_BASES = {'boom', 'flaky', 'always_retry', 'retry_until', 'slow'}


def nondeterminism(sc: dict[str, Any]) -> str | None:
    """Why a scenario's result could depend on timing (None when it cannot).

    In parallel mode a step's calls execute concurrently: HookLog lines of two executions could
    interleave, and an execution that ends the run (boom's error, a retry past the limit) cancels
    the other executions at a moment that depends on timing; Pydantic AI keeps the results of the
    calls that happened to finish. So, in parallel mode, a scenario with a HookLog has at most one
    function call per response, a call to a tool whose execution can raise (boom, flaky,
    always_retry, retry_until, slow, a `concat` from_schema tool) is the only function call of its
    response, and TestModel (which calls every tool in one step) meets neither a HookLog nor such a
    tool among other tools. In any mode, calculate_answer is only called with a scripted id: its
    CallDeferred metadata carries the raw id, which is random when the framework makes it up.
    """
    agent = sc.get('agent') or {}
    hooklog = any('HookLog' in c for c in agent.get('capabilities') or [])
    bases: dict[str, Any] = {}

    def base_of(e: dict[str, Any]) -> Any:
        if 'from_schema' in e:
            return 'boom' if e['from_schema'].get('returns') == 'concat' else None
        return e.get('use')

    for e in sc.get('tools') or []:
        name = e['from_schema']['name'] if 'from_schema' in e else (e.get('name') or e['use'])
        bases[name] = base_of(e)
    for ts in sc.get('toolsets') or []:
        entries = (ts.get('tools') if ts.get('kind', 'function') == 'function' else ts.get('tool_defs')) or []
        for e in entries:
            name = e['from_schema']['name'] if 'from_schema' in e else (e.get('name') or e.get('use'))
            if ts.get('prefix'):
                name = f"{ts['prefix']}_{name}"
            bases[name] = base_of(e)
    model = sc.get('model')
    scripted = isinstance(model, dict) and 'script' in model
    if 'calculate_answer' in bases.values():
        made_up = not scripted or any(
            'tool_call' in p and 'id' not in p['tool_call'] and bases.get(p['tool_call'].get('name')) == 'calculate_answer'
            for resp in model['script']
            for p in resp
        )
        if made_up:
            return 'calculate_answer called with a made-up id (its metadata carries the raw id)'
    if agent.get('parallel_mode') == 'sequential':
        return None
    if not scripted:
        if hooklog:
            return 'TestModel with a HookLog in parallel mode'
        if RISKY_BASES & set(bases.values()) and len(bases) > 1:
            return 'TestModel calls a tool whose execution can raise among other tools in parallel mode'
        return None
    responses = [r for r in model['script']]
    for run in sc.get('runs') or []:
        history = run.get('message_history') or []
        if history and history[-1].get('kind') == 'response':
            responses.append([{'tool_call': {'name': p.get('tool_name')}} for p in history[-1]['parts'] if p.get('part_kind') == 'tool-call'])
    for resp in responses:
        calls = [p['tool_call']['name'] for p in resp if 'tool_call' in p and p['tool_call'].get('name') != 'final_result']
        if len(calls) > 1:
            if hooklog:
                return 'a HookLog and several function calls in one response in parallel mode'
            if any(bases.get(n) in RISKY_BASES for n in calls):
                return 'a call whose execution can raise among other function calls in one response in parallel mode'
    return None


class Reference:
    """The reference runner in-process, counting the scripted responses each execution consumes."""

    def __init__(self, ref: Any, stats: Stats) -> None:
        self.ref = ref
        self.stats = stats
        self.consumed = 0
        original = ref.build_response
        if getattr(original, '_counting', False):
            original = original._original
        outer = self

        def counted(parts: Any) -> Any:
            outer.consumed += 1
            return original(parts)

        counted._counting = True  # type: ignore[attr-defined]
        counted._original = original  # type: ignore[attr-defined]
        ref.build_response = counted
        # The raw message lists the runner dumps (run by run: a given history, then the new messages).
        self.dumped: list[list[Any]] = []
        original_dump = ref.dump_messages
        if getattr(original_dump, '_counting', False):
            original_dump = original_dump._original

        def dump(messages: Any) -> Any:
            outer.dumped.append(list(messages))
            return original_dump(messages)

        dump._counting = True  # type: ignore[attr-defined]
        dump._original = original_dump  # type: ignore[attr-defined]
        ref.dump_messages = dump

    def execute(self, sc: dict[str, Any]) -> tuple[dict[str, Any] | None, int, str | None]:
        """(raw result, scripted responses consumed, setup error) for a scenario."""
        self.consumed = 0
        self.dumped = []
        self.stats.reference_runs += 1
        warnings.simplefilter('ignore')
        try:
            result = asyncio.run(self.ref.run_scenario(json.loads(json.dumps(sc))))
        except Exception as e:  # noqa: BLE001 - a setup error is a generator bug
            return None, self.consumed, f'setup error: {type(e).__name__}: {e}'
        bad = problems(result)
        return result, self.consumed, ('; '.join(bad) if bad else None)

    def all_messages(self, sc: dict[str, Any]) -> list[Any]:
        """The raw Pydantic AI history (ModelMessagesTypeAdapter JSON) after the last run of sc."""
        result, _, err = self.execute(sc)
        if result is None or err is not None:
            raise Rejected(err or 'no result')
        msgs: list[Any] = []
        dumped = list(self.dumped)
        for run in sc['runs']:
            if run.get('message_history') is not None:
                msgs = dumped.pop(0)
            msgs = msgs + dumped.pop(0)
        raw = self.ref.ModelMessagesTypeAdapter.dump_python(msgs, mode='json')
        return scrub(raw, {})


def scrub(o: Any, ids: dict[str, str]) -> Any:
    """Fixed timestamps and run ids, deterministic generated call ids: the same seed writes the same file."""
    if isinstance(o, dict):
        out = {}
        for k, v in o.items():
            if k == 'timestamp' and isinstance(v, str):
                out[k] = '2026-01-01T00:00:00Z'
            elif k in ('run_id', 'conversation_id') and isinstance(v, str):
                out[k] = ids.setdefault(v, f'{k.split("_")[0]}-{len(ids) + 1}')
            else:
                out[k] = scrub(v, ids)
        return out
    if isinstance(o, list):
        return [scrub(x, ids) for x in o]
    if isinstance(o, str) and o.startswith('pyd_ai_'):
        return ids.setdefault(o, f'pyd_ai_generated_{len(ids) + 1}')
    return o


@dataclass
class Slot:
    """A tool of the scenario as the model would call it."""

    name: str  # the name the model calls (renamed, prefixed)
    base: str | None  # catalogue tool, or None
    kind: str  # 'function' | 'from_schema' | 'external'
    schema: dict[str, Any] | None = None  # for from_schema / external
    returns: str | None = None  # from_schema: 'concat' | 'echo'
    effective_timeout: float | None = None
    defers: bool = False  # a call may end the run as a deferred request (approval or external result)


class Gen:
    def __init__(self, ref: Reference, seed: int, index: int) -> None:
        self.ref = ref
        self.rng = random.Random(f'toolsmith-differential:{seed}:{index}')
        self.seed = seed
        self.index = index
        self.ids = 0
        self.id_style = 'global'
        self.slots: list[Slot] = []
        self.hook_log = False
        self.one_call_per_response = False
        self.deps_kind = 'any'  # 'int' when an args_validator needs an integer, 'scalar' for describe_name_from_deps
        self.allows_deferred = False

    # ------------------------------------------------------------------ small helpers

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, weighted: dict[Any, float]) -> Any:
        keys = list(weighted)
        return self.rng.choices(keys, weights=[weighted[k] for k in keys])[0]

    def word(self) -> str:
        return self.rng.choice(WORDS)

    def new_id(self) -> str:
        self.ids += 1
        return f'c{self.ids}'

    # ------------------------------------------------------------------ agent, tools, toolsets

    def deps_value(self) -> Any:
        if self.deps_kind == 'int':
            return self.rng.choice([42, 7, 100, 10])
        if self.deps_kind == 'scalar':
            return self.rng.choice(['Anne', 'human', 42, 7])
        return self.pick({None: 3, 'Anne': 3, 42: 3, 7: 1, 0: 1, '': 1, True: 1, 'human': 1, 100: 1})

    def output_schema(self, depth: int = 0) -> dict[str, Any]:
        names = ['value', 'city', 'count', 'score', 'tags', 'ok', 'detail', 'items', 'population', 'area_km2']
        self.rng.shuffle(names)
        props: dict[str, Any] = {}
        required: list[str] = []
        for name in names[: self.rng.randint(1, 3)]:
            t = self.pick({'integer': 25, 'number': 12, 'string': 25, 'boolean': 8, 'array': 12, 'object': 12 if depth == 0 else 0})
            prop: dict[str, Any] = {'type': t}
            if t == 'array':
                prop['items'] = {'type': self.rng.choice(['integer', 'string', 'number'])}
            if t == 'object':
                sub = self.output_schema(depth + 1)
                prop['properties'] = sub['properties']
                if 'required' in sub:
                    prop['required'] = sub['required']
            if self.chance(0.2):
                prop['description'] = f'The {name}.'
            if self.chance(0.6) or t == 'object':
                required.append(name)
            elif self.chance(0.4):
                prop['default'] = {'integer': 0, 'number': self.rng.choice([0.0, 1.5]), 'string': 'n/a', 'boolean': False, 'array': []}[t]
            props[name] = prop
        schema: dict[str, Any] = {'type': 'object', 'properties': props}
        if required:
            schema['required'] = required
        if depth == 0 and self.chance(0.3):
            schema['title'] = 'CityInfo'
            if self.chance(0.5):
                schema['description'] = 'Facts about a city.'
        return schema

    def tool_entry(self, base: str, taken: set[str], toolset: bool) -> dict[str, Any]:
        e: dict[str, Any] = {'use': base}
        name = base
        if self.chance(0.08) or base in taken:
            name = f'{base}_{len(taken)}'
            e['name'] = name
        if self.chance(0.06):
            e['description'] = f'Custom description of {name}.'
        if self.chance(0.18):
            e['retries'] = self.rng.choice([0, 1, 2, 3])
        if base == 'slow' and self.chance(0.5):
            e['timeout'] = self.rng.choice([0.05, 1.0])
        elif self.chance(0.03):
            e['timeout'] = 1.0
        p_approval = 0.10 if base not in ('delete_file', 'launch_potato') else 0.35
        if self.chance(p_approval if self.allows_deferred else p_approval / 3):
            e['requires_approval'] = True
        if self.chance(0.06):
            e['sequential'] = True
        if self.chance(0.12):
            e['defer_loading'] = True
        if self.chance(0.08):
            choices = {'only_if_deps_42': 3, 'hide': 1}
            if base == 'greet':
                choices['describe_name_from_deps'] = 6
            e['prepare'] = self.pick(choices)
            if e['prepare'] == 'describe_name_from_deps' and self.deps_kind == 'any':
                self.deps_kind = 'scalar'
        if base in ('add', 'add_numbers', 'click_and_capture') and self.chance(0.3):
            e['args_validator'] = 'sum_at_most_deps'
            self.deps_kind = 'int'
        taken.add(name)
        return e

    def pick_bases(self, n: int, exclude: set[str]) -> list[str]:
        weights = {k: v for k, v in TOOL_WEIGHTS.items() if k not in exclude}
        out = []
        for _ in range(n):
            out.append(self.pick(weights))
        return out

    def build_tools(self, sc: dict[str, Any], test_model: bool) -> None:
        # TestModel makes up call ids, and calculate_answer puts the raw id in its metadata
        exclude = {'mortgage_calculator', 'slow', 'calculate_answer'} if test_model else set()
        taken: set[str] = set()
        agent = sc['agent']
        n = self.pick({0: 1, 1: 4, 2: 6, 3: 5, 4: 3, 5: 1})
        tools = []
        for base in self.pick_bases(n, exclude):
            if base in taken and not self.chance(0.03):
                continue  # mostly unique names; now and then a duplicate (a UserError at build time)
            tools.append(self.tool_entry(base, taken, False))
        if self.chance(0.15):
            fs = copy.deepcopy(self.rng.choice(FROM_SCHEMAS))
            if fs['name'] not in taken:
                if self.chance(0.1):
                    fs['sequential'] = True
                tools.append({'from_schema': fs})
                taken.add(fs['name'])
        if tools:
            sc['tools'] = tools
        toolsets = []
        for _ in range(self.pick({0: 10, 1: 5, 2: 1})):
            toolsets.append(self.toolset(taken, exclude))
        if not test_model and self.chance(0.14):
            toolsets.append(self.external_toolset(taken))
        if toolsets:
            sc['toolsets'] = toolsets
        # Slots: the names the model calls.
        agent_timeout = agent.get('tool_timeout')
        for e in tools:
            self.slots.append(self.slot_of(e, None, agent_timeout))
        for ts in toolsets:
            prefix = ts.get('prefix')
            hidden = set(ts.get('filter_out') or [])
            entries = ts.get('tools') if ts['kind'] == 'function' else ts['tool_defs']
            for e in entries:
                s = self.slot_of(e, ts, agent_timeout)
                # a filtered tool keeps its slot: calling it is an unknown-tool retry
                if prefix:
                    s.name = f'{prefix}_{s.name}'
                self.slots.append(s)
            del hidden

    def slot_of(self, e: dict[str, Any], ts: dict[str, Any] | None, agent_timeout: Any) -> Slot:
        wrapped = bool(ts and ts.get('approval_required'))
        if 'from_schema' in e:
            fs = e['from_schema']
            return Slot(fs['name'], None, 'from_schema', fs['json_schema'], fs.get('returns', 'echo'), defers=wrapped)
        if 'use' in e:
            timeout = e.get('timeout')
            if timeout is None and ts is not None:
                timeout = ts.get('timeout')
            if timeout is None:
                timeout = agent_timeout
            defers = wrapped or bool(e.get('requires_approval')) or e['use'] in ('calculate_answer', 'update_file')
            return Slot(e.get('name') or e['use'], e['use'], 'function', effective_timeout=timeout, defers=defers)
        schema = e.get('parameters_json_schema') or {'type': 'object', 'properties': {}}
        return Slot(e['name'], None, 'external', schema, defers=True)

    def toolset(self, taken: set[str], exclude: set[str]) -> dict[str, Any]:
        ts: dict[str, Any] = {'kind': 'function'}
        prefix = self.rng.choice(['math', 'files', 'web', 'ts']) if self.chance(0.45) else None
        local: set[str] = set()
        tools = []
        for base in self.pick_bases(self.rng.randint(1, 3), exclude):
            full = f'{prefix}_{base}' if prefix else base
            if base in local or (full in taken and not self.chance(0.05)):
                continue
            tools.append(self.tool_entry(base, local, True))
        ts['tools'] = tools
        names = [t.get('name') or t['use'] for t in tools]
        for n in names:
            taken.add(f'{prefix}_{n}' if prefix else n)
        self.wrappers(ts, names)
        if self.chance(0.25):
            ts['max_retries'] = self.rng.choice([0, 1, 2, 3])
        if self.chance(0.12):
            ts['timeout'] = self.rng.choice([0.05, 1.0])
        if prefix:
            ts['prefix'] = prefix
        return ts

    def external_toolset(self, taken: set[str]) -> dict[str, Any]:
        defs = [copy.deepcopy(d) for d in self.rng.sample(EXTERNAL_DEFS, self.rng.randint(1, 2)) if d['name'] not in taken]
        ts: dict[str, Any] = {'kind': 'external', 'tool_defs': defs}
        names = [d['name'] for d in defs]
        self.wrappers(ts, names)
        if self.chance(0.2):
            ts['prefix'] = 'ext'
        for n in names:
            taken.add(f"{ts['prefix']}_{n}" if ts.get('prefix') else n)
        return ts

    def wrappers(self, ts: dict[str, Any], names: list[str]) -> None:
        if not names:
            return
        if self.chance(0.15):
            ts['filter_out'] = self.rng.sample(names, 1) + (['not_a_tool'] if self.chance(0.2) else [])
        if self.chance(0.2):
            ts['approval_required'] = True if self.chance(0.4) else self.rng.sample(names, self.rng.randint(1, len(names)))
        if self.chance(0.2):
            ts['defer_loading'] = True if self.chance(0.4) else self.rng.sample(names, self.rng.randint(1, len(names)))

    def capabilities(self, sc: dict[str, Any]) -> list[dict[str, Any]]:
        caps: list[dict[str, Any]] = []
        names = [s.name for s in self.slots]
        if self.chance(0.4):
            labels = ['A', 'B', 'C'][: self.pick({1: 6, 2: 3, 3: 1})]
            for label in labels:
                caps.append({'HookLog': self.hooklog(label, names)})
            self.hook_log = True
        if self.chance(0.15):
            ts: dict[str, Any] = {}
            if self.chance(0.5):
                ts['strategy'] = self.rng.choice([None, 'keywords'])
            if self.chance(0.5):
                ts['max_results'] = self.rng.choice([1, 2, 10])
            caps.append({'ToolSearch': ts})
        if self.chance(0.15):
            caps.append({'PrepareTools': self.rng.choice(['strict_all', 'drop_launch_potato_if_deps'])})
        if self.chance(0.12):
            arg: dict[str, Any] = {}
            if names and self.chance(0.4):
                arg['tools'] = self.rng.sample(names, 1)
            caps.append({'IncludeToolReturnSchemas': arg})
        if self.chance(0.1):
            caps.append({'SetToolMetadata': self.rng.choice([{'team': 'core'}, {'team': 'core', 'level': 2}, {'tags': ['a', 'b']}])})
        self.rng.shuffle(caps)
        return caps

    def hooklog(self, label: str, names: list[str]) -> dict[str, Any]:
        h: dict[str, Any] = {'label': label}
        function_slots = [s for s in self.slots if s.kind != 'external']
        if function_slots and self.chance(0.55):
            rules = []
            for _ in range(self.pick({1: 5, 2: 2})):
                s = self.rng.choice(function_slots)
                r: dict[str, Any] = {'hook': self.rng.choice(TOOL_HOOKS), 'tool': s.name, 'message': f'{label} says no'}
                if self.chance(0.35):
                    r['times'] = self.rng.choice([1, 2, 3])
                rules.append(r)
            h['fail_on'] = rules[0] if len(rules) == 1 and self.chance(0.5) else rules
        if function_slots and self.chance(0.5):
            rules = []
            for _ in range(self.pick({1: 5, 2: 1})):
                hook = self.rng.choice(['on_tool_validate_error', 'on_tool_execute_error'])
                failing = [s for s in function_slots if s.base in ('boom', 'slow', 'calculate_answer', 'update_file') or s.defers]
                if hook == 'on_tool_execute_error' and failing and self.chance(0.7):
                    s = self.rng.choice(failing)
                else:
                    s = self.rng.choice(function_slots)
                if hook == 'on_tool_validate_error':
                    if s.base == 'foobar_model':
                        continue
                    value: Any = self.valid_args(s)
                else:
                    value = self.rng.choice(['recovered', 7, {'ok': True}, None])
                r = {'hook': hook, 'tool': s.name, 'value': value}
                if self.chance(0.3):
                    r['times'] = self.rng.choice([1, 2])
                rules.append(r)
            if rules:
                h['recover_on'] = rules[0] if len(rules) == 1 and self.chance(0.5) else rules
        return h

    def tool_choice(self) -> Any:
        names = [s.name for s in self.slots]
        pool = names + ['search_tools', 'nope']
        kind = self.pick({'auto': 2, 'none': 2, 'required': 2, 'list': 3, 'tool_or_output': 3})
        if kind in ('auto', 'none', 'required'):
            return kind
        chosen = self.rng.sample(pool, min(len(pool), self.rng.randint(1, 2)))
        return chosen if kind == 'list' else {'ToolOrOutput': chosen}

    # ------------------------------------------------------------------ arguments

    def value_of(self, t: str, base: str | None, pname: str, s: Slot | None) -> Any:
        rng = self.rng
        if base == 'flaky' and pname == 'query':
            return rng.choice(['bad', 'bad', 'good', 'weather'])
        if base == 'update_file' and pname == 'path':
            return rng.choice(['.env', 'README.md', 'config/.env', 'notes.txt'])
        if base == 'retry_until':
            return rng.choice([0, 1, 1, 2, 3])
        if base == 'slow':
            timeout = s.effective_timeout if s else None
            if timeout is not None and timeout < 0.5:
                return 400
            return rng.choice([1, 2, 5])
        if base == 'mortgage_calculator':
            return {'principal': rng.choice([300000, 250000.0, 1000]), 'rate': rng.choice([6.5, 3, 12.0]), 'years': rng.choice([30, 15, 1])}[pname]
        if base in ('add', 'add_numbers') or (base == 'click_and_capture'):
            return rng.choice([1, 2, 3, 40, 60, 99, -5])
        if t == 'int':
            return rng.choice([0, 1, 2, 7, 42])
        if t == 'float':
            return rng.choice([3.14, 0.5, 2, 1e3])
        if t == 'dictlist':
            return rng.choice([{'k': [1.5, 2.0]}, {}, {'a': [], 'b': [3]}])
        if base == 'always_retry':
            return rng.choice(['need more detail', 'not yet'])
        if base == 'greet':
            return rng.choice(['Ann', 'Bob'])
        if base == 'delete_file':
            return rng.choice(['__init__.py', 'old.log'])
        return rng.choice(['hello', 'life', 'the universe', 'target A', 'x'])

    def schema_value(self, prop: dict[str, Any], depth: int = 0) -> Any:
        t = prop.get('type')
        rng = self.rng
        if t == 'integer':
            return rng.choice([0, 1, 5, 42, -3])
        if t == 'number':
            return rng.choice([1.5, 2, 0.25, 100.0])
        if t == 'string':
            return rng.choice(['Paris', 'x', '', 'hello world'])
        if t == 'boolean':
            return rng.choice([True, False])
        if t == 'array':
            return [self.schema_value(prop.get('items', {}), depth + 1) for _ in range(rng.randint(0, 2))]
        if t == 'object':
            return self.object_value(prop, depth + 1)
        return rng.choice(['any', 1, None])

    def object_value(self, schema: dict[str, Any], depth: int = 0) -> dict[str, Any]:
        req = set(schema.get('required', []))
        out = {}
        for k, p in (schema.get('properties') or {}).items():
            if k in req or self.chance(0.5):
                out[k] = self.schema_value(p, depth)
        return out

    def valid_args(self, s: Slot) -> dict[str, Any]:
        if s.kind in ('from_schema', 'external'):
            if s.returns == 'concat' and s.schema is not None:
                props = s.schema.get('properties', {})
                if props.get('a', {}).get('type') == 'string':
                    return {'a': self.rng.choice(['foo', 'x']), 'b': self.rng.choice(['bar', 'y'])}
                return {'a': self.rng.choice([1, 2, 40]), 'b': self.rng.choice([2, 3, 0.5])}
            return self.object_value(s.schema or {})
        base = s.base or ''
        if base == 'foobar_model':
            inner = {'x': self.value_of('int', base, 'x', s), 'y': self.value_of('str', base, 'y', s)}
            if self.chance(0.4):
                inner['z'] = self.rng.choice([1, 2.5])
            return {'f': inner} if self.chance(0.4) else inner
        args = {}
        for pname, t in PARAMS[base].items():
            args[pname] = self.value_of(t.rstrip('?'), base, pname, s)
        return args

    def broken_args(self, args: dict[str, Any], schema_types: dict[str, str]) -> Any:
        """Arguments that fail validation or parsing in one of many ways."""
        kind = self.pick({'wrong_type': 5, 'missing': 3, 'extra': 3, 'coerce': 3, 'raw_broken': 2, 'raw_not_object': 1, 'raw_empty': 1, 'null_value': 1})
        a = dict(args)
        if kind == 'wrong_type' and a:
            k = self.rng.choice(list(a))
            a[k] = {'int': 'abc', 'float': 'NaNish', 'str': 123, 'dictlist': [1, 2]}.get(schema_types.get(k, 'str'), [1])
            if self.chance(0.3):
                a[k] = 1.5 if schema_types.get(k) == 'int' else a[k]
            return a
        if kind == 'missing' and a:
            del a[self.rng.choice(list(a))]
            return a
        if kind == 'extra':
            a['unexpected'] = self.rng.choice([True, 'x', None])
            return a
        if kind == 'coerce' and a:
            k = self.rng.choice(list(a))
            v = a[k]
            if isinstance(v, int) and not isinstance(v, bool):
                a[k] = self.rng.choice([str(v), float(v)])
            elif isinstance(v, str):
                a[k] = self.rng.choice([[v], True])
            return a
        if kind == 'raw_broken':
            return json.dumps(args)[:-1]
        if kind == 'raw_not_object':
            return self.rng.choice(['[1, 2]', '42', '"text"', 'null'])
        if kind == 'raw_empty':
            return ''
        if kind == 'null_value' and a:
            a[self.rng.choice(list(a))] = None
            return a
        return {'unexpected': 1}

    def call_args(self, s: Slot) -> Any:
        args = self.valid_args(s)
        if s.kind == 'function' and s.base:
            types = {k: v.rstrip('?') for k, v in PARAMS[s.base].items()}
        elif s.schema is not None:
            types = {
                k: {'integer': 'int', 'number': 'float', 'string': 'str'}.get(p.get('type', ''), 'dictlist')
                for k, p in (s.schema.get('properties') or {}).items()
            }
        else:
            types = {}
        r = self.rng.random()
        if r < 0.72:
            return args
        if r < 0.79:
            return json.dumps(args)  # a raw JSON string
        broken = self.broken_args(args, types)
        if s.kind == 'from_schema' and isinstance(broken, str) and broken.strip()[:1] not in ('{', ''):
            # unvalidated arguments go to fn(**kwargs) as they are: they must be an object
            return {'unexpected': 1}
        return broken

    def search_args(self, defs: list[dict[str, Any]]) -> Any:
        deferred = [s.name for s in self.slots if s.name not in {d['name'] for d in defs}]
        kind = self.pick({'match': 6, 'nomatch': 2, 'blank': 1, 'string': 1, 'missing': 1, 'several': 2})
        if kind == 'match' and deferred:
            name = self.rng.choice(deferred)
            return {'queries': [self.rng.choice([name, name.replace('_', ' '), name.split('_')[-1]])]}
        if kind == 'several':
            return {'queries': [self.word(), self.rng.choice(deferred) if deferred else 'file']}
        if kind == 'blank':
            return {'queries': ['  ', '--- !!!']}
        if kind == 'string':
            return {'queries': self.word()}
        if kind == 'missing':
            return {}
        return {'queries': ['quantum teleport']}

    # ------------------------------------------------------------------ responses

    def call(self, name: str, args: Any) -> dict[str, Any]:
        tc: dict[str, Any] = {'name': name, 'args': args}
        tc['id'] = self.new_id()
        return {'tool_call': tc}

    def output_call(self, schema: dict[str, Any]) -> dict[str, Any]:
        args: Any = self.object_value(schema)
        optional = [k for k in schema['properties'] if k not in schema.get('required', [])]
        if optional and self.chance(0.12):
            args[self.rng.choice(optional)] = None  # an explicit null for a nullable (optional) property
        r = self.rng.random()
        if r < 0.22:
            types = {k: {'integer': 'int', 'number': 'float', 'string': 'str'}.get(p.get('type', ''), 'dictlist') for k, p in schema['properties'].items()}
            args = self.broken_args(args, types)
            if isinstance(args, dict) and self.chance(0.3):
                # nested objects: break the inner model
                for k, p in schema['properties'].items():
                    if p.get('type') == 'object':
                        args[k] = {'wrong': 'shape'} if self.chance(0.5) else 'not an object'
                        break
        elif r < 0.3:
            args = json.dumps(args)
        return self.call('final_result', args)

    def response(self, state: dict[str, Any], sc: dict[str, Any], n_in_run: int) -> list[dict[str, Any]]:
        """One scripted response, given the tools shown on the last request."""
        output = sc['agent'].get('output', 'text')
        structured = isinstance(output, dict)
        schema = next(iter(output.values())) if structured else None
        defs: list[dict[str, Any]] = state.get('defs') or []
        shown = [d['name'] for d in defs]
        by_name = {s.name: s for s in self.slots}
        # Ending the run gets likelier as the run goes on.
        end_weight = 2 + 3 * n_in_run
        kind = self.pick({'calls': 9, 'end': end_weight, 'end_and_calls': 3, 'empty': 1, 'odd_text': 1.2})
        parts: list[dict[str, Any]] = []

        def ending() -> dict[str, Any]:
            if structured:
                assert schema is not None
                return self.output_call(schema)
            return {'text': self.rng.choice(TEXTS[:4])}

        def some_call() -> dict[str, Any]:
            weights: dict[str, float] = {'shown': 10, 'unknown': 0.7, 'hidden': 1.2}
            if 'search_tools' in shown:
                weights['search'] = 3
            if structured:
                weights['output'] = 1
            what = self.pick(weights)
            if what == 'shown' and shown:
                w = [
                    (3.0 if self.allows_deferred else 0.4) if (by_name.get(n) and by_name[n].defers) else 1.0
                    for n in shown
                ]
                name = self.rng.choices(shown, weights=w)[0]
                if name == 'search_tools':
                    return self.call(name, self.search_args(defs))
                s = by_name.get(name)
                if s is None:
                    return self.call(name, {})
                return self.call(name, self.call_args(s))
            if what == 'search':
                return self.call('search_tools', self.search_args(defs))
            if what == 'output' and schema is not None:
                return self.output_call(schema)
            if what == 'hidden':
                hidden = [s for s in self.slots if s.name not in shown]
                if hidden:
                    s = self.rng.choice(hidden)
                    return self.call(s.name, self.call_args(s))
            if self.slots and self.chance(0.5):
                s = self.rng.choice(self.slots)
                return self.call(self.rng.choice([s.name + 's', s.name.split('_')[-1], 'nonexistent_tool']), self.call_args(s))
            return self.call('nonexistent_tool', {})

        max_calls = 1 if self.one_call_per_response else 3
        if kind == 'calls':
            for _ in range(self.pick({1: 6, 2: 3, 3: 1}) if max_calls > 1 else 1):
                parts.append(some_call())
        elif kind == 'end':
            parts.append(ending())
            if structured and self.chance(0.08):
                parts.append(ending())
        elif kind == 'end_and_calls':
            calls = [some_call() for _ in range(self.pick({1: 3, 2: 1}) if max_calls > 1 else 1)]
            end = ending()
            pos = self.rng.randint(0, len(calls))
            parts = calls[:pos] + [end] + calls[pos:]
            if structured and self.chance(0.2):
                parts.append(ending())
        elif kind == 'odd_text':
            parts.append({'text': self.rng.choice(['', '  ', 'thinking out loud', '{"value": 3}'])})
            if self.chance(0.3) and not structured:
                parts.append({'text': 'second text part'})
        # 'empty': no parts
        def executes(p: dict[str, Any]) -> bool:
            return 'tool_call' in p and p['tool_call']['name'] != 'final_result'

        def risky(p: dict[str, Any]) -> bool:
            slot = by_name.get(p['tool_call']['name'])
            return slot is not None and (slot.base in RISKY_BASES or slot.returns == 'concat')

        parallel = sc['agent'].get('parallel_mode') != 'sequential'
        raising = [p for p in parts if executes(p) and risky(p)]
        if self.one_call_per_response or (parallel and raising):
            # HookLog in parallel mode: at most one function call per step (output calls do not
            # execute). An execution that ends the run cancels the step's other executions at a
            # moment that depends on timing: in parallel mode it is the step's only function call.
            keep = raising[0] if raising else next((p for p in parts if executes(p)), None)
            parts = [p for p in parts if not executes(p) or p is keep]
        return parts

    # ------------------------------------------------------------------ runs

    def deferred_results(self, deferred: dict[str, Any]) -> dict[str, Any]:
        by_name = {s.name: s for s in self.slots}
        approvals: dict[str, Any] = {}
        for call in deferred.get('approvals', []):
            cid = call['tool_call_id']
            if self.chance(0.04):
                continue  # a missing result
            kind = self.pick({'true': 35, 'false': 12, 'approved': 8, 'override': 15, 'denied': 25})
            if kind == 'true':
                approvals[cid] = True
            elif kind == 'false':
                approvals[cid] = False
            elif kind == 'approved':
                approvals[cid] = {'approved': True}
            elif kind == 'override':
                s = by_name.get(call['tool_name'])
                args = self.valid_args(s) if s else {}
                if s and self.chance(0.25):
                    args = self.broken_args(args, {})
                    if not isinstance(args, dict):
                        args = {'unexpected': 1}
                approvals[cid] = {'approved': True, 'override_args': args}
            else:
                approvals[cid] = {'denied': self.rng.choice(DENY_MESSAGES)}
        calls: dict[str, Any] = {}
        for call in deferred.get('calls', []):
            cid = call['tool_call_id']
            if self.chance(0.04):
                continue
            kind = self.pick({'value': 40, 'retry': 20, 'tool_return': 20, 'object': 10})
            if kind == 'value':
                calls[cid] = self.rng.choice([42, 'clicked', 3.5, True, None, [1, 2]])
            elif kind == 'object':
                calls[cid] = {'typed': 2, 'ok': True}
            elif kind == 'retry':
                calls[cid] = {'retry': self.rng.choice(RETRY_MESSAGES)}
            else:
                tr: dict[str, Any] = {'return_value': self.rng.choice([43, 'done', {'k': 'v'}])}
                if self.chance(0.6):
                    tr['metadata'] = {'m': 1}
                calls[cid] = {'tool_return': tr}
        out: dict[str, Any] = {}
        if approvals or self.chance(0.3):
            out['approvals'] = approvals
        if calls or self.chance(0.3):
            out['calls'] = calls
        ids = [c['tool_call_id'] for c in deferred.get('approvals', []) + deferred.get('calls', [])]
        if ids and self.chance(0.25):
            out['metadata'] = {self.rng.choice(ids): {'approved_by': 'alice'}}
        if self.chance(0.04):
            out.setdefault('calls', {})['c999'] = 'stray'
        return out

    def next_run(self, prev: dict[str, Any] | None, sc: dict[str, Any]) -> dict[str, Any]:
        run: dict[str, Any] = {}
        if prev is None:
            run['prompt'] = self.rng.choice(['go', 'Roll the die, my guess is 4', 'What is 40 + 2?', 'Tidy up the files.'])
            if self.chance(0.02):
                run['prompt'] = None
        elif prev.get('deferred') and self.chance(0.85):
            run['prompt'] = None if self.chance(0.85) else 'and continue'
            run['deferred_tool_results'] = self.deferred_results(prev['deferred'])
        else:
            kind = self.pick({'prompt': 14, 'null': 1.5, 'stray_results': 0.5})
            run['prompt'] = self.rng.choice(['again', 'Now greet Bob.', 'one more time']) if kind == 'prompt' else None
            if kind == 'stray_results':
                run['deferred_tool_results'] = {'calls': {'c1': 'late'}}
        if self.chance(0.12):
            run['deps'] = self.deps_value()
        return run

    # ------------------------------------------------------------------ the scenario

    def scenario(self) -> dict[str, Any]:
        rng = self.rng
        sc: dict[str, Any] = {'name': f'fz{self.seed}_{self.index:05d}', 'note': f'generated (seed {self.seed}, index {self.index})'}
        agent: dict[str, Any] = {}
        sc['agent'] = agent
        test_model = self.chance(0.08)
        output_kind = self.pick({'text': 40, 'text_or_deferred': 22, 'structured': 20, 'structured_or_deferred': 18})
        self.allows_deferred = output_kind.endswith('_or_deferred')
        if output_kind in ('structured', 'structured_or_deferred'):
            agent['output'] = {output_kind: self.output_schema()}
        elif output_kind != 'text' or self.chance(0.3):
            agent['output'] = output_kind
        if self.chance(0.7):
            agent['retries'] = self.pick({0: 2, 1: 4, 2: 3, 3: 2})
        if self.chance(0.3):
            agent['output_retries'] = self.pick({0: 1, 1: 2, 2: 2, 3: 1})
        if self.chance(0.6):
            agent['end_strategy'] = self.rng.choice(['early', 'graceful', 'exhaustive'])
        if self.chance(0.15):
            agent['system_prompt'] = 'You are a helpful assistant.'
        if self.chance(0.07):
            agent['tool_timeout'] = rng.choice([0.05, 1.0])
        self.build_tools(sc, test_model)
        if self.deps_kind != 'any' or self.chance(0.6):
            agent['deps'] = self.deps_value()
        caps = self.capabilities(sc)
        if caps:
            agent['capabilities'] = caps
        if self.chance(0.12):
            limits: dict[str, Any] = {}
            if self.chance(0.6):
                limits['request_limit'] = rng.randint(1, 5)
            if not limits or self.chance(0.5):
                limits['tool_calls_limit'] = rng.randint(0, 4)
            agent['usage_limits'] = limits
        if self.chance(0.12):
            agent['model_settings'] = {'tool_choice': self.tool_choice()}
        if self.hook_log or self.chance(0.45):
            if self.hook_log and (test_model or self.chance(0.75)):
                agent['parallel_mode'] = 'sequential'
            elif self.hook_log:
                self.one_call_per_response = True
            else:
                agent['parallel_mode'] = 'sequential'
        if test_model and len(self.slots) > 1 and any(s.base in RISKY_BASES or s.returns == 'concat' for s in self.slots):
            # TestModel calls every tool in one step: an execution that ends the run would race
            # the other executions
            agent['parallel_mode'] = 'sequential'
        if self.chance(0.1):
            self.id_style = 'per_response'

        if test_model:
            return self.test_model_scenario(sc)
        return self.scripted_scenario(sc)

    def test_model_scenario(self, sc: dict[str, Any]) -> dict[str, Any]:
        names = [s.name for s in self.slots]
        if names and self.chance(0.4):
            opts: dict[str, Any] = {'call_tools': self.rng.sample(names, self.rng.randint(1, min(2, len(names))))}
            if self.chance(0.5):
                opts['seed'] = self.rng.randint(0, 5)
            sc['model'] = {'test': opts}
        elif self.chance(0.3):
            sc['model'] = {'test': {'seed': self.rng.randint(1, 5)}}
        else:
            sc['model'] = 'test'
        sc['runs'] = [{'prompt': 'go'}]
        if self.chance(0.3):
            sc['runs'].append({'prompt': 'again'})
        result, _, err = self.ref.execute(sc)
        if err is not None:
            raise Rejected(err)
        return sc

    def scripted_scenario(self, sc: dict[str, Any]) -> dict[str, Any]:
        script: list[list[dict[str, Any]]] = []
        sc['model'] = {'script': script}
        sc['runs'] = []
        n_runs = self.pick({1: 5, 2: 4, 3: 2, 4: 1})
        prev: dict[str, Any] | None = None
        state: dict[str, Any] = {'defs': None}
        consumed = 0
        result: dict[str, Any] | None = None
        r = -1
        while r + 1 < n_runs or (prev is not None and prev.get('deferred') and r + 1 < 5 and self.chance(0.7)):
            r += 1
            del script[consumed:]  # responses the previous run never asked for
            run = self.next_run(prev, sc)
            if r >= 1 and 'deferred_tool_results' not in run and self.chance(0.12):
                self.with_history(run, sc)
            sc['runs'].append(run)
            n_in_run = 0
            # First guess at what the model is shown: the previous request's tools.
            if state['defs'] is None:
                state['defs'] = self.initial_defs(sc)
            for _ in range(self.pick({1: 3, 2: 3, 3: 2})):
                if self.id_style == 'per_response':
                    self.ids = 0
                script.append(self.response(state, sc, n_in_run))
                n_in_run += 1
            for _attempt in range(6):
                result, consumed, err = self.ref.execute(sc)
                if err is not None:
                    raise Rejected(err)
                assert result is not None
                if result['tool_defs']:
                    state['defs'] = result['tool_defs'][-1]
                this = result['runs'][r]
                exhausted = this['error'] and this['error']['type'] == 'ScriptExhausted'
                if not exhausted or not self.chance(0.9):
                    break
                if self.id_style == 'per_response':
                    self.ids = 0
                script.append(self.response(state, sc, n_in_run))
                n_in_run += 1
            assert result is not None
            prev = result['runs'][r]
        del script[consumed:]
        if self.chance(0.1):
            script.append([{'text': 'spare response'}])
        if not any('deferred_tool_results' in r for r in sc['runs']) and self.chance(0.1):
            # Now and then calls without ids (the framework makes them up; the normalisation hides
            # them, except in calculate_answer's metadata, which carries the raw id).
            by_name = {s.name: s for s in self.slots}
            for resp in script:
                for p in resp:
                    slot = by_name.get(p.get('tool_call', {}).get('name'))
                    if 'tool_call' in p and (slot is None or slot.base != 'calculate_answer') and self.chance(0.3):
                        p['tool_call'].pop('id', None)
        return sc

    def with_history(self, run: dict[str, Any], sc: dict[str, Any]) -> None:
        """Start the run from a raw history: the scenario's own messages so far, maybe cut short."""
        history = self.ref.all_messages(sc)
        cut = self.pick({0: 5, 1: 3, 2: 2})
        if len(history) - cut < 1:
            cut = 0
        if not history:
            return
        history = history[: len(history) - cut]
        run['message_history'] = history
        last = history[-1]
        pending_calls = last.get('kind') == 'response' and any(p.get('part_kind') == 'tool-call' for p in last['parts'])
        if last.get('kind') == 'request' or pending_calls:
            run['prompt'] = None if self.chance(0.7) else 'continue please'
        elif run.get('prompt') is None:
            run['prompt'] = 'and now?'

    def initial_defs(self, sc: dict[str, Any]) -> list[dict[str, Any]]:
        """The tool definitions of the first request: found by running the scenario with one empty script."""
        probe = copy.deepcopy(sc)
        probe['model'] = {'script': []}
        probe['runs'] = probe['runs'][:1]
        result, _, _ = self.ref.execute(probe)
        if result and result['tool_defs']:
            return result['tool_defs'][0]
        return []


class Rejected(Exception):
    """The reference runner refused a candidate: a generator bug."""


def generate(ref: Reference, seed: int, index: int, attempts: int = 8) -> dict[str, Any]:
    """A valid scenario for (seed, index); retries with a derived seed when a candidate is rejected."""
    last = ''
    for attempt in range(attempts):
        g = Gen(ref, seed, index if attempt == 0 else index + 1_000_000 * attempt)
        try:
            sc = g.scenario()
        except Rejected as e:
            ref.stats.rejected += 1
            ref.stats.reasons.append(f'seed {seed} index {index} attempt {attempt}: {e}')
            last = str(e)
            continue
        racy = nondeterminism(sc)
        if racy is not None:
            ref.stats.rejected += 1
            ref.stats.reasons.append(f'seed {seed} index {index} attempt {attempt}: timing-dependent: {racy}')
            last = racy
            continue
        sc['name'] = f'fz{seed}_{index:05d}'
        sc['note'] = f'generated (seed {seed}, index {index})'
        return sc
    raise RuntimeError(f'no valid scenario for seed {seed} index {index}: {last}')
