"""Reference side of the workloads beyond BENCH.md: concurrent_10k, history_1000, search_100k on Pydantic AI.

The toolsmith side is `toolsmith-bench` (crates/toolsmith-bench/src/workloads/{concurrent,history,search_100k}.rs);
BENCHMARKS.md ("Workloads beyond BENCH.md") describes the workloads. The common rules are BENCH.md's: one process,
one asyncio loop, GC enabled, a validation run whose failed check aborts, warm-ups, `gc.collect()`, timed runs,
medians of wall (`perf_counter_ns`) and process CPU time (`process_time_ns`), progress on stderr.

Usage (the venv of scripts/reference-venv.sh, which has Pydantic AI 2.68.0):
    py="$(scripts/reference-venv.sh)"
    "$py" crates/toolsmith-bench/reference/extra_workloads.py [--json] [--quick] [--only NAME]
    "$py" crates/toolsmith-bench/reference/extra_workloads.py --dump-history > history.json   # the history's JSON
    "$py" crates/toolsmith-bench/reference/extra_workloads.py --check-history FILE  # FILE reads as the history?
    "$py" crates/toolsmith-bench/reference/extra_workloads.py --concurrent-child N  # internal: one memory sample

NAME is concurrent_10k, history_1000 or search_100k. With --json the result object is the last line of stdout:
the same shape as the shared reference script's, "impl": "pydantic-ai". The corpus generator is a copy of the
shared reference script's (BENCH.md §2), checked against BENCH.md's sha256 at start; this script needs nothing
from the shared folder.
"""
from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone

# ---------------------------------------------------------------------------------------------
# Corpus generator: a copy of reference_pydantic_ai.py's (BENCH.md §2).

SERVICES = [
    ('github', 'GitHub'), ('gitlab', 'GitLab'), ('slack', 'Slack'), ('jira', 'Jira'),
    ('confluence', 'Confluence'), ('gdrive', 'Google Drive'), ('gmail', 'Gmail'), ('gcal', 'Google Calendar'),
    ('notion', 'Notion'), ('linear', 'Linear'), ('zendesk', 'Zendesk'), ('hubspot', 'HubSpot'),
    ('salesforce', 'Salesforce'), ('stripe', 'Stripe'), ('paypal', 'PayPal'), ('shopify', 'Shopify'),
    ('twilio', 'Twilio'), ('sendgrid', 'SendGrid'), ('dropbox', 'Dropbox'), ('box', 'Box'),
    ('asana', 'Asana'), ('trello', 'Trello'), ('figma', 'Figma'), ('airtable', 'Airtable'),
    ('datadog', 'Datadog'), ('pagerduty', 'PagerDuty'), ('sentry', 'Sentry'), ('aws', 'AWS'),
    ('gcp', 'Google Cloud'), ('azure', 'Azure'), ('docker', 'Docker Hub'), ('k8s', 'Kubernetes'),
    ('postgres', 'PostgreSQL'), ('redis', 'Redis'), ('mongodb', 'MongoDB'), ('snowflake', 'Snowflake'),
    ('bigquery', 'BigQuery'), ('okta', 'Okta'), ('discord', 'Discord'), ('teams', 'Microsoft Teams'),
]  # 40
VERBS = [
    ('get', 'Get the {o} with the given identifier'),
    ('list', 'List every {o} the caller can see'),
    ('search', 'Search for each {o} that matches a text query'),
    ('update', 'Update the fields of an existing {o}'),
    ('delete', 'Delete the {o} permanently'),
    ('send', 'Send the {o} to the listed recipients'),
    ('archive', 'Archive the {o} so it no longer shows up'),
    ('export', 'Export the {o} as a CSV file'),
    ('create', 'Create a new {o}'),
    ('assign', 'Assign the {o} to a user'),
    ('close', 'Close the {o} and record the reason'),
    ('approve', 'Approve the pending {o}'),
    ('schedule', 'Schedule the {o} for a later time'),
]  # 13
OBJECTS = [
    'issue', 'pull_request', 'message', 'channel', 'ticket', 'file', 'folder', 'account', 'invoice', 'payment',
    'customer', 'event', 'email', 'page', 'database', 'record', 'user', 'team', 'project', 'task',
    'label', 'repository', 'branch', 'commit', 'deployment', 'cluster', 'bucket', 'secret', 'order', 'product',
    'subscription', 'report', 'dashboard', 'alert', 'metric', 'comment', 'review', 'release', 'webhook', 'contact',
    'lead', 'document', 'meeting', 'incident', 'role', 'group', 'workflow',
]  # 47
FILLERS = [
    'Supports pagination.',
    'Returns a JSON summary.',
    'Requires an API token with write scope.',
    'Results are cached for five minutes.',
    'Use this for bulk operations.',
    'Dates use ISO 8601.',
    'Fails if the caller lacks permission.',
    'Idempotent when called with the same arguments.',
    'Rate limited to 100 calls per minute.',
    'Includes metadata such as owner and timestamps.',
    'Works across all projects in the workspace.',
]  # 11
PARAMS = [
    ('id', 'string', 'Unique identifier of the {o}.'),
    ('query', 'string', 'Free-text search query.'),
    ('limit', 'integer', 'Maximum number of results to return.'),
    ('offset', 'integer', 'Number of results to skip.'),
    ('owner', 'string', 'Login of the {o} owner.'),
    ('title', 'string', 'Short title of the {o}.'),
    ('body', 'string', 'Main text content of the {o}.'),
    ('labels', 'array', 'Labels to attach to the {o}.'),
    ('priority', 'integer', 'Priority from 1 (highest) to 5 (lowest).'),
    ('due_date', 'string', 'Due date in YYYY-MM-DD format.'),
    ('amount', 'number', 'Amount in the account currency.'),
    ('currency', 'string', 'Three-letter ISO 4217 currency code.'),
    ('notify', 'boolean', 'Whether to notify watchers of the {o}.'),
    ('dry_run', 'boolean', 'Validate the request without applying it.'),
    ('assignee', 'string', 'User to assign the {o} to.'),
    ('status', 'string', 'New status of the {o}.'),
    ('channel', 'string', 'Channel or queue that receives the {o}.'),
    ('tags', 'array', 'Tags used to filter results.'),
    ('timeout', 'number', 'Timeout in seconds.'),
    ('include_archived', 'boolean', 'Whether to include archived items.'),
]  # 20
SHA256_10000_SERVICE = 'c35709fc484236500bbd483cac2395c5f39410f78d0830eea122ea73b8660cdd'


