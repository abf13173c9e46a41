#!/usr/bin/env python3
"""Writes the bundled sample: a small Claude Code projects directory with one session that has
thinking, parallel tool calls, a tool error, a rewind branch, a compaction, a subagent (new
layout with .meta.json) and the usual metadata records. Synthetic; deterministic."""
import json, os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "projects", "-home-dev-widgets")
SID = "0b4c6f9e-1d2a-4e5f-8a9b-0c1d2e3f4a5b"
AID = "a1b2c3d4e5f60718"
CWD = "/home/dev/widgets"
lines, sub = [], []
t = [0]

def ts():
    t[0] += 1
    s = t[0]
    return f"2026-05-01T10:{s // 60:02d}:{s % 60:02d}.{(s * 37) % 1000:03d}Z"

def env(kind, uuid, parent, **kw):
    r = {"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": False, "sessionId": SID,
         "timestamp": ts(), "cwd": CWD, "gitBranch": "main", "version": "2.1.200", "userType": "external"}
    r.update(kw)
    return r

def user(uuid, parent, content, **kw):
    return env("user", uuid, parent, message={"role": "user", "content": content}, **kw)

def asst(uuid, parent, mid, req, block, out, **kw):
    usage = {"input_tokens": 12, "output_tokens": out, "cache_creation_input_tokens": 1500,
             "cache_read_input_tokens": 18000, "service_tier": "standard"}
    return env("assistant", uuid, parent, requestId=req, message={
        "id": mid, "type": "message", "role": "assistant", "model": "claude-opus-4-7",
        "content": [block], "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
        "usage": usage}, **kw)

def result(uuid, parent, tid, content, err=False, extra=None):
    block = {"type": "tool_result", "tool_use_id": tid, "content": content}
    if err:
        block["is_error"] = True
    r = user(uuid, parent, [block], sourceToolAssistantUUID=parent)
    if extra is not None:
        r["toolUseResult"] = extra
    return r

