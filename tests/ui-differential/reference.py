"""Runs a UI scenario through Pydantic AI's own adapter and prints the normalised event stream.

    python reference.py SCENARIO.json PROTOCOL        # PROTOCOL: ag_ui, vercel_ai_v5, vercel_ai_v6

The scenario scripts the model (what each response streams), the tools and the request bodies
(one per turn); see README.md. The events of every turn are printed as one JSON list per line,
normalised by normalize.py (ids in order of first appearance, timestamps dropped).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from pydantic_ai import Agent, CallDeferred, ModelRetry, StructuredDict
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from pydantic_ai.tools import DeferredToolRequests, Tool

sys.path.insert(0, str(Path(__file__).parent))
from normalize import normalize, parse_sse  # noqa: E402


class ScriptedError(Exception):
    pass


def build_agent(scenario: dict) -> Agent:
    responses = scenario['responses']
    calls = {'n': 0}

    async def stream(messages, info: AgentInfo):
        index = calls['n']
        calls['n'] += 1
        if index >= len(responses):
            raise ScriptedError('the scenario has no more responses')
        for position, part in enumerate(responses[index]):
            if 'text' in part:
                for piece in part['text']:
                    yield piece
            elif 'thinking' in part:
                for piece in part['thinking']:
                    yield {position: DeltaThinkingPart(content=piece)}
            elif 'tool_call' in part:
                call = part['tool_call']
                for n, piece in enumerate(call['args']):
                    if n == 0:
                        yield {position: DeltaToolCall(name=call['name'], json_args=piece, tool_call_id=call['id'])}
                    else:
                        yield {position: DeltaToolCall(json_args=piece)}
            elif 'error' in part:
                raise ScriptedError(part['error'])

    agent_kwargs = {}
    output = scenario.get('output')
    if output is not None:
        agent_kwargs['output_type'] = [StructuredDict(output['schema'], name=output.get('name')), DeferredToolRequests]
    else:
        agent_kwargs['output_type'] = [str, DeferredToolRequests]
    agent = Agent(FunctionModel(stream_function=stream), **agent_kwargs)

    for spec in scenario.get('tools', []):
        agent.tool_plain(**_tool_kwargs(spec))(_tool_fn(spec))
    return agent


def _tool_kwargs(spec: dict) -> dict:
    return {'name': spec['name'], 'requires_approval': spec.get('approval', False), 'retries': 2}


def _tool_fn(spec: dict):
    state = {'calls': 0}
    returns = spec.get('returns')
    retry_first = spec.get('retry_first')
    fails = spec.get('fails')

    def fn(**kwargs):
        state['calls'] += 1
        if retry_first is not None and state['calls'] == 1:
            raise ModelRetry(retry_first)
        if fails is not None:
            raise RuntimeError(fails)
        if spec.get('external'):
            raise CallDeferred()
        return returns

    params = spec.get('parameters', {})
    fn.__signature__ = _signature(params)
    fn.__annotations__ = {name: _py_type(kind) for name, kind in params.items()}
    fn.__doc__ = spec.get('description', '')
    return fn


def _py_type(kind: str):
    return {'string': str, 'integer': int, 'number': float, 'boolean': bool}[kind]


def _signature(params: dict):
    import inspect

    return inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=_py_type(k)) for n, k in params.items()]
    )


async def run_turn(agent: Agent, protocol: str, body: dict) -> list[dict]:
    raw = json.dumps(body).encode()
    if protocol == 'ag_ui':
        from pydantic_ai.ui.ag_ui import AGUIAdapter

        adapter = AGUIAdapter(agent=agent, run_input=AGUIAdapter.build_run_input(raw), accept='text/event-stream')
    else:
        from pydantic_ai.ui.vercel_ai import VercelAIAdapter

        version = 6 if protocol == 'vercel_ai_v6' else 5
        adapter = VercelAIAdapter(
            agent=agent, run_input=VercelAIAdapter.build_run_input(raw), accept='text/event-stream', sdk_version=version
        )
    chunks = []
    # toolsmith reports a step's tool results in call order once its calls have finished, which
    # is Pydantic AI's `parallel_ordered_events` mode; its default reports them as they finish,
    # an order that depends on thread timing for sync tools (and so could not be compared).
    with Agent.parallel_tool_call_execution_mode('parallel_ordered_events'):
        async for text in adapter.encode_stream(adapter.run_stream()):
            chunks.append(text)
    return parse_sse(''.join(chunks))


async def main() -> None:
    scenario = json.loads(Path(sys.argv[1]).read_text())
    protocol = sys.argv[2]
    agent = build_agent(scenario)
    turns = scenario['requests'][protocol]
    out = []
    for body in turns:
        try:
            out.append(await run_turn(agent, protocol, body))
        except Exception as e:  # a refused request: its error type and message
            out.append([{'refused': type(e).__name__}])
    print(json.dumps(normalize(out), sort_keys=True))


if __name__ == '__main__':
    asyncio.run(main())