def tool_spec(i: int, naming: str) -> tuple[str, str, dict]:
    """(name, description, parameters JSON schema) of corpus tool i; naming is 'plain' or 'service'.

    Past i = 9999 the service names get a five-digit suffix (`%04d`), so all names stay distinct at 100,000
    although the (service, verb, object) triples repeat every 24,440 tools.
    """
    svc, svc_title = SERVICES[i % 40]
    verb, phrase = VERBS[i % 13]
    obj = OBJECTS[i % 47]
    o = obj.replace('_', ' ')
    name = f'tool_{i:04d}' if naming == 'plain' else f'{svc}_{verb}_{obj}_{i:04d}'
    description = phrase.format(o=o) + f' in {svc_title}. ' + FILLERS[i % 11]
    properties = {}
    for k in range(3):
        pname, ptype, pdesc = PARAMS[(i + 7 * k) % 20]
        if ptype == 'array':
            prop = {'type': 'array', 'items': {'type': 'string'}, 'description': pdesc.format(o=o)}
        else:
            prop = {'type': ptype, 'description': pdesc.format(o=o)}
        properties[pname] = prop
    names = list(properties)
    schema = {'type': 'object', 'properties': properties, 'required': names[:2], 'additionalProperties': False}
    return name, description, schema


def corpus(n: int, naming: str) -> list[tuple[str, str, dict]]:
    return [tool_spec(i, naming) for i in range(n)]


def corpus_jsonl(specs) -> str:
    return ''.join(
        json.dumps({'name': n, 'description': d, 'parameters': s}, separators=(',', ':')) + '\n' for n, d, s in specs
    )


# ---------------------------------------------------------------------------------------------
# Library and harness

def log(*a):
    print(*a, file=sys.stderr, flush=True)


def setup_library():
    global pydantic_ai, Agent, Tool, ModelResponse, ModelRequest, TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
    global ModelMessagesTypeAdapter, RequestUsage, FunctionModel
    import pydantic_ai
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import (ModelMessagesTypeAdapter, ModelRequest, ModelResponse, TextPart, ToolCallPart,
                                      ToolReturnPart, UserPromptPart)
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RequestUsage


