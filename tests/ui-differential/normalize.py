"""Normalisation shared by both sides of the UI comparison (compare.py applies it to the Rust side).

Generated ids (thread, run, message ids, Vercel's `id`/`messageId`) are replaced by `id-N` in order
of first appearance, tool-call ids the scenario chose are kept, and timestamps are dropped.
"""

from __future__ import annotations

import json

ID_KEYS = {'threadId', 'runId', 'messageId', 'parentMessageId', 'id', 'approvalId', 'entityId'}
DROP_KEYS = {'timestamp'}


def parse_sse(text: str) -> list:
    events = []
    for block in text.split('\n\n'):
        data = [line[len('data:') :].lstrip(' ') for line in block.splitlines() if line.startswith('data:')]
        if not data:
            continue
        payload = '\n'.join(data)
        events.append('[DONE]' if payload == '[DONE]' else json.loads(payload))
    return events


def normalize(turns: list) -> list:
    ids: dict[str, str] = {}

    def walk(value):
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if k in DROP_KEYS:
                    continue
                if k in ID_KEYS and isinstance(v, str) and not v.startswith(('pyd_ai_', 'call_', 'int-')):
                    v = ids.setdefault(v, f'id-{len(ids) + 1}')
                else:
                    v = walk(v)
                out[k] = v
            return out
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return [walk(t) for t in turns]
