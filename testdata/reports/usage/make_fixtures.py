#!/usr/bin/env python3
"""Writes the `skein usage` fixtures under projects/ (run from this directory).

Two projects, three sessions, one regular subagent, one internal (acompact) agent. The
expected figures are derived by hand in README.md and asserted in
crates/skein/tests/usage.rs.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ALPHA = os.path.join(HERE, "projects", "-home-me-alpha")
BETA = os.path.join(HERE, "projects", "-home-me-beta")


def usage(i=0, o=0, cc=0, cr=0, m5=None, h1=None, speed=None):
    u = {
        "input_tokens": i,
        "cache_creation_input_tokens": cc,
        "cache_read_input_tokens": cr,
        "output_tokens": o,
        "service_tier": "standard",
    }
    if m5 is not None or h1 is not None:
        u["cache_creation"] = {
            "ephemeral_5m_input_tokens": m5 or 0,
            "ephemeral_1h_input_tokens": h1 or 0,
        }
    if speed:
        u["speed"] = speed
    return u


def assistant(session, uuid, ts, mid, rid, model, u, side=False, block="text", agent=None):
    rec = {
        "parentUuid": None,
        "isSidechain": side,
        "userType": "external",
        "cwd": "/home/me/proj",
        "sessionId": session,
        "version": "2.1.100",
    }
    if agent:
        rec["agentId"] = agent
    msg = {"type": "message", "role": "assistant", "model": model,
           "content": [{"type": block, "text": "…"}], "stop_reason": None,
           "stop_sequence": None, "usage": u}
    if mid is not None:
        msg = {"id": mid, **msg}
    rec["message"] = msg
    if rid is not None:
        rec["requestId"] = rid
    rec["type"] = "assistant"
    rec["uuid"] = uuid
    if ts is not None:
        rec["timestamp"] = ts
    return rec


def user(session, uuid, ts, text, tool_use_result=None):
    rec = {"parentUuid": None, "isSidechain": False, "sessionId": session,
           "version": "2.1.100", "type": "user",
           "message": {"role": "user", "content": text}, "uuid": uuid, "timestamp": ts}
    if tool_use_result is not None:
        rec["toolUseResult"] = tool_use_result
    return rec


def write(path, records, spaced=()):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for i, r in enumerate(records):
            if i in spaced:
                f.write(json.dumps(r) + "\n")  # "usage": {…} with spaces
            else:
                f.write(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n")


OPUS7 = "claude-opus-4-7"
OPUS6 = "claude-opus-4-6"
SONNET = "claude-sonnet-4-6"
HAIKU = "claude-haiku-4-5-20251001"

# Session a1: streaming placeholders, a synthetic line, a line without message.id, a line
# without timestamp, an Agent result whose toolUseResult carries usage (ignored).
A1 = "sess-a1"
write(os.path.join(ALPHA, "sess-a1.jsonl"), [
    user(A1, "a-u1", "2026-05-31T23:49:00.000Z", "hello"),
    assistant(A1, "a-1", "2026-05-31T23:50:00.000Z", "msg_a1", "req_a1", OPUS7,
              usage(10, 1, 100, 1000, m5=100, h1=0), block="thinking"),
    assistant(A1, "a-2", "2026-05-31T23:50:01.000Z", "msg_a1", "req_a1", OPUS7,
              usage(10, 5, 100, 1000, m5=100, h1=0)),
    assistant(A1, "a-3", "2026-05-31T23:50:02.000Z", "msg_a1", "req_a1", OPUS7,
              usage(10, 50, 100, 1000, m5=100, h1=0), block="tool_use"),
    assistant(A1, "a-syn", "2026-05-31T23:51:00.000Z", "msg_syn", None, "<synthetic>",
              usage(999, 999)),
    user(A1, "a-u2", "2026-06-01T00:09:00.000Z", "agent done",
         tool_use_result={"agentId": "a1b2", "usage": {"input_tokens": 5000, "output_tokens": 5000}}),
    assistant(A1, "a-4", "2026-06-01T00:10:00.000Z", "msg_a2", "req_a2", SONNET,
              usage(20, 200, 0, 2000)),
    assistant(A1, "a-5", "2026-06-01T00:15:00.000Z", None, None, OPUS7, usage(5, 5)),
    assistant(A1, "a-nt", None, "msg_nt", "req_nt", OPUS7, usage(100000, 100000)),
])

# Its regular subagent: one request written in two streaming lines; 1-hour cache writes.
write(os.path.join(ALPHA, "sess-a1", "subagents", "agent-a1b2.jsonl"), [
    assistant(A1, "s-1", "2026-06-01T00:05:00.000Z", "msg_s1", "req_s1", HAIKU,
              usage(7, 7, 700, 0, m5=0, h1=700), side=True, agent="a1b2"),
    assistant(A1, "s-2", "2026-06-01T00:05:01.000Z", "msg_s1", "req_s1", HAIKU,
              usage(7, 70, 700, 0, m5=0, h1=700), side=True, agent="a1b2"),
])

# Its internal compaction agent: replays msg_a1 under the same requestId (a duplicate copy)
# and under a new one with a bigger cache read (a sidechain replay), then makes its own call.
write(os.path.join(ALPHA, "sess-a1", "subagents", "agent-acompact-abc123.jsonl"), [
    assistant(A1, "c-1", "2026-05-31T23:50:02.000Z", "msg_a1", "req_a1", OPUS7,
              usage(10, 50, 100, 1000, m5=100, h1=0), side=True, agent="acompact-abc123"),
    assistant(A1, "c-2", "2026-05-31T23:50:02.000Z", "msg_a1", "req_a1_replay", OPUS7,
              usage(10, 50, 100, 50000, m5=100, h1=0), side=True, agent="acompact-abc123"),
    assistant(A1, "c-3", "2026-06-01T00:20:00.000Z", "msg_c1", "req_c1", OPUS7,
              usage(30, 300, 0, 3000), side=True, agent="acompact-abc123"),
])

# Session b1: a plain request and a fast-mode one.
B1 = "sess-b1"
write(os.path.join(BETA, "sess-b1.jsonl"), [
    user(B1, "b-u1", "2026-06-07T11:59:00.000Z", "hi"),
    assistant(B1, "b-1", "2026-06-07T12:00:00.000Z", "msg_b1", "req_b1", OPUS7,
              usage(1, 10, 0, 100)),
    assistant(B1, "b-f", "2026-06-07T13:00:00.000Z", "msg_f1", "req_f1", OPUS6,
              usage(1000, 100, speed="fast")),
])

# Session b2: an old-style resume file that starts with a copy of b1's first request (same
# uuid, message id, requestId and sessionId), then its own request written with spaces in the
# JSON, an agent_progress copy of a subagent message whose agent file is gone, and a request
# of a model without a price.
B2 = "sess-b2"
progress = {
    "parentUuid": "b2-1", "isSidechain": False, "sessionId": B2, "version": "2.1.39",
    "type": "progress",
    "data": {"message": {"type": "assistant", "timestamp": "2026-06-08T09:05:00.000Z",
                         "message": {"model": HAIKU, "id": "msg_p1", "type": "message",
                                     "role": "assistant", "content": [],
                                     "usage": usage(4, 40, 0, 400)},
                         "requestId": "req_p1", "uuid": "p-1"},
             "normalizedMessages": [], "type": "agent_progress", "agentId": "gone1"},
    "uuid": "b2-p", "timestamp": "2026-06-08T09:05:00.000Z",
}
write(os.path.join(BETA, "sess-b2.jsonl"), [
    assistant(B1, "b-1", "2026-06-07T12:00:00.000Z", "msg_b1", "req_b1", OPUS7,
              usage(1, 10, 0, 100)),
    assistant(B2, "b2-1", "2026-06-08T09:00:00.000Z", "msg_b2", "req_b2", OPUS7,
              usage(2, 20, 0, 200)),
    progress,
    assistant(B2, "b2-u", "2026-06-08T10:00:00.000Z", "msg_u1", "req_u1", "claude-future-9",
              usage(1, 1)),
], spaced=(1,))