async def measure(name, run, warmup, iters, per=1):
    """Medians of `iters` timed calls of `await run()` after `warmup` untimed ones, in microseconds, divided by
    `per`. What a call returns is released after its clocks are read (as on the toolsmith side).
    """
    for _ in range(warmup):
        await run()
    gc.collect()
    wall, cpu = [], []
    for _ in range(iters):
        t0, c0 = time.perf_counter_ns(), time.process_time_ns()
        kept = await run()
        c1, t1 = time.process_time_ns(), time.perf_counter_ns()
        del kept
        wall.append((t1 - t0) / 1000 / per)
        cpu.append((c1 - c0) / 1000 / per)
    med, cmed = statistics.median(wall), statistics.median(cpu)
    log(f'  {name:26s} median {med:12.1f} us   min {min(wall):12.1f}   max {max(wall):12.1f}   '
        f'cpu median {cmed:12.1f} us   (warmup {warmup}, n={iters})')
    return med, cmed


FULL = {
    'mode': 'full',
    'concurrent_10k': (0, 3), 'concurrent_runs': 10_000, 'concurrent_single': (3, 21), 'concurrent_samples': 3,
    'history_1000': (5, 51),
    'search_tools': 100_000, 'search_build': (1, 5), 'search_query': (3, 21),
}
QUICK = {
    'mode': 'quick',
    'concurrent_10k': (0, 1), 'concurrent_runs': 1_000, 'concurrent_single': (0, 3), 'concurrent_samples': 1,
    'history_1000': (1, 5),
    'search_tools': 10_000, 'search_build': (0, 2), 'search_query': (1, 5),
}


# ---------------------------------------------------------------------------------------------
# concurrent_10k

async def add(x: int, y: int) -> int:
    """Add two integers."""
    return x + y


async def sleepy_model(messages, info):
    await asyncio.sleep(0.010)
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart('add', {'x': 1, 'y': 2}, tool_call_id='c0')])
    return ModelResponse(parts=[TextPart('done')])


def concurrent_agent():
    return Agent(FunctionModel(sleepy_model), tools=[add])


async def batch(agent, runs):
    return await asyncio.gather(*(agent.run('go') for _ in range(runs)))


def check_run(r):
    msgs = r.all_messages()
    assert r.output == 'done' and len(msgs) == 4, r
    assert [(p.tool_call_id, p.content) for p in msgs[2].parts] == [('c0', 3)], msgs[2]


def check_all(results, runs):
    assert len(results) == runs, len(results)
    for r in results:
        check_run(r)


async def w_concurrent_10k(cfg):
    runs = cfg['concurrent_runs']
    agent = concurrent_agent()
    check_all(await batch(agent, runs), runs)
    log(f'  ({runs} runs at once, each two 10 ms model waits and one call of `add`'
        + (', 1,000 instead of 10,000 in quick mode)' if runs != 10_000 else ')'))

    async def timed_batch():
        results = await batch(agent, runs)
        assert all(r.output == 'done' for r in results)
        return results

    b = await measure('concurrent_10k', timed_batch, *cfg['concurrent_10k'])
    check_run(await agent.run('go'))
    s = await measure('concurrent_10k_single_run', lambda: agent.run('go'), *cfg['concurrent_single'])

    async def sleeps():
        await asyncio.sleep(0.010)
        await asyncio.sleep(0.010)

    z = await measure('concurrent_10k_sleeps_only', sleeps, *cfg['concurrent_single'])
    per_run = b[1] / runs
    log(f'  {"concurrent_10k":26s} cpu per run {per_run:9.2f} us under concurrency, {s[1]:9.2f} us alone: '
        f'ratio {per_run / s[1]:.2f}')
    return b, s, z


def status_kib(key):
    with open('/proc/self/status') as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ':'))


def concurrent_child(runs):
    """Fresh process: one run, the RSS, VmHWM reset, one batch of `runs`, the peak RSS."""
    setup_library()

    async def main():
        agent = concurrent_agent()
        check_run(await agent.run('go'))
        gc.collect()
        before = status_kib('VmRSS')
        try:
            with open('/proc/self/clear_refs', 'w') as f:
                f.write('5')
            reset = True
        except OSError:
            reset = False
        results = await batch(agent, runs)
        hwm = status_kib('VmHWM')
        check_all(results, runs)
        return {'runs': runs, 'rss_before_kib': before, 'vmhwm_kib': hwm, 'hwm_reset': reset}

    print(json.dumps(asyncio.run(main())))


