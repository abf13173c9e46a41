//! The session's task list, for both eras of Claude Code: the `TodoWrite` tool (the model
//! rewrites the whole list each time) and the `TaskCreate` / `TaskUpdate` / `TaskList` /
//! `TaskGet` tools (a store of tasks with ids, statuses and owners, shared by a team).
//!
//! [`TaskTracker`] is fed records in conversation order — parsed values, one JSONL line, or a
//! slice of new lines (a hook reading what was appended) — and gives the latest state with
//! [`TaskTracker::current`]. No I/O here.
//!
//! Rules:
//! * `TodoWrite` `input.todos` replaces the todo list (`content` is the subject).
//! * `TaskCreate` adds a task; its id is the one its result names (`toolUseResult.task.id`,
//!   else `Task #N created` in the result text), whichever comes first in the file.
//! * `TaskUpdate` changes the task named by `taskId` (`subject`, `status`, `owner`,
//!   `activeForm`, `addBlockedBy`); status `deleted` removes it. A task not seen before (the
//!   store is shared with teammates and outlives sessions) is added.
//! * A `TaskList` result (`toolUseResult.tasks`) is authoritative: the store becomes exactly
//!   the tasks it lists (keeping what else is known about each); a `TaskGet` result
//!   (`toolUseResult.task`) updates that task.
//! * [`TaskTracker::current`] is the list changed last: the todos or the task store.

use memchr::memmem;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a task list comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSource {
    /// The `TodoWrite` tool.
    TodoWrite,
    /// The `TaskCreate` / `TaskUpdate` / `TaskList` / `TaskGet` tools.
    Tasks,
}

/// One task (or todo).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskItem {
    /// The task id (`TaskCreate` era; a todo's `id` when it has one).
    pub id: Option<String>,
    /// `subject` (tasks) or `content` (todos).
    pub subject: String,
    /// `pending`, `in_progress`, `completed`, or whatever the tool wrote.
    pub status: String,
    /// The teammate owning the task.
    pub owner: Option<String>,
    /// The present-continuous form shown while the task runs.
    pub active_form: Option<String>,
    /// Ids of the tasks this one waits for.
    pub blocked_by: Vec<String>,
}

/// The latest state of a session's tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskList {
    pub source: TaskSource,
    /// In creation order (todos in the order written).
    pub items: Vec<TaskItem>,
    /// The timestamp of the record that changed the list last.
    pub timestamp: Option<String>,
}

impl TaskList {
    /// Items whose status is not `completed`.
    pub fn open(&self) -> usize {
        self.items
            .iter()
            .filter(|t| t.status != "completed")
            .count()
    }
}

/// What a pending tool call was, by `tool_use` id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
enum Call {
    /// A `TaskCreate`, with the index of its task in the store.
    Create(usize),
    List,
    Get,
}

/// Follows the task list through a transcript (see the module documentation). Serializable,
/// so a caller that reads only new bytes (the hook) can carry it from one run to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TaskTracker {
    todos: Option<(Vec<TaskItem>, Option<String>)>,
    /// Tasks in creation order; `None` marks a removed one (indices stay valid).
    tasks: Vec<Option<TaskItem>>,
    tasks_timestamp: Option<String>,
    calls: FxHashMap<String, Call>,
    /// Ids named by `TaskCreate` results read before their call.
    early_ids: FxHashMap<String, String>,
    /// Which list changed last.
    last: Option<TaskSource>,
}

/// Tool names and result fields that can change the task list (a cheap filter before
/// parsing a line): the tool names, and the `toolUseResult` keys of `TaskList` / `TaskGet`
/// results (their text need not name a task tool).
const MARKERS: [&[u8]; 4] = [b"TodoWrite", b"Task", b"\"tasks\"", b"\"task\""];

impl TaskTracker {
    /// An empty tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds every line of a JSONL slice (complete lines; a torn last line is skipped).
    pub fn lines(&mut self, jsonl: &[u8]) {
        for line in jsonl.split(|&b| b == b'\n') {
            self.line(line);
        }
    }

    /// Feeds one JSONL line; lines that cannot change the list are not parsed.
    pub fn line(&mut self, text: &[u8]) {
        if !MARKERS.iter().any(|m| memmem::find(text, m).is_some()) {
            return;
        }
        let parsed = serde_json::from_slice::<Value>(text)
            .ok()
            .or_else(|| serde_json::from_slice(&skein_core::repair::repair_line(text)).ok());
        if let Some(v) = parsed {
            self.record(&v);
        }
    }

