"""Normalisation shared by both sides of the UI comparison (compare.py applies it to the Rust side).

Generated ids (thread, run, message ids, Vercel's `id`/`messageId`) are replaced by `id-N` in order
of first appearance, tool-call ids the scenario chose are kept, and a timestamp becomes the form
it has (`<ms>`: AG-UI's milliseconds; `<iso>`: an ISO 8601 UTC time as Pydantic writes it), so that
a missing or malformed one still differs.
"""

from __future__ import annotations

import json
import re

ID_KEYS = {'threadId', 'runId', 'messageId', 'parentMessageId', 'id', 'approvalId', 'entityId'}
TIMESTAMP_KEYS = {'timestamp'}
ISO = re.compile(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?Z')


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
                if k in TIMESTAMP_KEYS:
                    if isinstance(v, int) and not isinstance(v, bool) and v > 1_500_000_000_000:
                        v = '<ms>'
                    elif isinstance(v, str) and ISO.fullmatch(v):
                        v = '<iso>'
                    out[k] = v
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