def measure_concurrent_memory(runs, samples):
    values = []
    for _ in range(samples):
        out = subprocess.run([sys.executable, os.path.abspath(__file__), '--concurrent-child', str(runs)],
                             capture_output=True, text=True, check=True)
        v = json.loads(out.stdout.strip().splitlines()[-1])
        if not v['hwm_reset']:
            log("  (could not reset VmHWM in the child: its peak RSS includes the setup's)")
        values.append((v['vmhwm_kib'] - v['rss_before_kib']) * 1024)
    med = statistics.median(values)
    log(f'  {"concurrent_10k":26s} peak RSS {med / 2**20:8.1f} MiB above the start ({med / runs:8.0f} B per run)   '
        f'({samples} child processes, {runs} runs each)')
    return med / 2**20, med / runs


# ---------------------------------------------------------------------------------------------
# history_1000

HISTORY_PAIRS = 500
HISTORY_TOOLS = ['get_weather', 'search_docs', 'add', 'lookup_user']
HISTORY_T0 = datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone.utc)
# sha256 of dump_json(history(500)); toolsmith's port of `history` (history.rs) must write the same bytes.
SHA256_HISTORY_1000 = 'c3ad0318c65533e847544ccdfae80461995f81b563d4141e9a02c566d67623e3'


def history_ts(i):
    return HISTORY_T0 + timedelta(seconds=3 * i, microseconds=(i * 7919) % 1_000_000)


def history(pairs):
    """500 request/response pairs: user prompts; responses with text and one or two tool calls (small JSON args);
    the tool returns (an object or an integer); text answers. Timestamps, usage and run ids throughout."""
    msgs, pending = [], []
    for k in range(pairs):
        run_id = f'run-{k // 5:04d}'
        if pending:
            parts = [
                ToolReturnPart(name, {'ok': True, 'value': 10 * k + j, 'note': f'result {k}.{j}'} if j % 2 == 0
                               else 10 * k + j, tool_call_id=cid, timestamp=history_ts(2 * k))
                for j, (name, cid) in enumerate(pending)
            ]
        else:
            parts = [UserPromptPart(f'Question {k}: what is the status of item {k * 13 % 97}?', timestamp=history_ts(2 * k))]
        msgs.append(ModelRequest(parts=parts, run_id=run_id))
        pending = []
        if k % 5 == 4:
            rparts, finish = [TextPart(f'The answer to question {k} is {k * 31 % 101}.')], 'stop'
        else:
            n = 1 + k % 2
            rparts = [TextPart(f'Calling {n} tools for step {k}.')] if k % 3 == 0 else []
            for j in range(n):
                name, cid = HISTORY_TOOLS[(k + j) % 4], f'call_{k:03d}_{j}'
                args = {'x': k, 'y': j, 'q': f'item {k}', 'w': k / 4, 'flags': [j % 2 == 0, k % 2 == 0]}
                rparts.append(ToolCallPart(name, args, tool_call_id=cid))
                pending.append((name, cid))
            finish = 'tool_call'
        msgs.append(ModelResponse(parts=rparts, usage=RequestUsage(input_tokens=100 + 7 * k, output_tokens=10 + k % 17),
                                  model_name='function:model:', timestamp=history_ts(2 * k + 1), finish_reason=finish,
                                  run_id=run_id))
    return msgs


async def w_history_1000(cfg):
    msgs = history(HISTORY_PAIRS)
    text = ModelMessagesTypeAdapter.dump_json(msgs)
    sha = hashlib.sha256(text).hexdigest()
    assert sha == SHA256_HISTORY_1000, sha
    parsed = ModelMessagesTypeAdapter.validate_json(text)
    assert parsed == msgs and ModelMessagesTypeAdapter.dump_json(parsed) == text
    log(f'  (the history: {len(msgs)} messages, {len(text)} bytes of JSON)')

    async def parse():
        return ModelMessagesTypeAdapter.validate_json(text)

    async def serialise():
        return ModelMessagesTypeAdapter.dump_json(parsed)

    p = await measure('history_1000_parse', parse, *cfg['history_1000'])
    s = await measure('history_1000_serialise', serialise, *cfg['history_1000'])
    return p, s


