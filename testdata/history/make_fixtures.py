#!/usr/bin/env python3
"""Writes the whole-history fixtures: one session per kind of broken chain (a hook progress
record whose parent is not in the file, a compaction boundary whose logical parent is not in
the file, a new root after "clear context"), and a session of named agents in a team (Agent
`name`/`team_name`/`isolation`, SendMessage, TaskCreate/TaskUpdate, a team config, an image
tool result). Synthetic and deterministic; run it to regenerate the files next to it."""
import json, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.join(HERE, "projects", "-w")
CWD = "/w"
clock = [0]


def ts():
    clock[0] += 1
    s = clock[0]
    return f"2026-02-01T09:{s // 60:02d}:{s % 60:02d}.{(s * 37) % 1000:03d}Z"


class Session:
    def __init__(self, sid):
        self.sid, self.lines, self.agents = sid, [], {}

    def env(self, kind, uuid, parent, **kw):
        r = {"type": kind, "uuid": uuid, "parentUuid": parent, "isSidechain": False,
             "sessionId": self.sid, "timestamp": ts(), "cwd": CWD, "version": "2.1.29",
             "userType": "external"}
        r.update(kw)
        return r

    def add(self, r):
        self.lines.append(r)
        return r

    def user(self, uuid, parent, content, **kw):
        return self.add(self.env("user", uuid, parent, message={"role": "user", "content": content}, **kw))

    def asst(self, uuid, parent, block, mid=None, out=20, **kw):
        usage = {"input_tokens": 10, "output_tokens": out, "cache_creation_input_tokens": 100,
                 "cache_read_input_tokens": 1000}
        return self.add(self.env("assistant", uuid, parent, requestId=f"req_{uuid}", message={
            "id": mid or f"msg_{uuid}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [block],
            "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn", "usage": usage}, **kw))

    def text(self, uuid, parent, text, **kw):
        return self.asst(uuid, parent, {"type": "text", "text": text}, **kw)

    def call(self, uuid, parent, tid, name, inp, **kw):
        return self.asst(uuid, parent, {"type": "tool_use", "id": tid, "name": name, "input": inp}, **kw)

    def result(self, uuid, parent, tid, content, err=False, extra=None, **kw):
        block = {"type": "tool_result", "tool_use_id": tid, "content": content}
        if err:
            block["is_error"] = True
        r = self.env("user", uuid, parent, message={"role": "user", "content": [block]},
                     sourceToolAssistantUUID=parent, **kw)
        if extra is not None:
            r["toolUseResult"] = extra
        return self.add(r)

    def hook(self, uuid, parent, event):
        return self.add(self.env("progress", uuid, parent, data={
            "type": "hook_progress", "hookEvent": event, "hookName": event, "command": "echo hi"},
            toolUseID=f"hook-{uuid}", parentToolUseID=f"hook-{uuid}"))

    def system(self, uuid, parent, subtype, **kw):
        return self.add(self.env("system", uuid, parent, subtype=subtype, **kw))

    def meta(self, kind, **kw):
        r = {"type": kind, "sessionId": self.sid}
        r.update(kw)
        self.lines.append(r)

    def write(self):
        os.makedirs(PROJECT, exist_ok=True)
        with open(os.path.join(PROJECT, f"{self.sid}.jsonl"), "w") as f:
            for r in self.lines:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")
        for aid, (lines, meta) in self.agents.items():
            d = os.path.join(PROJECT, self.sid, "subagents")
            os.makedirs(d, exist_ok=True)
            with open(os.path.join(d, f"agent-{aid}.jsonl"), "w") as f:
                for r in lines:
                    f.write(json.dumps(r, separators=(",", ":")) + "\n")
            if meta is not None:
                with open(os.path.join(d, f"agent-{aid}.meta.json"), "w") as f:
                    f.write(json.dumps(meta, separators=(",", ":")))

    def agent(self, aid, prompt, answer, meta=None, calls=()):
        a = Session(self.sid)
        a.user(f"{aid}-u", None, prompt, isSidechain=True, agentId=aid)
        parent = f"{aid}-u"
        for i, (tid, name, inp, res) in enumerate(calls):
            a.call(f"{aid}-c{i}", parent, tid, name, inp, isSidechain=True, agentId=aid)
            a.result(f"{aid}-r{i}", f"{aid}-c{i}", tid, res, isSidechain=True, agentId=aid)
            parent = f"{aid}-r{i}"
        a.text(f"{aid}-a", parent, answer, isSidechain=True, agentId=aid)
        self.agents[aid] = (a.lines, meta)


