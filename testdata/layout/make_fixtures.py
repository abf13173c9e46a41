#!/usr/bin/env python3
"""Writes the projects tree of the archive-as-input tests (crates/skein/tests/it/layout.rs):
every place Claude Code keeps a transcript (format.md §1, §10) in two projects.

-home-me-app/
  S1.jsonl                                  main session: Task -> a1, Agent -> l1, Agent -> w1
  S1/subagents/agent-a1.jsonl (+ .meta.json) subagent with its sidecar
  S1/subagents/agent-acompact-c1.jsonl      internal compaction agent
  S1/subagents/workflows/run1/agent-w1.jsonl Workflow agent (+ journal.jsonl, not a transcript)
  agent-l1.jsonl                            legacy sibling agent of S1 (sessionId inside)
  agent-l2.jsonl                            legacy agent of S2, whose main file is gone
  agent-l3.jsonl                            legacy agent without any sessionId
-home-me-other/
  S3.jsonl                                  a plain session
The files are committed; re-run only to change them."""
import json, os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "projects")
S1 = "5e55a001-0000-4000-8000-000000000001"
S2 = "5e55a002-0000-4000-8000-000000000002"
S3 = "5e55a003-0000-4000-8000-000000000003"


def line(**kw):
    return json.dumps(kw, separators=(",", ":"))


def usage(i, o):
    return {"input_tokens": i, "output_tokens": o, "cache_creation_input_tokens": 50,
            "cache_read_input_tokens": 500}


class T:
    """A linear transcript under construction."""

    def __init__(self, sid, cwd, t0, sidechain=False, agent=None):
        self.sid, self.cwd, self.t, self.side, self.agent = sid, cwd, t0, sidechain, agent
        self.lines, self.parent, self.n = [], None, 0

    def ts(self):
        self.t += 1
        return "2026-03-0%dT10:%02d:%02d.000Z" % (1 + self.t // 3600, (self.t // 60) % 60, self.t % 60)

    def rec(self, kind, **kw):
        self.n += 1
        uuid = "%s-%s-%03d" % ((self.agent or "main"), self.sid[:8], self.n)
        r = dict(type=kind, uuid=uuid, parentUuid=self.parent, timestamp=self.ts(),
                 isSidechain=self.side, userType="external", cwd=self.cwd, version="2.1.30",
                 gitBranch="main")
        if self.sid:
            r["sessionId"] = self.sid
        if self.agent:
            r["agentId"] = self.agent
        r.update(kw)
        self.lines.append(line(**r))
        self.parent = uuid
        return uuid

    def user(self, text):
        return self.rec("user", message={"role": "user", "content": text})

    def asst(self, mid, content, i=10, o=20, model="claude-sonnet-4-5-20250929"):
        return self.rec("assistant", requestId="req_" + mid,
                        message={"id": mid, "role": "assistant", "model": model,
                                 "content": content, "usage": usage(i, o)})

    def result(self, tid, text, extra=None, is_error=False):
        kw = {"message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": is_error}]}}
        if extra:
            kw["toolUseResult"] = extra
        return self.rec("user", **kw)

    def write(self, rel):
        p = os.path.join(ROOT, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("\n".join(self.lines) + "\n")


def agent(sid, aid, t0, prompt, tool, answer):
    a = T(sid, "/home/me/app", t0, sidechain=True, agent=aid)
    a.user(prompt)
    a.asst("m_%s_1" % aid, [{"type": "tool_use", "id": "toolu_%s_r" % aid, "name": tool,
                             "input": {"file_path": "/home/me/app/src/%s.rs" % aid}
                             if tool == "Read" else {"pattern": "fn main"}}], 30, 5,
           model="claude-haiku-4-5-20251001")
    a.result("toolu_%s_r" % aid, "fn main() {}")
    a.asst("m_%s_2" % aid, [{"type": "text", "text": answer}], 40, 15,
           model="claude-haiku-4-5-20251001")
    return a


def spawn(m, n, tool, aid, sub_type, prompt):
    tid = "toolu_spawn_%s" % aid
    m.asst("m_main_%d" % n, [{"type": "tool_use", "id": tid, "name": tool,
                              "input": {"description": "look at " + aid, "prompt": prompt,
                                        "subagent_type": sub_type}}], 100, 30)
    m.result(tid, [{"type": "text", "text": "Found it.\nagentId: %s (use SendMessage with to: '%s')" % (aid, aid)}],
             extra={"agentId": aid, "status": "completed"})
    return tid


# S1: the main session and its agents in every layout.
m = T(S1, "/home/me/app", 0)
m.user("Find where main is defined, three ways.")
t_a1 = spawn(m, 1, "Task", "a1", "Explore", "Read the sources.")
spawn(m, 2, "Agent", "l1", "general-purpose", "Grep for main.")
spawn(m, 3, "Agent", "w1", "workflow-step", "Run the workflow step.")
m.asst("m_main_4", [{"type": "tool_use", "id": "toolu_skill", "name": "Skill",
                     "input": {"skill": "pdf"}}], 20, 5)
m.result("toolu_skill", "Launching skill: pdf")
m.asst("m_main_5", [{"type": "tool_use", "id": "toolu_edit", "name": "Edit",
                     "input": {"file_path": "/home/me/app/src/main.rs", "old_string": "a",
                               "new_string": "b"}}], 20, 5)
m.result("toolu_edit", "ok")
m.asst("m_main_6", [{"type": "text", "text": "main is in src/main.rs."}], 50, 40)
m.write("-home-me-app/%s.jsonl" % S1)

agent(S1, "a1", 100, "Read the sources.", "Read", "src/main.rs has main.").write(
    "-home-me-app/%s/subagents/agent-a1.jsonl" % S1)
with open(os.path.join(ROOT, "-home-me-app/%s/subagents/agent-a1.meta.json" % S1), "w") as f:
    f.write(json.dumps({"agentType": "Explore", "description": "look at a1",
                        "toolUseId": t_a1, "spawnDepth": 1}))
c = T(S1, "/home/me/app", 200, sidechain=True, agent="acompact-c1")
c.user("Summarize the conversation so far.")
c.asst("m_compact_1", [{"type": "text", "text": "Summary: looking for main."}], 900, 60)
c.write("-home-me-app/%s/subagents/agent-acompact-c1.jsonl" % S1)
agent(S1, "w1", 300, "Run the workflow step.", "Grep", "Step done.").write(
    "-home-me-app/%s/subagents/workflows/run1/agent-w1.jsonl" % S1)
with open(os.path.join(ROOT, "-home-me-app/%s/subagents/workflows/run1/journal.jsonl" % S1), "w") as f:
    f.write(line(event="start", run="run1") + "\n")
agent(S1, "l1", 400, "Grep for main.", "Grep", "main is in src/main.rs.").write(
    "-home-me-app/agent-l1.jsonl")

# S2: only its legacy agent file is left.
agent(S2, "l2", 500, "Count the files.", "Read", "Twelve files.").write("-home-me-app/agent-l2.jsonl")
# A legacy agent file that names no session at all.
orphan = agent("", "l3", 600, "Say hi.", "Read", "Hi.")
orphan.write("-home-me-app/agent-l3.jsonl")

# S3: another project.
o = T(S3, "/home/me/other", 700)
o.user("What time is it?")
o.asst("m_other_1", [{"type": "text", "text": "Noon."}], 5, 3, model="claude-opus-4-6")
o.write("-home-me-other/%s.jsonl" % S3)
