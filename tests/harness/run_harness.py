"""Runs a harness scenario (tests/harness/README.md) on the real pydantic-ai-harness and prints the
normalised result, to be compared with toolsmith's (the `harness_runner` example).

    py="$(scripts/harness-venv.sh)"
    "$py" tests/harness/run_harness.py tests/harness/scenarios/NAME.json
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import tempfile
import warnings
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ModelRetry, Tool, ToolDenied, ToolReturn
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel


class ScriptExhausted(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Values: generated text

def expand(v: Any) -> Any:
    """`{"$repeat": {"text", "times"}}` and `{"$lines": {"prefix", "count"}}` become text."""
    if isinstance(v, dict):
        if set(v) == {'$repeat'}:
            return v['$repeat']['text'] * v['$repeat']['times']
        if set(v) == {'$lines'}:
            spec = v['$lines']
            return '\n'.join(f"{spec.get('prefix', 'line ')}{i}" for i in range(spec['count']))
        return {k: expand(x) for k, x in v.items()}
    if isinstance(v, list):
        return [expand(x) for x in v]
    return v


# ---------------------------------------------------------------------------------------------
# Tools

GATES: dict[str, asyncio.Event] = {}


def gate(name: str) -> asyncio.Event:
    """Named gates a scenario's tools wait on (`wait_for`) and open (`opens`)."""
    return GATES.setdefault(name, asyncio.Event())


def make_tool(entry: dict[str, Any]) -> Tool[Any]:
    name = entry['name']
    returns = expand(entry.get('returns', 'ok'))
    fail_times = entry.get('fail_times', 0)
    retry_message = entry.get('retry_message', 'not yet')
    metadata = entry.get('return_metadata')
    schema = entry.get('schema') or {'type': 'object', 'properties': {}}

    def function(ctx: Any, **kwargs: Any) -> Any:
        if ctx.retry < fail_times:
            raise ModelRetry(f'{retry_message} ({ctx.retry + 1})')
        value = kwargs if returns == '$args' else returns
        if metadata is not None or entry.get('wrap'):
            return ToolReturn(return_value=value, metadata=metadata)
        return value

    if entry.get('wait_for') or entry.get('opens') or entry.get('async') or entry.get('yields'):
        sync_function = function

        async def function(ctx: Any, **kwargs: Any) -> Any:  # type: ignore[no-redef]
            try:
                value, error = sync_function(ctx, **kwargs), None
            except ModelRetry as e:
                value, error = None, e
            if entry.get('opens'):
                gate(entry['opens']).set()
            if entry.get('wait_for'):
                await gate(entry['wait_for']).wait()
            for _ in range(entry.get('yields', 0)):
                await asyncio.sleep(0)
            if error is not None:
                raise error
            return value

    tool = Tool.from_schema(function, name=name, description=entry.get('description', name), json_schema=schema,
                            takes_ctx=True)
    if entry.get('requires_approval'):
        tool.requires_approval = True
    if entry.get('metadata') is not None:
        tool.metadata = entry['metadata']
    if entry.get('sequential'):
        tool.sequential = True
    return tool


# ---------------------------------------------------------------------------------------------
# Capabilities from the spec entries

class MemoryStore:
    """An in-memory `OverflowStore` whose handle is the key (toolsmith's default store)."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}

    async def write(self, key: str, data: bytes) -> str:
        self.data[key] = data
        return key

    async def read(self, handle: str) -> bytes:
        try:
            return self.data[handle]
        except KeyError:
            raise FileNotFoundError(handle) from None


def summarize_echo_head(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    prompt = messages[-1].parts[-1].content  # type: ignore[union-attr]
    return ModelResponse(parts=[TextPart(f'  summary: {prompt[:90]!s} [{len(prompt)} chars]  ')])


def summarize_fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    raise RuntimeError('summariser down')


def summarizer(name: str) -> Any:
    from pydantic_ai_harness.tool_output_limits import Summarize

    if name == 'echo_head':
        return dict(model=FunctionModel(summarize_echo_head))
    if name == 'fail':
        return dict(model=FunctionModel(summarize_fail))
    if name == 'first_line':
        return dict(summarize=lambda tool, text: f'{tool}: {text.splitlines()[0] if text else ""}')
    raise ValueError(f'unknown summariser {name}')


JUDGE_LOG: list[dict[str, Any]] = []


def judge_model(name: str) -> FunctionModel:
    """The scripted judging models (the Rust runner defines the same)."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = messages[-1].parts[-1].content  # type: ignore[union-attr]
        JUDGE_LOG.append({
            'model': name,
            'instructions': info.instructions,
            'prompt': prompt,
            'output_tools': [{'name': t.name, 'description': t.description, 'parameters': t.parameters_json_schema} for t in info.output_tools],
            'allow_text_output': info.allow_text_output,
        })
        if name == 'judge_fail':
            raise RuntimeError('judge down')
        answer = {'judge_yes': 'yes', 'judge_no': 'no', 'judge_unsure': 'unsure'}.get(name)
        if answer is None:  # judge_danger
            answer = 'yes' if 'danger' in prompt else 'no'
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {'response': answer})])

    return FunctionModel(fn)