    /// Feeds one parsed record.
    pub fn record(&mut self, v: &Value) {
        let Some(blocks) = v.pointer("/message/content").and_then(Value::as_array) else {
            return;
        };
        let ts = v.get("timestamp").and_then(Value::as_str);
        match v.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                for b in blocks.iter().filter(|b| b["type"] == "tool_use") {
                    self.tool_use(b, ts);
                }
            }
            Some("user") => {
                let results: Vec<&Value> = blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_result")
                    .collect();
                // `toolUseResult` belongs to the record's only result.
                let structured = match results.as_slice() {
                    [_] => v.get("toolUseResult"),
                    _ => None,
                };
                for b in results {
                    self.tool_result(b, structured, ts);
                }
            }
            _ => {}
        }
    }

    /// Rewrites every free text kept (subjects, active forms, owners), e.g. to redact the
    /// tracker before its state is stored.
    pub fn map_text(&mut self, f: &mut dyn FnMut(&str) -> String) {
        let todos = self
            .todos
            .iter_mut()
            .flat_map(|(items, _)| items.iter_mut());
        for item in todos.chain(self.tasks.iter_mut().flatten()) {
            item.subject = f(&item.subject);
            for v in [&mut item.active_form, &mut item.owner]
                .into_iter()
                .flatten()
            {
                *v = f(v);
            }
        }
    }

    /// Every list a tool touched, the one changed last first: a session may keep `TodoWrite`
    /// todos and a task store side by side.
    pub fn lists(&self) -> Vec<TaskList> {
        let Some(last) = self.last else {
            return Vec::new();
        };
        let todos = self.todos.clone().map(|(items, timestamp)| TaskList {
            source: TaskSource::TodoWrite,
            items,
            timestamp,
        });
        let tasks = (!self.tasks.is_empty() || last == TaskSource::Tasks).then(|| TaskList {
            source: TaskSource::Tasks,
            items: self.tasks.iter().flatten().cloned().collect(),
            timestamp: self.tasks_timestamp.clone(),
        });
        let (first, second) = match last {
            TaskSource::TodoWrite => (todos, tasks),
            TaskSource::Tasks => (tasks, todos),
        };
        first.into_iter().chain(second).collect()
    }

    /// The list changed last, if any tool touched one.
    pub fn current(&self) -> Option<TaskList> {
        match self.last? {
            TaskSource::TodoWrite => {
                let (items, timestamp) = self.todos.clone()?;
                Some(TaskList {
                    source: TaskSource::TodoWrite,
                    items,
                    timestamp,
                })
            }
            TaskSource::Tasks => Some(TaskList {
                source: TaskSource::Tasks,
                items: self.tasks.iter().flatten().cloned().collect(),
                timestamp: self.tasks_timestamp.clone(),
            }),
        }
    }

    fn touch(&mut self, source: TaskSource, ts: Option<&str>) {
        self.last = Some(source);
        if source == TaskSource::Tasks
            && let Some(t) = ts
        {
            self.tasks_timestamp = Some(t.to_owned());
        }
    }

    fn tool_use(&mut self, b: &Value, ts: Option<&str>) {
        let input = &b["input"];
        let id = b["id"].as_str().unwrap_or("");
        match b["name"].as_str() {
            Some("TodoWrite") => {
                let Some(todos) = input["todos"].as_array() else {
                    return;
                };
                let items = todos
                    .iter()
                    .map(|t| TaskItem {
                        id: scalar(&t["id"]),
                        subject: text(&t["content"]).unwrap_or_default(),
                        status: text(&t["status"]).unwrap_or_default(),
                        owner: None,
                        active_form: text(&t["activeForm"]),
                        blocked_by: Vec::new(),
                    })
                    .collect();
                self.todos = Some((items, ts.map(str::to_owned)));
                self.touch(TaskSource::TodoWrite, ts);
            }
            Some("TaskCreate") => {
                let item = TaskItem {
                    id: self.early_ids.remove(id),
                    subject: text(&input["subject"])
                        .or_else(|| text(&input["description"]))
                        .unwrap_or_default(),
                    status: "pending".into(),
                    owner: text(&input["owner"]),
                    active_form: text(&input["activeForm"]),
                    blocked_by: Vec::new(),
                };
                self.tasks.push(Some(item));
                if !id.is_empty() {
                    self.calls
                        .insert(id.to_owned(), Call::Create(self.tasks.len() - 1));
                }
                self.touch(TaskSource::Tasks, ts);
            }
            Some("TaskUpdate") => {
                let Some(task_id) = scalar(&input["taskId"]).or_else(|| scalar(&input["task_id"]))
                else {
                    return;
                };
                if text(&input["status"]).as_deref() == Some("deleted") {
                    if let Some(i) = self.find(&task_id) {
                        self.tasks[i] = None;
                    }
                } else {
                    let i = self.find_or_add(&task_id);
                    let t = self.tasks[i].as_mut().expect("found tasks are present");
                    set(&mut t.subject, &input["subject"]);
                    set(&mut t.status, &input["status"]);
                    if let Some(o) = text(&input["owner"]) {
                        t.owner = (!o.is_empty()).then_some(o);
                    }
                    if let Some(a) = text(&input["activeForm"]) {
                        t.active_form = Some(a);
                    }
                    for dep in input["addBlockedBy"].as_array().into_iter().flatten() {
                        if let Some(d) = scalar(dep)
                            && !t.blocked_by.contains(&d)
                        {
                            t.blocked_by.push(d);
                        }
                    }
                }
                self.touch(TaskSource::Tasks, ts);
            }
            Some("TaskList") if !id.is_empty() => {
                self.calls.insert(id.to_owned(), Call::List);
            }
            Some("TaskGet") if !id.is_empty() => {
                self.calls.insert(id.to_owned(), Call::Get);
            }
            _ => {}
        }
    }

    fn tool_result(&mut self, b: &Value, structured: Option<&Value>, ts: Option<&str>) {
        let Some(id) = b["tool_use_id"].as_str() else {
            return;
        };
        if b["is_error"].as_bool() == Some(true) {
            return;
        }
        let structured = structured.filter(|s| s.is_object());
        match self.calls.get(id).copied() {
            Some(Call::Create(i)) => {
                if let Some(task_id) = created_id(b, structured)
                    && let Some(Some(t)) = self.tasks.get_mut(i)
                {
                    t.id = Some(task_id);
                }
            }
            Some(Call::List) => {
                let Some(list) = structured.and_then(|s| s["tasks"].as_array()) else {
                    return;
                };
                let mut next = Vec::with_capacity(list.len());
                for entry in list {
                    let Some(task_id) = scalar(&entry["id"]) else {
                        continue;
                    };
                    let mut t = self
                        .find(&task_id)
                        .and_then(|i| self.tasks[i].clone())
                        .unwrap_or_else(|| TaskItem {
                            id: Some(task_id),
                            ..TaskItem::default()
                        });
                    merge(&mut t, entry);
                    next.push(Some(t));
                }
                // Keep pending creates' indices valid: the listed tasks replace the store.
                self.calls.retain(|_, c| !matches!(c, Call::Create(_)));
                self.tasks = next;
                self.touch(TaskSource::Tasks, ts);
            }
            Some(Call::Get) => {
                let Some(entry) = structured.map(|s| &s["task"]).filter(|t| t.is_object()) else {
                    return;
                };
                let Some(task_id) = scalar(&entry["id"]) else {
                    return;
                };
                let i = self.find_or_add(&task_id);
                if let Some(t) = self.tasks[i].as_mut() {
                    merge(t, entry);
                }
                self.touch(TaskSource::Tasks, ts);
            }
            None => {
                // A result read before its call: remember a created id for the call.
                if let Some(task_id) = created_id(b, structured) {
                    self.early_ids.insert(id.to_owned(), task_id);
                }
            }
        }
    }

    fn find(&self, task_id: &str) -> Option<usize> {
        self.tasks
            .iter()
            .rposition(|t| t.as_ref().and_then(|t| t.id.as_deref()) == Some(task_id))
    }

    fn find_or_add(&mut self, task_id: &str) -> usize {
        self.find(task_id).unwrap_or_else(|| {
            self.tasks.push(Some(TaskItem {
                id: Some(task_id.to_owned()),
                ..TaskItem::default()
            }));
            self.tasks.len() - 1
        })
    }
}