def dangling():
    """Claude Code 2.1.2x: a PostToolUse hook progress record under a parent it never wrote;
    the rest of the turn hangs from it, so the SDK's walk from the leaf stops there."""
    s = Session("11111111-0000-4000-8000-00000000da01")
    s.meta("permission-mode", permissionMode="default")
    s.user("u1", None, "First prompt: list the files")
    s.call("a1", "u1", "toolu_d1", "Bash", {"command": "ls", "description": "List files"})
    s.result("r1", "a1", "toolu_d1", "README.md\nsrc")
    s.text("a2", "r1", "There is a README and a src directory.")
    s.system("t1", "a2", "turn_duration", durationMs=2000)
    s.user("u2", "t1", "Second prompt: read the README")
    s.call("a3", "u2", "toolu_d2", "Read", {"file_path": "/w/README.md"})
    s.hook("p1", "0f0f0f0f-dead-4bad-8000-00000000beef", "PostToolUse")
    s.result("r2", "p1", "toolu_d2", "# Widgets\nA widget manager.")
    s.text("a4", "r2", "The README says it manages widgets.")
    s.meta("ai-title", aiTitle="Read the README")
    s.write()


def compaction():
    """A compaction boundary whose logicalParentUuid is not in the file, after a subagent."""
    s = Session("11111111-0000-4000-8000-00000000c0c1")
    s.user("u1", None, "First prompt: where are flags parsed?")
    s.call("a1", "u1", "toolu_c1", "Task", {"description": "Find flag parsing", "subagent_type": "Explore",
                                             "prompt": "Where are CLI flags parsed?"})
    s.result("r1", "a1", "toolu_c1", [{"type": "text", "text": "Flags are parsed in src/cli.rs."},
                                      {"type": "text", "text": "agentId: a0c0ffee (use SendMessage with to: 'a0c0ffee' to continue this agent)"}],
             extra={"status": "completed", "agentId": "a0c0ffee"})
    s.text("a2", "r1", "The parser lives in src/cli.rs.")
    s.system("cb", None, "compact_boundary", content="Conversation compacted",
             logicalParentUuid="0e0e0e0e-0000-4000-8000-00000000a11e",
             compactMetadata={"trigger": "auto", "preTokens": 150000})
    s.user("cs", "cb", "This session is being continued from a previous conversation. Summary: flags.",
           isCompactSummary=True, isVisibleInTranscriptOnly=True)
    s.user("u2", "cs", "Second prompt: add a --json flag")
    s.text("a3", "u2", "Added the --json flag.")
    s.agent("a0c0ffee", "Where are CLI flags parsed?", "Flags are parsed in src/cli.rs.",
            meta={"agentType": "Explore", "description": "Find flag parsing", "toolUseId": "toolu_c1"})
    s.write()


def new_root():
    """Plan mode, "clear context and implement": a new SessionStart hook root in the same file.
    Before it, a rewound prompt (an edited first prompt)."""
    s = Session("11111111-0000-4000-8000-0000000000e3")
    s.hook("h1", None, "SessionStart")
    s.user("x1", "h1", "Plan the relase (typo, rewound)")
    s.text("x2", "x1", "Which release?")
    s.user("u1", "h1", "First prompt: plan the release")
    s.call("a1", "u1", "toolu_n1", "ExitPlanMode", {"plan": "1. Tag\n2. Publish"})
    s.result("r1", "a1", "toolu_n1", "The user doesn't want to proceed with this tool use.", err=True)
    s.user("i1", "r1", [{"type": "text", "text": "[Request interrupted by user for tool use]"}])
    s.meta("file-history-snapshot", messageId="i1", snapshot={"messageId": "i1", "trackedFileBackups": {}, "timestamp": ts()}, isSnapshotUpdate=False)
    s.hook("h2", None, "SessionStart")
    s.user("u2", "h2", "Second prompt: implement the following plan: 1. Tag 2. Publish")
    s.call("a2", "u2", "toolu_n2", "TodoWrite", {"todos": [
        {"content": "Tag the release", "status": "completed", "activeForm": "Tagging"},
        {"content": "Publish", "status": "in_progress", "activeForm": "Publishing"}]})
    s.result("r2", "a2", "toolu_n2", "Todos have been modified successfully.")
    s.text("a3", "r2", "Tagged; publishing now.")
    s.write()


