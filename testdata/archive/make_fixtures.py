#!/usr/bin/env python3
"""Writes the hand-made session used by crates/skein/tests/archive.rs: one main transcript
with a progress record, a Skill call, Edit and Write calls, a planted AWS key and GitHub
token, and a Task call that spawned one subagent (with its agent-<id>.meta.json sidecar).
The files are committed; re-run only to change them."""
import json, os

SID = "11111111-aaaa-4bbb-8ccc-000000000001"
AID = "a7f3c2e1d9b8"
PROJ = "projects/-home-me-proj"
BASE = {"sessionId": SID, "cwd": "/home/me/proj", "gitBranch": "feature/archive",
        "version": "2.1.200", "userType": "external"}

def rec(**kw):
    r = dict(kw)
    for k, v in BASE.items():
        r.setdefault(k, v)
    return json.dumps(r, separators=(",", ":"))

def usage(i, o):
    return {"input_tokens": i, "output_tokens": o, "cache_creation_input_tokens": 100,
            "cache_read_input_tokens": 1000}

def asst(uuid, parent, ts, mid, content, model="claude-opus-4-7"):
    return rec(type="assistant", uuid=uuid, parentUuid=parent, timestamp=ts, requestId="req_" + mid,
               message={"id": mid, "role": "assistant", "model": model, "content": content,
                        "usage": usage(10, 20)})

def result(uuid, parent, ts, tid, text, extra=None):
    r = dict(type="user", uuid=uuid, parentUuid=parent, timestamp=ts,
             message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": text}]})
    if extra:
        r.update(extra)
    return rec(**r)

main = [
    rec(type="user", uuid="u1", parentUuid=None, timestamp="2026-01-05T14:03:22.123Z",
        message={"role": "user", "content": "Set up the release notes; my token is ghp_R8x2Kq9LmZ4vT7nW3pY6sD1fH5jC0bA2eG8u"}),
    rec(type="progress", uuid="p1", parentUuid="u1", timestamp="2026-01-05T14:03:22.500Z",
        data={"type": "hook_progress", "hookEvent": "UserPromptSubmit"}),
    asst("a1", "p1", "2026-01-05T14:03:25.000Z", "msg_1",
         [{"type": "tool_use", "id": "toolu_skill", "name": "Skill", "input": {"skill": "release-notes"}}]),
    result("r1", "a1", "2026-01-05T14:03:26.000Z", "toolu_skill", "Launching skill: release-notes"),
    asst("a2", "r1", "2026-01-05T14:03:30.000Z", "msg_2",
         [{"type": "tool_use", "id": "toolu_edit", "name": "Edit",
           "input": {"file_path": "/home/me/proj/src/lib.rs", "old_string": "a", "new_string": "b"}}]),
    result("r2", "a2", "2026-01-05T14:03:31.000Z", "toolu_edit", "ok"),
    asst("a3", "r2", "2026-01-05T14:03:35.000Z", "msg_3",
         [{"type": "tool_use", "id": "toolu_write", "name": "Write",
           "input": {"file_path": "/home/me/proj/.env", "content": "AWS_ACCESS_KEY_ID=AKIAQ3EGRVLPXJ5KZ7WN\n"}}]),
    result("r3", "a3", "2026-01-05T14:03:36.000Z", "toolu_write", "written"),
    asst("a4", "r3", "2026-01-05T14:03:40.000Z", "msg_4",
         [{"type": "tool_use", "id": "toolu_task", "name": "Task",
           "input": {"subagent_type": "Explore", "description": "Look around", "prompt": "Find the changelog"}}]),
    result("r4", "a4", "2026-01-05T14:04:30.000Z", "toolu_task",
           "CHANGELOG.md is at the root.\nagentId: " + AID,
           {"toolUseResult": {"agentId": AID, "status": "completed"}}),
    asst("a5", "r4", "2026-01-05T14:04:35.000Z", "msg_5",
         [{"type": "text", "text": "Done: release notes drafted."}]),
]

agent = [
    rec(type="user", uuid="x1", parentUuid=None, isSidechain=True, agentId=AID,
        timestamp="2026-01-05T14:03:41.000Z", message={"role": "user", "content": "Find the changelog"}),
    asst("x2", "x1", "2026-01-05T14:03:45.000Z", "msg_x2",
         [{"type": "tool_use", "id": "toolu_x1", "name": "Glob", "input": {"pattern": "CHANGELOG*"}}],
         model="claude-haiku-4-5"),
    result("x3", "x2", "2026-01-05T14:03:46.000Z", "toolu_x1", "CHANGELOG.md"),
    asst("x4", "x3", "2026-01-05T14:04:29.000Z", "msg_x4",
         [{"type": "text", "text": "CHANGELOG.md is at the root."}], model="claude-haiku-4-5"),
]
# The agent's records are sidechain records of the agent.
agent = [a.replace('"parentUuid"', '"isSidechain":true,"agentId":"%s","parentUuid"' % AID, 1)
         if '"isSidechain"' not in a else a for a in agent]

os.makedirs(f"{PROJ}/{SID}/subagents", exist_ok=True)
with open(f"{PROJ}/{SID}.jsonl", "w") as f:
    f.write("\n".join(main) + "\n")
with open(f"{PROJ}/{SID}/subagents/agent-{AID}.jsonl", "w") as f:
    f.write("\n".join(agent) + "\n")
with open(f"{PROJ}/{SID}/subagents/agent-{AID}.meta.json", "w") as f:
    f.write(json.dumps({"agentType": "Explore", "description": "Look around", "toolUseId": "toolu_task"}) + "\n")