def check_history(path):
    """Whether the JSON in `path` (toolsmith's `history_to_json` of the history) reads as the same history."""
    setup_library()
    with open(path, 'rb') as f:
        parsed = ModelMessagesTypeAdapter.validate_json(f.read())
    want = history(HISTORY_PAIRS)
    assert len(parsed) == len(want), len(parsed)
    for i, (a, b) in enumerate(zip(parsed, want)):
        assert a == b, (i, a, b)
    log(f'{path}: the same {len(parsed)} messages')


# ---------------------------------------------------------------------------------------------
# search_100k: Pydantic AI's local tool search (its keyword strategy, the only local one it has: 'bm25' and
# 'regex' are named native strategies that run on the provider's side). The path is the agent's own: the
# `ToolSearchToolset` around a `FunctionToolset` of the deferred tools gives the `search_tools` tool
# (`get_tools`, once, untimed), and each search is `call_tool('search_tools', {'queries': [q]}, ...)`.

SEARCH_QUERIES = ['create issue github', 'send slack message', 'export invoice csv',
                  'schedule meeting google calendar', 'delete secret aws']
# What Pydantic AI's keyword search returns for SEARCH_QUERIES[0], by corpus size (toolsmith checks the same).
EXPECTED_FIRST = {
    10_000: ['github_create_issue_1880', 'github_get_issue_0000', 'gcal_create_issue_0047', 'github_create_webhook_0320',
             'dropbox_create_issue_0658', 'github_create_document_0840', 'azure_create_issue_1269',
             'github_create_role_1360', 'github_create_channel_2400', 'hubspot_create_issue_2491'],
    100_000: ['github_create_issue_1880', 'github_create_issue_26320', 'github_create_issue_50760',
              'github_create_issue_75200', 'github_create_issue_99640', 'github_get_issue_0000', 'gcal_create_issue_0047',
              'github_create_webhook_0320', 'dropbox_create_issue_0658', 'github_create_document_0840'],
}


async def noop_tool(**kwargs):
    return 'ok'


async def w_search_100k(cfg):
    from pydantic_ai._run_context import RunContext
    from pydantic_ai.toolsets import FunctionToolset
    from pydantic_ai.toolsets._tool_search import ToolSearchToolset, keywords_search_fn
    from pydantic_ai.usage import RunUsage

    n = cfg['search_tools']
    t0 = time.perf_counter()
    specs = corpus(n, 'service')
    assert len({name for name, _, _ in specs}) == n
    tools = []
    for name, d, s in specs:
        t = Tool.from_schema(noop_tool, name=name, description=d, json_schema=s)
        t.defer_loading = True
        tools.append(t)
    function_toolset = FunctionToolset(tools)
    ctx = RunContext(deps=None, model=FunctionModel(sleepy_model), usage=RunUsage())
    toolset = ToolSearchToolset(wrapped=function_toolset)
    search_tool = (await toolset.get_tools(ctx))['search_tools']
    assert len(search_tool.corpus) == n
    log(f'  (built {n} deferred tools and the search tool in {time.perf_counter() - t0:.2f} s, outside the timing'
        + ('; 10,000 instead of 100,000 in quick mode)' if n != 100_000 else ')'))

    async def search(ts, q):
        r = await ts.call_tool('search_tools', {'queries': [q]}, ctx, search_tool)
        return [m['name'] for m in r['discovered_tools']]

    for q in SEARCH_QUERIES:
        got = await search(toolset, q)
        brute = keywords_search_fn(ctx, [q], search_tool.corpus)[:10]  # Pydantic AI's own scan, stable sort
        assert got == brute, (q, got, brute)
        log(f'  keywords {q!r} -> {got}')
    first = await search(toolset, SEARCH_QUERIES[0])
    assert first == EXPECTED_FIRST[n], first

    async def cold():
        # A new toolset, as every run has: its first search builds the keyword postings.
        return await search(ToolSearchToolset(wrapped=function_toolset), SEARCH_QUERIES[0])

    async def warm_first():
        return await search(toolset, SEARCH_QUERIES[0])

    async def queries():
        return [await search(toolset, q) for q in SEARCH_QUERIES]

    c = await measure('search_100k_cold_keywords', cold, *cfg['search_build'])
    w = await measure('search_100k_warm_first_query', warm_first, *cfg['search_query'])
    q = await measure('search_100k_query_keywords', queries, *cfg['search_query'], per=len(SEARCH_QUERIES))
    build = (c[0] - w[0], c[1] - w[1])
    log(f'  {"search_100k_build_keywords":26s} {build[0]:12.1f} us   cpu {build[1]:12.1f} us   '
        '(a new toolset\'s first search less a later search of the same query)')
    return build, q