def team():
    """A lead with two named teammates: alice (worktree, meta) and bob (no meta; his type
    comes from the team config), tasks, messages, and an image tool result."""
    s = Session("22222222-0000-4000-8000-0000000007ea")
    s.user("u1", None, "Research plan mode with a team of two")
    s.call("a1", "u1", "toolu_t1", "TaskCreate", {"subject": "Research plan mode", "activeForm": "Researching"})
    s.result("r1", "a1", "toolu_t1", "Task #1 created successfully: Research plan mode", extra={"task": {"id": "1", "subject": "Research plan mode"}})
    s.call("a2", "r1", "toolu_t2", "TaskCreate", {"subject": "Review the notes"})
    s.result("r2", "a2", "toolu_t2", "Task #2 created successfully: Review the notes", extra={"task": {"id": "2", "subject": "Review the notes"}})
    s.call("a3", "r2", "toolu_t3", "TaskUpdate", {"taskId": "1", "status": "in_progress", "owner": "alice"})
    s.result("r3", "a3", "toolu_t3", "Updated task #1 owner, status", extra={"success": True, "taskId": "1"})
    s.call("a4", "r3", "toolu_s1", "Agent", {"description": "Research plan mode", "subagent_type": "general-purpose",
                                             "name": "alice", "team_name": "research", "isolation": "worktree",
                                             "prompt": "You are alice. Research plan mode."})
    s.result("r4", "a4", "toolu_s1", "Plan mode notes written.\nagentId: aa11aa11aa11aa11 (use SendMessage with to: 'aa11aa11aa11aa11' to continue this agent)",
             extra={"status": "completed", "agentId": "aa11aa11aa11aa11"})
    s.call("a5", "r4", "toolu_s2", "Agent", {"description": "Review notes", "name": "bob", "team_name": "research",
                                             "prompt": "You are bob. Review alice's notes."})
    s.result("r5", "a5", "toolu_s2", "Reviewed.\nagentId: bb22bb22bb22bb22 (use SendMessage with to: 'bb22bb22bb22bb22' to continue this agent)",
             extra={"status": "completed", "agentId": "bb22bb22bb22bb22"})
    s.call("a6", "r5", "toolu_m1", "SendMessage", {"to": "alice", "summary": "round 2", "message": "Round 2: add a comparison section."})
    s.result("r6", "a6", "toolu_m1", "{\"success\":true}", extra={"success": True, "message": "Message sent to alice's inbox",
                                                                 "routing": {"sender": "team-lead", "target": "@alice", "summary": "round 2"}})
    s.call("a7", "r6", "toolu_m2", "SendMessage", {"type": "shutdown_request", "recipient": "bob", "content": "Thanks, you can stop."})
    s.result("r7", "a7", "toolu_m2", "{\"success\":true}", extra={"success": True, "routing": {"sender": "team-lead", "target": "@bob"}})
    s.call("a8", "r7", "toolu_i1", "Read", {"file_path": "/w/diagram.png"})
    s.result("r8", "a8", "toolu_i1", [{"type": "text", "text": "diagram.png"},
                                      {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo" * 40}}])
    s.call("a9", "r8", "toolu_t4", "TaskUpdate", {"taskId": "1", "status": "completed"})
    s.result("r9", "a9", "toolu_t4", "Updated task #1 status", extra={"success": True})
    s.text("a10", "r9", "Plan mode researched; the review is still open.")
    s.agent("aa11aa11aa11aa11", "You are alice. Research plan mode.", "Plan mode notes written.",
            meta={"agentType": "general-purpose", "description": "Research plan mode", "toolUseId": "toolu_s1",
                  "worktreePath": "/w/.claude/worktrees/agent-aa11aa11"},
            calls=[("toolu_x1", "Write", {"file_path": "/w/notes.md", "content": "# Plan mode"}, "File created."),
                   ("toolu_x2", "SendMessage", {"to": "team-lead", "summary": "done", "message": "Notes are in notes.md."}, "{\"success\":true}")])
    s.agent("bb22bb22bb22bb22", "You are bob. Review alice's notes.", "Reviewed.",
            calls=[("toolu_y1", "Read", {"file_path": "/w/notes.md"}, "# Plan mode")])
    s.write()
    teams = os.path.join(HERE, "claude", "teams", "research")
    os.makedirs(teams, exist_ok=True)
    with open(os.path.join(teams, "config.json"), "w") as f:
        json.dump({"team_name": "research", "description": "Plan mode research",
                   "members": [{"name": "team-lead", "agentId": "team-lead@research", "agentType": "team-lead"},
                               {"name": "alice", "agentId": "alice@research", "agentType": "researcher"},
                               {"name": "bob", "agentId": "bob@research", "agentType": "reviewer"}]}, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    for d in ("projects", "claude"):
        shutil.rmtree(os.path.join(HERE, d), ignore_errors=True)
    dangling()
    compaction()
    new_root()
    team()