def action(spec: Any, store_dir: str) -> Any:
    from pydantic_ai_harness.tool_output_limits import Passthrough, Spill, Summarize, Truncate, TruncationStrategy

    if isinstance(spec, str):
        spec = {spec: {}}
    (kind, args), = spec.items()
    args = dict(args or {})
    if 'then' in args:
        args['then'] = action(args['then'], store_dir)
    if kind == 'Passthrough':
        return Passthrough()
    if kind == 'Truncate':
        if 'strategy' in args:
            args['strategy'] = TruncationStrategy(args['strategy'])
        return Truncate(**args)
    if kind == 'Spill':
        return Spill(**args)
    if kind == 'Summarize':
        fn = args.pop('function')
        return Summarize(**summarizer(fn), **args)
    raise ValueError(kind)


def bands(spec: list[Any], store_dir: str) -> list[Any]:
    from pydantic_ai_harness.tool_output_limits import Band

    return [Band(over=b['over'], action=action(b['action'], store_dir)) for b in spec]


def tool_output_limits(args: dict[str, Any], store_dir: str) -> Any:
    from pydantic_ai_harness.tool_output_limits import LocalFileStore, ToolOutputLimits, indented_json, json_lines

    kw: dict[str, Any] = {}
    if 'bands' in args:
        kw['bands'] = bands(args['bands'], store_dir)
    if 'per_tool' in args:
        kw['per_tool'] = {k: bands(v, store_dir) for k, v in args['per_tool'].items()}
    if 'tool_filter' in args:
        kw['tool_filter'] = args['tool_filter']
    for key in ('over_tokens', 'strip_ansi', 'summary_prompt'):
        if key in args:
            kw[key] = args[key]
    if 'serializer' in args:
        kw['serializer'] = {'indented_json': indented_json, 'json_lines': json_lines}[args['serializer']]
    store = args.get('store', 'memory')
    if store == 'memory':
        kw['store'] = MemoryStore()
    else:
        cfg = store['LocalFileStore'] or {}
        after = cfg.get('cleanup_after')
        kw['store'] = LocalFileStore(base_dir=Path(store_dir), cleanup_after=None if after is None else timedelta(seconds=after))
    return ToolOutputLimits(**kw)


def capability(entry: Any, store_dir: str) -> Any:
    if isinstance(entry, str):
        entry = {entry: {}}
    (name, args), = entry.items()
    args = args or {}
    if name == 'ToolOutputLimits':
        return tool_output_limits(args, store_dir)
    if name == 'ToolCallJudge':
        from pydantic_ai_harness.tool_call_judge import ToolCallJudge

        kw = dict(args)
        return ToolCallJudge(judge_model(kw.pop('model')), **kw)
    if name == 'ApprovalReviewer':
        from pydantic_ai_harness.approval_reviewer import ApprovalReviewer

        kw = dict(args)
        return ApprovalReviewer(judge_model(kw.pop('model')), **kw)
    if name == 'BackgroundTools':
        from pydantic_ai_harness.background_tools import BackgroundTools

        return BackgroundTools(**args)
    if name == 'CodeMode':
        from pydantic_ai_harness import CodeMode

        return CodeMode(**args)
    if name == 'RepairToolArguments':
        from pydantic_ai_harness.repair_tool_arguments import RepairToolArguments

        return RepairToolArguments()
    raise ValueError(f'unsupported capability {name}')


# ---------------------------------------------------------------------------------------------
# Normalising

KEPT = ('tool_name', 'content', 'args', 'tool_call_id')


def part(p: dict[str, Any]) -> dict[str, Any]:
    out = {'part_kind': p['part_kind']}
    for key in KEPT:
        if p.get(key) is not None:
            out[key] = p[key]
    if p['part_kind'] == 'tool-return' and p.get('metadata') is not None:
        out['metadata'] = nested_parts(p['metadata'])
    return out


def nested_parts(metadata: Any) -> Any:
    """CodeMode's metadata (the calls its snippet made and their returns), each part kept as the history's are."""
    if not isinstance(metadata, dict) or 'code_mode' not in metadata:
        return metadata
    out = dict(metadata)
    for key in ('tool_calls', 'tool_returns'):
        if isinstance(out.get(key), dict):
            out[key] = {
                i: {k: v for k, v in p.items() if k in ('part_kind', *KEPT) and v is not None}
                for i, p in out[key].items()
            }
    return out


ELAPSED = re.compile(r'(time limit exceeded: )[0-9.]+[a-zµ]+ >')


