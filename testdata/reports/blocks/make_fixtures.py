#!/usr/bin/env python3
"""Writes the `skein usage blocks` / `skein statusline` fixtures under projects/ (run from this
directory). Nine requests of claude-opus-4-7 with input tokens only (request n has 10^(n-1),
so every sum names its requests), spread over four 5-hour blocks around Europe/Berlin's switch
to summer time (2026-03-29T01:00Z), plus a resume copy and a sidechain replay that
deduplication removes. The expectations are derived by hand in README.md.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.join(HERE, "projects", "-home-me-blocks")
MAIN = "b10c0001-0000-4000-8000-000000000001"
RESUMED = "b10c0002-0000-4000-8000-000000000002"

# (request number, instant)
REQUESTS = [
    (1, "2026-03-28T20:10:00.000Z"),
    (2, "2026-03-28T22:40:00.000Z"),
    (3, "2026-03-29T00:59:00.000Z"),
    (4, "2026-03-29T01:30:00.000Z"),
    (5, "2026-03-29T05:00:00.000Z"),
    (6, "2026-03-29T11:30:00.000Z"),
    (7, "2026-03-29T16:00:00.000Z"),
    (8, "2026-03-29T21:00:00.000Z"),
    (9, "2026-03-29T22:00:00.000Z"),
]


def assistant(session, n, ts, rid=None, side=False, agent=None, uuid=None):
    rec = {
        "parentUuid": f"u{n}",
        "isSidechain": side,
        "userType": "external",
        "cwd": "/home/me/blocks",
        "sessionId": session,
        "version": "2.1.100",
        "type": "assistant",
        "requestId": rid or f"req_{n}",
        "message": {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": "claude-opus-4-7",
            "content": [{"type": "text", "text": f"answer {n}"}],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": 10 ** (n - 1),
                "output_tokens": 0,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        },
        "uuid": uuid or f"a{n}",
        "timestamp": ts,
    }
    if agent:
        rec["agentId"] = agent
    return rec


def user(session, n, ts):
    return {
        "parentUuid": f"a{n - 1}" if n > 1 else None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/me/blocks",
        "sessionId": session,
        "version": "2.1.100",
        "type": "user",
        "message": {"role": "user", "content": f"request {n}"},
        "uuid": f"u{n}",
        "timestamp": ts,
    }


def write(path, records):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")


def main():
    records = []
    for n, ts in REQUESTS:
        records += [user(MAIN, n, ts), assistant(MAIN, n, ts)]
    write(os.path.join(PROJECT, MAIN + ".jsonl"), records)
    # An old-style resume file: a copy of request 5 (same message and request id, the original
    # session's sessionId) counted once.
    ts5 = dict(REQUESTS)[5]
    write(os.path.join(PROJECT, RESUMED + ".jsonl"), [assistant(MAIN, 5, ts5)])
    # An internal compaction agent replaying request 6 under another requestId: dropped.
    ts6 = dict(REQUESTS)[6]
    write(
        os.path.join(PROJECT, MAIN, "subagents", "agent-acompact-b10c.jsonl"),
        [assistant(MAIN, 6, ts6, rid="req_6_replay", side=True, agent="acompact-b10c",
                   uuid="c6")],
    )


if __name__ == "__main__":
    main()
