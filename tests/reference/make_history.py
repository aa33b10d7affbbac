"""Produces the raw message histories embedded in some of `tests/scenarios/*.json` (`runs[k].message_history`).

Usage: python make_history.py NAME        (prints the raw `ModelMessagesTypeAdapter` JSON of history NAME)

Each history is produced by running Pydantic AI itself (the catalogue tools of the shared reference runner `run_pydantic_ai.py` and a
scripted `FunctionModel`), so it carries every field the library writes (timestamps, run ids, usage, ...).
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import ToolSearch
from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits

import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', 'shared', 'conformance', 'reference'))
import run_pydantic_ai as ref  # noqa: E402  (the shared reference runner)


def scripted(script: list[list[dict[str, Any]]]) -> FunctionModel:
    counter = {'k': 0}

    def fn(messages: list[Any], info: AgentInfo) -> Any:
        k = counter['k']
        counter['k'] += 1
        return ref.build_response(script[k])

    return FunctionModel(fn, profile=ref.LOCAL_SEARCH_PROFILE)


def tc(name: str, args: Any, id: str) -> dict[str, Any]:
    return {'tool_call': {'name': name, 'args': args, 'id': id}}


async def retried_returns() -> list[Any]:
    """always_retry fails once (attempt 1 of 2), then a validation failure of add, then add succeeds and a text answer."""
    agent = Agent(
        scripted(
            [
                [tc('always_retry', {'reason': 'not yet'}, 'hist_r1')],
                [tc('add', {'x': 'one', 'y': 2}, 'hist_a1')],
                [tc('add', {'x': 1, 'y': 2}, 'hist_a2')],
                [{'text': 'gave up on always_retry; 1 + 2 = 3'}],
            ]
        ),
        tools=[ref.build_tool({'use': 'always_retry'}), ref.build_tool({'use': 'add'})],
        retries=2,
        system_prompt='You are a careful assistant.',
    )
    result = await agent.run('try always_retry, then add 1 and 2')
    return result.all_messages()


async def unexecuted_calls() -> list[Any]:
    """A run that failed on tool_calls_limit: the history ends with a response whose two calls never ran."""
    agent = Agent(
        scripted([[tc('echo', {'message': 'first'}, 'hist_e1'), tc('add', {'x': 20, 'y': 22}, 'hist_a1')]]),
        tools=[ref.build_tool({'use': 'echo'}), ref.build_tool({'use': 'add'})],
    )
    run = None
    try:
        async with agent.iter('echo and add', usage_limits=UsageLimits(tool_calls_limit=1)) as run:
            async for _ in run:
                pass
    except Exception:  # noqa: BLE001
        pass
    assert run is not None
    return run.all_messages()


async def tool_search_discovered() -> list[Any]:
    """search_tools discovers mortgage_calculator (deferred), which is then called; a text answer ends the run."""
    agent = Agent(
        scripted(
            [
                [tc('search_tools', {'queries': ['mortgage']}, 'hist_s1')],
                [tc('mortgage_calculator', {'principal': 100000, 'rate': 6, 'years': 15}, 'hist_m1')],
                [{'text': 'About $843.86/month.'}],
            ]
        ),
        tools=[
            ref.build_tool({'use': 'echo'}),
            ref.build_tool({'use': 'mortgage_calculator', 'defer_loading': True}),
            ref.build_tool({'use': 'delete_file', 'defer_loading': True}),
        ],
        capabilities=[ToolSearch()],
    )
    result = await agent.run('mortgage for 100k at 6% over 15 years?')
    return result.all_messages()


HISTORIES = {
    'retried_returns': retried_returns,
    'unexecuted_calls': unexecuted_calls,
    'tool_search_discovered': tool_search_discovered,
}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[1] not in HISTORIES:
        print(f'usage: python make_history.py {{{"|".join(HISTORIES)}}}', file=sys.stderr)
        return 2
    messages = asyncio.run(HISTORIES[argv[1]]())
    print(json.dumps(ModelMessagesTypeAdapter.dump_python(messages, mode='json'), indent=1, ensure_ascii=False))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