class Normaliser:
    def __init__(self, store_dir: str) -> None:
        self.ids: dict[str, str] = {}
        self.runs: dict[str, str] = {}
        self.store_dir = store_dir

    def messages(self, messages: list[ModelMessage]) -> list[dict[str, Any]]:
        raw = ModelMessagesTypeAdapter.dump_python(messages, mode='json')
        for m in raw:
            if m.get('run_id') and m['run_id'] not in self.runs:
                self.runs[m['run_id']] = f'run:{len(self.runs) + 1}'
        return [{'kind': m['kind'], 'parts': [part(p) for p in m['parts']]} for m in raw]

    def finish(self, v: Any) -> Any:
        if isinstance(v, dict):
            return {k: (self.id(x) if k == 'tool_call_id' and isinstance(x, str) else self.finish(x)) for k, x in v.items()}
        if isinstance(v, list):
            return [self.finish(x) for x in v]
        if isinstance(v, str):
            v = v.replace(self.store_dir, '<store>')
            # The time a snippet ran before its time limit stopped it.
            v = ELAPSED.sub(r'\1<elapsed> >', v)
            for raw, name in self.runs.items():
                v = v.replace(raw, name)
            # Tool-call ids inside spill handles (`run/call.retry`).
            for raw, name in self.ids.items():
                v = v.replace(f'/{raw}.', f'/{name}.')
        return v

    def id(self, raw: str) -> str:
        if raw not in self.ids:
            self.ids[raw] = f'id:{len(self.ids) + 1}'
        return self.ids[raw]


# ---------------------------------------------------------------------------------------------
# Running

HANDLE = re.compile(r"stored to handle '([^']*)'")


def last_handle(messages: list[ModelMessage]) -> str:
    """The handle of the last spill marker the model was shown (`$last_handle` in scripted args)."""
    found = ''
    for m in messages:
        for p in m.parts:
            content = getattr(p, 'content', None)
            if p.part_kind == 'tool-return' and isinstance(content, str):
                found = next(iter(HANDLE.findall(content)[-1:]), found)
    return found


def advice_cut(message: str) -> str:
    """An error's advice on where to raise the retry limit names each library's own API: cut."""
    cut = message.find(ADVICE)
    return message if cut < 0 else message[:cut + len(ADVICE)]


ADVICE = 'Consider raising the retry limit'


async def run(sc: dict[str, Any], store_dir: str) -> dict[str, Any]:
    norm = Normaliser(store_dir)
    script = sc['script']
    seen: list[list[ModelMessage]] = []
    tools_seen: list[list[dict[str, Any]]] = []

    def model_fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        k = len(seen)
        seen.append(list(messages))
        tools_seen.append([
            {'name': t.name, 'description': t.description, 'parameters': t.parameters_json_schema}
            for t in info.function_tools
        ])
        if k >= len(script):
            raise ScriptExhausted(f'no scripted response for request {k}')
        handle = last_handle(messages)
        parts: list[Any] = []
        for p in script[k]:
            if 'text' in p:
                parts.append(TextPart(p['text']))
            else:
                c = p['tool_call']
                args = c.get('args')
                if isinstance(args, dict):
                    args = {key: (handle if v == '$last_handle' else v) for key, v in args.items()}
                parts.append(ToolCallPart(c['name'], args, tool_call_id=c.get('id') or f'call_{k}_{len(parts)}'))
        return ModelResponse(parts=parts)

    caps = [capability(e, store_dir) for e in sc.get('capabilities', [])]
    tools = [make_tool(t) for t in sc.get('tools', [])]
    output_type: Any = [str, DeferredToolRequests] if sc.get('deferred') else str
    agent = Agent(FunctionModel(model_fn), tools=tools, capabilities=caps, retries=sc.get('retries', 1),
                  output_type=output_type)
    history: list[ModelMessage] | None = None
    runs_out = []
    JUDGE_LOG.clear()
    for r in sc.get('runs', [{'prompt': 'go'}]):
        try:
            results = None
            if 'approve' in r or 'deny' in r:
                results = DeferredToolResults(approvals={
                    **{i: True for i in r.get('approve', [])},
                    **{i: ToolDenied(m) for i, m in r.get('deny', {}).items()},
                })
            result = await agent.run(r.get('prompt'), message_history=history, deferred_tool_results=results)
            history = result.all_messages()
            out = result.output
            if isinstance(out, DeferredToolRequests):
                out = {'deferred': {'approvals': [c.tool_call_id for c in out.approvals],
                                    'calls': [c.tool_call_id for c in out.calls]}}
            runs_out.append({'output': out, 'requests': result.usage.requests})
        except Exception as e:  # noqa: BLE001
            runs_out.append({'error': {'type': type(e).__name__, 'message': advice_cut(str(e))}})
            if history is None:
                history = []
    requests = [norm.messages(m) for m in seen]
    out = {'runs': runs_out, 'requests': requests, 'history': norm.messages(history or [])}
    if sc.get('record_tools'):
        out['tools'] = tools_seen
    if JUDGE_LOG:
        out['judge_requests'] = list(JUDGE_LOG)
    return norm.finish(out)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print('usage: run_harness.py SCENARIO.json', file=sys.stderr)
        return 2
    with open(argv[1], encoding='utf-8') as f:
        sc = json.load(f)
    warnings.simplefilter('ignore')
    with tempfile.TemporaryDirectory() as store_dir:
        out = asyncio.run(run(sc, os.path.realpath(store_dir)))
    print(json.dumps(out, sort_keys=True, indent=1, ensure_ascii=False))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