/// A string field.
fn text(v: &Value) -> Option<String> {
    v.as_str().map(str::to_owned)
}

/// A string or number field, as a string (task ids are written both ways).
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Sets `slot` to the string in `v`, if it holds one.
fn set(slot: &mut String, v: &Value) {
    if let Some(s) = v.as_str() {
        s.clone_into(slot);
    }
}

/// Updates a task from a `TaskList`/`TaskGet` entry.
fn merge(t: &mut TaskItem, entry: &Value) {
    set(&mut t.subject, &entry["subject"]);
    set(&mut t.status, &entry["status"]);
    if let Some(o) = entry.get("owner") {
        t.owner = o.as_str().filter(|o| !o.is_empty()).map(str::to_owned);
    }
    if let Some(a) = text(&entry["activeForm"]) {
        t.active_form = Some(a);
    }
    if let Some(deps) = entry["blockedBy"].as_array() {
        t.blocked_by = deps.iter().filter_map(scalar).collect();
    }
}

/// The id a `TaskCreate` result names: `toolUseResult.task.id`, else `Task #N` in its text.
fn created_id(block: &Value, structured: Option<&Value>) -> Option<String> {
    if let Some(id) = structured.and_then(|s| scalar(&s["task"]["id"])) {
        return Some(id);
    }
    let text = match &block["content"] {
        Value::String(s) => s.as_str(),
        Value::Array(parts) => parts.iter().find_map(|p| p["text"].as_str())?,
        _ => return None,
    };
    // Claude Code writes `Task #N created successfully: …`: only the start is looked at, so
    // a large result of another tool costs nothing.
    let rest = text.trim_start().strip_prefix("Task #")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    (!digits.is_empty() && rest[digits.len()..].starts_with(" created")).then_some(digits)
}