lines.append({"type": "permission-mode", "permissionMode": "default", "sessionId": SID})
lines.append(user("u01", None, "Add a `--json` flag to the widgets CLI and test it."))
lines.append(asst("a01", "u01", "msg_01", "req_01", {"type": "thinking", "thinking": "Look at the CLI first.", "signature": "c2lnbmF0dXJlMDE="}, 3))
lines.append(asst("a02", "a01", "msg_01", "req_01", {"type": "tool_use", "id": "toolu_01", "name": "Read", "input": {"file_path": f"{CWD}/src/cli.rs"}}, 40))
lines.append(asst("a03", "a02", "msg_01", "req_01", {"type": "tool_use", "id": "toolu_02", "name": "Grep", "input": {"pattern": "fn main", "path": CWD}}, 96))
lines.append(result("r01", "a02", "toolu_01", "     1→use clap::Parser;\n     2→fn main() {}\n", extra={"type": "text", "file": {"filePath": f"{CWD}/src/cli.rs", "numLines": 2}}))
lines.append(result("r02", "a03", "toolu_02", "src/cli.rs:2:fn main() {}"))
lines.append(asst("a04", "r02", "msg_02", "req_02", {"type": "tool_use", "id": "toolu_03", "name": "Bash", "input": {"command": "cargo test --quiet", "description": "Run tests"}}, 55))
lines.append(result("r03", "a04", "toolu_03", "<tool_use_error>error: could not compile `widgets`</tool_use_error>", err=True, extra="Error: exit code 101"))
lines.append(asst("a05", "r03", "msg_03", "req_03", {"type": "tool_use", "id": "toolu_04", "name": "Task", "input": {"description": "Find flag parsing", "prompt": "Where are CLI flags parsed?", "subagent_type": "Explore"}}, 80))
lines.append(result("r04", "a05", "toolu_04", [{"type": "text", "text": "Flags are parsed in src/cli.rs with clap derive."}, {"type": "text", "text": f"agentId: {AID} (use SendMessage with to: '{AID}' to continue this agent)"}], extra={"status": "completed", "agentId": AID, "agentType": "Explore", "totalTokens": 4200}))
lines.append({"type": "file-history-snapshot", "messageId": "u01", "snapshot": {"messageId": "u01", "trackedFileBackups": {}, "timestamp": ts()}, "isSnapshotUpdate": False})
lines.append(asst("a06", "r04", "msg_04", "req_04", {"type": "tool_use", "id": "toolu_05", "name": "Edit", "input": {"file_path": f"{CWD}/src/cli.rs", "old_string": "fn main() {}", "new_string": "fn main() { /* --json */ }"}}, 120))
lines.append(result("r05", "a06", "toolu_05", "The file src/cli.rs has been updated.", extra={"filePath": f"{CWD}/src/cli.rs", "oldString": "fn main() {}", "newString": "fn main() { /* --json */ }"}))
lines.append(asst("a07", "r05", "msg_05", "req_05", {"type": "text", "text": "Added the flag; tests still need a fixture."}, 30))
lines.append(env("system", "s01", "a07", subtype="turn_duration", durationMs=41000, isMeta=False))
# rewind: the user edits the second prompt; the old branch stays in the file
lines.append(user("u02", "s01", "Now make it print pretty JSON."))
lines.append(asst("a08", "u02", "msg_06", "req_06", {"type": "text", "text": "Pretty printing would need serde_json."}, 20))
lines.append(user("u03", "s01", "Actually, make `--json` print one object per line."))
lines.append(asst("a09", "u03", "msg_07", "req_07", {"type": "tool_use", "id": "toolu_06", "name": "Skill", "input": {"skill": "rust-testing"}}, 25))
lines.append(result("r06", "a09", "toolu_06", "Launching skill: rust-testing"))
lines.append(user("m01", "r06", "Base directory for this skill: /home/dev/.claude/skills/rust-testing", isMeta=True, sourceToolUseID="toolu_06"))
lines.append(asst("a10", "m01", "msg_08", "req_08", {"type": "tool_use", "id": "toolu_07", "name": "Bash", "input": {"command": "cargo test"}}, 18))
lines.append(user("i01", "a10", "[Request interrupted by user for tool use]"))
# compaction
lines.append(env("system", "cb1", None, subtype="compact_boundary", content="Conversation compacted", logicalParentUuid="i01", compactMetadata={"trigger": "auto", "preTokens": 167393}, level="info"))
lines.append(user("cs1", "cb1", "This session is being continued from a previous conversation that ran out of context. Summary: JSONL output for --json.", isCompactSummary=True, isVisibleInTranscriptOnly=True))
lines.append(asst("a11", "cs1", "msg_09", "req_09", {"type": "text", "text": "Continuing: `--json` now writes JSON Lines."}, 44))
lines.append(asst("a12", "a11", "msg_10", None, {"type": "text", "text": "No response requested."}, 0))
lines[-1]["message"]["model"] = "<synthetic>"
del lines[-1]["requestId"]
lines.append(env("system", "s02", "a12", subtype="turn_duration", durationMs=5000))
lines.append({"type": "ai-title", "aiTitle": "Add --json flag to widgets CLI", "sessionId": SID})
lines.append({"type": "last-prompt", "lastPrompt": "Actually, make `--json` print one object per line.", "sessionId": SID})

def sub_env(kind, uuid, parent, **kw):
    r = env(kind, uuid, parent, **kw)
    r["isSidechain"] = True
    r["agentId"] = AID
    return r
sub.append(sub_env("user", "x01", None, message={"role": "user", "content": "Where are CLI flags parsed?"}))
sub.append(sub_env("assistant", "x02", "x01", requestId="req_s1", message={"id": "msg_s1", "role": "assistant", "model": "claude-haiku-4-5", "content": [{"type": "tool_use", "id": "toolu_s1", "name": "Glob", "input": {"pattern": "src/**/*.rs"}}], "usage": {"input_tokens": 800, "output_tokens": 30, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}))
sub.append(sub_env("user", "x03", "x02", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_s1", "content": "src/cli.rs\nsrc/lib.rs"}]}))
sub.append(sub_env("assistant", "x04", "x03", requestId="req_s2", message={"id": "msg_s2", "role": "assistant", "model": "claude-haiku-4-5", "content": [{"type": "text", "text": "Flags are parsed in src/cli.rs with clap derive."}], "usage": {"input_tokens": 900, "output_tokens": 25, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}))

os.makedirs(os.path.join(ROOT, SID, "subagents"), exist_ok=True)
def dump(path, recs):
    with open(path, "w", newline="\n") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")
dump(os.path.join(ROOT, SID + ".jsonl"), lines)
dump(os.path.join(ROOT, SID, "subagents", f"agent-{AID}.jsonl"), sub)
with open(os.path.join(ROOT, SID, "subagents", f"agent-{AID}.meta.json"), "w") as f:
    json.dump({"agentType": "Explore", "description": "Find flag parsing", "toolUseId": "toolu_04", "spawnDepth": 1}, f)
    f.write("\n")
