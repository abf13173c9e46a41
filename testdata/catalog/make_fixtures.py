#!/usr/bin/env python3
"""Writes the catalog's fixture history: known words in every kind of place.

projects/-home-me-widgets/<A>.jsonl          main session A (prompt, thinking, text, Bash, result, Task)
projects/-home-me-widgets/<A>/subagents/agent-a1b2c3.jsonl (+ .meta.json)   its subagent
projects/-home-me-other/<B>.jsonl            session B, plus a request copied from A (resume copy)

Each searchable word appears in exactly one place:
  flamingo  prompt (A)         walrus   thinking (A)      zeppelin  text (A)
  quokka    Bash command (A)   narwhal  tool result (A)   pangolin  subagent prompt
  axolotl   subagent text      capybara prompt (B)
Run from this directory: python3 make_fixtures.py
"""
import json, os

A = "11111111-1111-4111-8111-111111111111"
B = "22222222-2222-4222-8222-222222222222"
AG = "a1b2c3"

def usage(i, o, cr=0, cc=0):
    return {"input_tokens": i, "output_tokens": o, "cache_read_input_tokens": cr,
            "cache_creation_input_tokens": cc}

def rec(t, uuid, parent, ts, sid, **kw):
    r = {"type": t, "uuid": uuid, "parentUuid": parent, "timestamp": ts, "sessionId": sid,
         "cwd": "/home/me/widgets", "gitBranch": "main", "version": "2.1.20", "isSidechain": False}
    r.update(kw)
    return r

def asst(uuid, parent, ts, sid, mid, rid, content, u, **kw):
    return rec("assistant", uuid, parent, ts, sid, requestId=rid,
               message={"id": mid, "role": "assistant", "model": "claude-sonnet-4-5",
                        "content": content, "usage": u}, **kw)

def user(uuid, parent, ts, sid, content, **kw):
    return rec("user", uuid, parent, ts, sid, message={"role": "user", "content": content}, **kw)

a = [
    user("a-u1", None, "2026-03-01T10:00:00.000Z", A, "Please fix the flamingo authentication bug"),
    asst("a-a1", "a-u1", "2026-03-01T10:00:01.000Z", A, "msg_a1", "req_a1",
         [{"type": "thinking", "thinking": "The walrus token expires too early", "signature": "x"}],
         usage(10, 5, 100, 20)),
    asst("a-a2", "a-a1", "2026-03-01T10:00:02.000Z", A, "msg_a1", "req_a1",
         [{"type": "text", "text": "I will check the zeppelin module first."}], usage(10, 30, 100, 20)),
    asst("a-a3", "a-a2", "2026-03-01T10:00:03.000Z", A, "msg_a1", "req_a1",
         [{"type": "tool_use", "id": "toolu_01", "name": "Bash",
           "input": {"command": "grep -rn quokka src/", "description": "Find it"}}],
         usage(10, 42, 100, 20)),
    user("a-u2", "a-a3", "2026-03-01T10:00:04.500Z", A,
         [{"type": "tool_result", "tool_use_id": "toolu_01", "is_error": False,
           "content": "src/auth.rs:12: let narwhal = refresh();"}]),
    asst("a-a4", "a-u2", "2026-03-01T10:00:05.000Z", A, "msg_a2", "req_a2",
         [{"type": "tool_use", "id": "toolu_02", "name": "Task",
           "input": {"subagent_type": "Explore", "description": "look", "prompt": "Search for the config"}}],
         usage(200, 60, 0, 0)),
    user("a-u3", "a-a4", "2026-03-01T10:01:00.000Z", A,
         [{"type": "tool_result", "tool_use_id": "toolu_02",
           "content": [{"type": "text", "text": "Done.\nagentId: a1b2c3"}]}],
         toolUseResult={"agentId": AG}),
    {"type": "ai-title", "aiTitle": "Fix the authentication bug", "sessionId": A},
]
sub = [
    user("s-u1", None, "2026-03-01T10:00:06.000Z", A, "Search for the pangolin config",
         isSidechain=True, agentId=AG),
    asst("s-a1", "s-u1", "2026-03-01T10:00:07.000Z", A, "msg_s1", "req_s1",
         [{"type": "text", "text": "Found the axolotl setting in config.toml"}], usage(50, 25),
         isSidechain=True, agentId=AG),
]
b = [
    user("b-u1", None, "2026-03-02T09:00:00.000Z", B, "hello capybara, continue"),
    # A resume copy of session A's request: counted once across the whole input.
    asst("a-a2", "b-u1", "2026-03-01T10:00:02.000Z", A, "msg_a1", "req_a1",
         [{"type": "text", "text": "(copied from the earlier session)"}], usage(10, 30, 100, 20)),
    asst("b-a1", "a-a2", "2026-03-02T09:00:01.000Z", B, "msg_b1", "req_b1",
         [{"type": "text", "text": "Continuing."}], usage(7, 3)),
]

def write(path, records):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")

root = "projects"
write(f"{root}/-home-me-widgets/{A}.jsonl", a)
write(f"{root}/-home-me-widgets/{A}/subagents/agent-{AG}.jsonl", sub)
with open(f"{root}/-home-me-widgets/{A}/subagents/agent-{AG}.meta.json", "w") as f:
    json.dump({"agentType": "Explore", "toolUseId": "toolu_02"}, f)
write(f"{root}/-home-me-other/{B}.jsonl", b)
