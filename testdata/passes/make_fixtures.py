#!/usr/bin/env python3
"""Writes the hand-designed fixtures of the passes tests (deterministic; run from anywhere).

Each fixture is a small Claude Code transcript built to exercise one group of rules; the
tests in crates/skein-passes/tests/fixtures.rs state what each pass must do with it.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
S = "5e55a0a0-0000-4000-8000-000000000001"


def ts(sec):
    return "2026-05-01T10:%02d:%02d.000Z" % (sec // 60, sec % 60)


def line(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def env(kind, uuid, parent, sec, **extra):
    rec = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": "/w",
           "sessionId": S, "version": "2.1.200", "gitBranch": "main", "type": kind}
    rec.update(extra)
    rec["uuid"] = uuid
    rec["timestamp"] = ts(sec)
    return rec


def user(uuid, parent, sec, content, **extra):
    return env("user", uuid, parent, sec, message={"role": "user", "content": content}, **extra)


def assistant(uuid, parent, sec, mid, blocks, **extra):
    msg = {"id": mid, "type": "message", "role": "assistant", "model": "claude-opus-4-7",
           "content": blocks, "stop_reason": None,
           "usage": {"input_tokens": 3, "output_tokens": 20, "cache_creation_input_tokens": 100,
                     "cache_read_input_tokens": 2000}}
    return env("assistant", uuid, parent, sec, requestId="req_" + mid[4:], message=msg, **extra)


def text(t):
    return {"type": "text", "text": t}


def thinking(t):
    return {"type": "thinking", "thinking": t, "signature": "c2lnbmF0dXJl" * 8}


def tool_use(tid, name, inp):
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def result(tid, content, **extra):
    b = {"tool_use_id": tid, "type": "tool_result", "content": content}
    b.update(extra)
    return b


def progress(uuid, parent, sec, data, **extra):
    return env("progress", uuid, parent, sec, data=data, **extra)


def system(uuid, parent, sec, subtype, **extra):
    return env("system", uuid, parent, sec, subtype=subtype, **extra)


def numbered(body):
    return "".join("%6d\u2192%s\n" % (i + 1, l) for i, l in enumerate(body.split("\n")))


SOURCE = "\n".join("    let widget_%d = Widget::new(%d); // configure the widget" % (i, i)
                   for i in range(120))
PNG = "iVBORw0KGgo" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" * 40


def session():
    out = [
        {"type": "permission-mode", "permissionMode": "default", "sessionId": S},
        {"type": "file-history-snapshot", "messageId": "u1",
         "snapshot": {"messageId": "u1", "trackedFileBackups": {}, "timestamp": ts(0)},
         "isSnapshotUpdate": False},
        {"type": "queue-operation", "operation": "enqueue", "timestamp": ts(0), "sessionId": S,
         "content": "Summarise README"},
        {"type": "queue-operation", "operation": "dequeue", "timestamp": ts(0), "sessionId": S},
        user("u1", None, 1, "Summarise README and run the tests"),
        progress("p1", "u1", 1, {"type": "hook_progress", "hookEvent": "UserPromptSubmit",
                                 "hookName": "UserPromptSubmit", "command": "true"}),
        assistant("a1", "p1", 2, "msg_01", [thinking("Let me read the file and run tests.")]),
        assistant("a2", "a1", 2, "msg_01", [tool_use("toolu_read", "Read",
                                                      {"file_path": "/w/src/lib.rs"})]),
        assistant("a3", "a2", 2, "msg_01", [tool_use("toolu_bash", "Bash",
                                                      {"command": "cargo test"})]),
        progress("p2", "a3", 3, {"type": "bash_progress", "output": "running 3 tests",
                                 "elapsedTimeSeconds": 1}, toolUseID="toolu_bash",
                 parentToolUseID="toolu_bash"),
        user("r1", "a2", 3, [result("toolu_read", numbered(SOURCE))],
             sourceToolAssistantUUID="a2",
             toolUseResult={"type": "text", "file": {"filePath": "/w/src/lib.rs",
                                                     "content": SOURCE, "numLines": 120,
                                                     "startLine": 1, "totalLines": 120}}),
        user("r2", "a3", 4, [result("toolu_bash", "running 3 tests\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out")],
             sourceToolAssistantUUID="a3",
             toolUseResult={"stdout": "running 3 tests\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out",
                            "stderr": "", "interrupted": False, "isImage": False}),
        assistant("a4", "r2", 5, "msg_02", [thinking("The file defines widgets."),
                                            text("The README describes widgets; tests pass.")]),
        system("t1", "a4", 5, "turn_duration", durationMs=4000, isMeta=False),
        user("u2", "t1", 6, [text("What is in this screenshot?"),
                             {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                          "data": PNG}}]),
        assistant("a5", "u2", 7, "msg_03", [text("A bar chart of widget sales.")]),
        {"type": "queue-operation", "operation": "remove", "timestamp": ts(7), "sessionId": S,
         "content": "also check the docs"},
        {"type": "ai-title", "aiTitle": "Summarise README", "sessionId": S},
    ]
    return out


def branches():
    return [
        user("u1", None, 1, "first question"),
        assistant("a1", "u1", 2, "msg_11", [text("first answer")]),
        # abandoned: the user rewound to a1 and asked again
        user("u2", "a1", 3, "second question, first try"),
        assistant("a2", "u2", 4, "msg_12", [tool_use("toolu_old", "Bash", {"command": "ls"})]),
        user("r2", "a2", 5, [result("toolu_old", "README.md")], sourceToolAssistantUUID="a2"),
        assistant("a3", "r2", 6, "msg_13", [text("old answer")]),
        # abandoned branch that holds a tool call answered on the active branch (kept whole)
        assistant("ax", "a1", 7, "msg_14", [tool_use("toolu_cross", "Read", {"file_path": "/w/x"})]),
        # a hook progress record hanging from a1 (no message below it: not a branch)
        progress("p9", "a1", 7, {"type": "hook_progress", "hookEvent": "Stop"}),
        # the active branch
        user("u3", "a1", 8, "second question, edited"),
        assistant("a4", "u3", 9, "msg_15", [text("new answer")]),
        user("rx", "a4", 10, [result("toolu_cross", "contents of x")], sourceToolAssistantUUID="ax"),
        assistant("a5", "rx", 11, "msg_16", [text("done")]),
        system("s1", "a5", 11, "turn_duration", durationMs=900),
        # Stop-hook feedback hanging from the last answer (injected, not a branch)
        user("m1", "a5", 12, "Stop hook feedback: run the linter", isMeta=True),
    ]


def compaction():
    return [
        user("u1", None, 1, "oldest request"),
        assistant("a1", "u1", 2, "msg_21", [text("oldest answer")]),
        system("cb1", None, 3, "compact_boundary", content="Conversation compacted",
               logicalParentUuid="a1", compactMetadata={"trigger": "auto", "preTokens": 1000}),
        user("cs1", "cb1", 3, "This session is being continued from a previous conversation.",
             isCompactSummary=True, isVisibleInTranscriptOnly=True),
        user("u2", "cs1", 4, "middle request"),
        assistant("a2", "u2", 5, "msg_22", [tool_use("toolu_span", "Bash", {"command": "make"})]),
        user("u3", "a2", 6, [result("toolu_span", "built")], sourceToolAssistantUUID="a2"),
        assistant("a3", "u3", 7, "msg_23", [text("built it")]),
        user("u4", "a3", 8, "keep this part"),
        assistant("a4", "u4", 9, "msg_24", [text("kept verbatim")]),
        system("cb2", None, 10, "compact_boundary", content="Conversation compacted",
               logicalParentUuid="a4",
               compactMetadata={"trigger": "manual", "preTokens": 2000,
                                "preservedSegment": {"headUuid": "u4", "anchorUuid": "cs2",
                                                     "tailUuid": "a4"}}),
        user("cs2", "cb2", 10, "This session is being continued from a previous conversation.",
             isCompactSummary=True, isVisibleInTranscriptOnly=True),
        user("u5", "cs2", 11, "newest request"),
        assistant("a5", "u5", 12, "msg_25", [text("newest answer")]),
        {"type": "summary", "summary": "Widgets", "leafUuid": "a5"},
    ]


def snapshot():
    return [
        user("u1", None, 1, "first request: explore"),
        assistant("a1", "u1", 2, "msg_31", [tool_use("toolu_old_agent", "Task",
                                                      {"description": "explore", "prompt": "look",
                                                       "subagent_type": "Explore"})]),
        user("r1", "a1", 3, [result("toolu_old_agent", "found\nagentId: a0ld (use SendMessage)")],
             sourceToolAssistantUUID="a1", toolUseResult={"agentId": "a0ld", "status": "completed"}),
        assistant("a2", "r1", 4, "msg_32", [text("explored")]),
        user("u2", "a2", 5, "second request: review the parser"),
        progress("p2", "u2", 5, {"type": "hook_progress", "hookEvent": "UserPromptSubmit"}),
        assistant("a3", "p2", 6, "msg_33", [tool_use("toolu_agent", "Agent",
                                                      {"description": "review", "prompt": "review parser",
                                                       "subagent_type": "general-purpose"})]),
        user("r3", "a3", 9, [result("toolu_agent", [text("3 issues\nagentId: a1b2c3 (use SendMessage with to: 'a1b2c3')")])],
             sourceToolAssistantUUID="a3", toolUseResult={"agentId": "a1b2c3", "status": "completed"}),
        assistant("a4", "r3", 10, "msg_34", [text("The review found 3 issues.")]),
        system("t4", "a4", 10, "turn_duration", durationMs=5000),
        "this line is not JSON",
        {"type": "ai-title", "aiTitle": "Parser review", "sessionId": S},
    ]


def agent(agent_id, prompt, spawn=None):
    recs = [dict(user("ag-" + agent_id + "-1", None, 7, prompt), isSidechain=True, agentId=agent_id)]
    parent = recs[0]["uuid"]
    if spawn:
        a = assistant("ag-" + agent_id + "-2", parent, 7, "msg_" + agent_id,
                      [tool_use(spawn, "Agent", {"description": "nested", "prompt": "dig",
                                                 "subagent_type": "Explore"})])
        a.update(isSidechain=True, agentId=agent_id)
        r = user("ag-" + agent_id + "-3", a["uuid"], 8, [result(spawn, "dug")])
        r.update(isSidechain=True, agentId=agent_id)
        recs += [a, r]
        parent = r["uuid"]
    fin = assistant("ag-" + agent_id + "-9", parent, 8, "msg_f" + agent_id, [text("agent " + agent_id + " done")])
    fin.update(isSidechain=True, agentId=agent_id)
    recs.append(fin)
    return recs


def odd():
    # Written by hand below (BOM, CRLF, invalid and torn lines, duplicates, cycles...).
    rows = [
        user("u1", None, 1, "odd file"),
        progress("p1", "u1", 2, {"type": "agent_progress", "agentId": "x",
                                 "message": {"parentUuid": "nested-parent", "uuid": "nested"}}),
        progress("p1", "u1", 2, {"type": "agent_progress", "agentId": "x", "copy": 2}),
        assistant("a1", "p1", 3, "msg_41", [text("reply after progress")]),
        user("d1", "missing-parent", 4, "dangling parent stays"),
        system("c1", "c2", 5, "informational", content="cycle one"),
        system("c2", "c1", 5, "informational", content="cycle two"),
    ]
    out = []
    for r in rows:
        out.append(line(r))
    # the data.message.parentUuid comes before the top-level key on this line
    out.insert(4, '{"type":"progress","data":{"type":"agent_progress","message":{"parentUuid":"zzz"}},"uuid":"p2","parentUuid":"a1","sessionId":"' + S + '","timestamp":"' + ts(3) + '"}')
    out.insert(5, '{"type":"user","message":{"role":"user","content":"lone \\ud83d surrogate, escaped \\u00e9 and \\/ slash"},"uuid":"u2","parentUuid":"p2","sessionId":"' + S + '","timestamp":"' + ts(4) + '"}')
    out.insert(2, "not json at all")
    return out


def example():
    """The before/after example of docs/passes.md (kept short: few envelope fields)."""
    out = "".join("cc -o widget widget.o -lz   # step %03d of the build, compiling and linking\n" % i
                  for i in range(80)) + "ld: cannot find -lz"
    return [
        {"type": "file-history-snapshot", "messageId": "u1",
         "snapshot": {"messageId": "u1", "trackedFileBackups": {}}, "isSnapshotUpdate": False},
        {"type": "user", "uuid": "u1", "parentUuid": None,
         "message": {"role": "user", "content": "Why does the build fail?"}},
        {"type": "progress", "uuid": "p1", "parentUuid": "u1",
         "data": {"type": "hook_progress", "hookEvent": "UserPromptSubmit"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "p1",
         "message": {"id": "msg_1", "role": "assistant",
                     "content": [{"type": "thinking", "thinking": "Run make and read the log.",
                                  "signature": "c2lnbmF0dXJl"}]}},
        {"type": "assistant", "uuid": "a2", "parentUuid": "a1",
         "message": {"id": "msg_1", "role": "assistant",
                     "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                  "input": {"command": "make"}}]}},
        {"type": "user", "uuid": "r1", "parentUuid": "a2",
         "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                                  "content": out}]},
         "toolUseResult": {"stdout": out, "stderr": "", "interrupted": False}},
        {"type": "assistant", "uuid": "a3", "parentUuid": "r1",
         "message": {"id": "msg_2", "role": "assistant",
                     "content": [{"type": "text", "text": "The linker cannot find libz: install zlib1g-dev."}]}},
    ]


def write(name, records, bom=False, crlf=False, torn=None):
    path = os.path.join(HERE, name)
    nl = "\r\n" if crlf else "\n"
    with open(path, "w", encoding="utf-8", newline="") as f:
        if bom:
            f.write("\ufeff")
        for r in records:
            f.write((r if isinstance(r, str) else line(r)) + nl)
        if torn:
            f.write(torn)


def main():
    write("session.jsonl", session())
    write("example.jsonl", example())
    write("branches.jsonl", branches())
    write("compaction.jsonl", compaction())
    write("odd.jsonl", odd(), bom=True, crlf=True, torn='{"type":"assistant","uuid":"torn"')
    proj = os.path.join("projects", "-w")
    os.makedirs(os.path.join(HERE, proj, S, "subagents"), exist_ok=True)
    write(os.path.join(proj, S + ".jsonl"), snapshot())
    sub = os.path.join(proj, S, "subagents")
    write(os.path.join(sub, "agent-a1b2c3.jsonl"), agent("a1b2c3", "review parser", spawn="toolu_nested"))
    write(os.path.join(sub, "agent-d4e5f6.jsonl"), agent("d4e5f6", "dig"))
    write(os.path.join(sub, "agent-a0ld.jsonl"), agent("a0ld", "look"))
    for aid, tool, extra in [("a1b2c3", "toolu_agent", {}), ("d4e5f6", "toolu_nested", {"parentAgentId": "a1b2c3"}),
                             ("a0ld", "toolu_old_agent", {})]:
        meta = {"agentType": "general-purpose", "description": "agent " + aid, "toolUseId": tool}
        meta.update(extra)
        with open(os.path.join(HERE, sub, "agent-%s.meta.json" % aid), "w") as f:
            f.write(json.dumps(meta) + "\n")


if __name__ == "__main__":
    main()