# ---------------------------------------------------------------------------------------------

async def run_all(cfg, only):
    res, cpu, extra = {}, {}, {}

    def wanted(name):
        return only is None or only == name or only.startswith(name + '_')

    if wanted('concurrent_10k'):
        b, s, z = await w_concurrent_10k(cfg)
        res['concurrent_10k'], cpu['concurrent_10k'] = b
        res['concurrent_10k_single_run'], cpu['concurrent_10k_single_run'] = s
        res['concurrent_10k_sleeps_only'], cpu['concurrent_10k_sleeps_only'] = z
        extra['concurrent_10k_runs'] = cfg['concurrent_runs']
        extra['concurrent_10k_cpu_per_run_us'] = cpu['concurrent_10k'] / cfg['concurrent_runs']
        extra['concurrent_10k_cpu_ratio'] = extra['concurrent_10k_cpu_per_run_us'] / cpu['concurrent_10k_single_run']
    if wanted('history_1000'):
        (res['history_1000_parse'], cpu['history_1000_parse']), (res['history_1000_serialise'],
                                                                  cpu['history_1000_serialise']) = await w_history_1000(cfg)
    if wanted('search_100k'):
        (res['search_100k_build_keywords'], cpu['search_100k_build_keywords']), (
            res['search_100k_query_keywords'], cpu['search_100k_query_keywords']) = await w_search_100k(cfg)
        extra['search_100k_tools'] = cfg['search_tools']
        extra['search_100k_note'] = ('Pydantic AI has one local search strategy (keywords); its bm25 and regex '
                                     'strategies run on the provider side, so there is nothing local to time')
    return res, cpu, extra


def main():
    args = sys.argv[1:]
    if '--concurrent-child' in args:
        concurrent_child(int(args[args.index('--concurrent-child') + 1]))
        return
    if '--dump-history' in args:
        setup_library()
        sys.stdout.buffer.write(ModelMessagesTypeAdapter.dump_json(history(HISTORY_PAIRS)))
        return
    if '--check-history' in args:
        check_history(args[args.index('--check-history') + 1])
        return

    cfg = QUICK if '--quick' in args else FULL
    only = args[args.index('--only') + 1] if '--only' in args else None
    sha = hashlib.sha256(corpus_jsonl(corpus(10_000, 'service')).encode()).hexdigest()
    assert sha == SHA256_10000_SERVICE, f'corpus sha256 {sha}: the copied generator differs from BENCH.md'

    t_import = time.perf_counter()
    setup_library()
    log(f'pydantic-ai-slim {pydantic_ai.__version__} (import {time.perf_counter() - t_import:.2f} s); Python '
        f'{sys.version.split()[0]}; cpus {os.cpu_count()}; load average {os.getloadavg()}; mode {cfg["mode"]}')
    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    res, cpu, extra = asyncio.run(run_all(cfg, only))
    if 'concurrent_10k' in res:
        mib, per_run = measure_concurrent_memory(cfg['concurrent_runs'], cfg['concurrent_samples'])
        extra['concurrent_10k_peak_rss_mb'] = mib
        extra['concurrent_10k_rss_per_run_bytes'] = per_run
    log(f'total {time.perf_counter() - t0:.1f} s; load average {os.getloadavg()}')

    out = {'impl': 'pydantic-ai', 'version': pydantic_ai.__version__, 'mode': cfg['mode'],
           'loadavg': [round(load0, 2), round(os.getloadavg()[0], 2)]}
    for k, v in res.items():
        out[k] = round(v, 1)
    for k, v in extra.items():
        out[k] = round(v, 2 if k.endswith('_ratio') else 1) if isinstance(v, float) else v
    out['cpu_us'] = {k: round(v, 1) for k, v in cpu.items()}
    if '--json' in args:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f'{k}: {v}')


if __name__ == '__main__':
    main()
