//! The task list of both eras, fed records or lines: hand-written transcripts for each tool
//! and each ordering quirk, and the corpus session of a three-agent team.

use skein_analysis::{TaskItem, TaskList, TaskSource, TaskTracker};

fn call(ts: &str, id: &str, name: &str, input: &str) -> String {
    format!(
        r#"{{"type":"assistant","uuid":"a-{id}","timestamp":"{ts}","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{input}}}]}}}}"#
    )
}

fn result(ts: &str, id: &str, text: &str, structured: &str) -> String {
    format!(
        r#"{{"type":"user","uuid":"r-{id}","timestamp":"{ts}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{text}"}}]}},"toolUseResult":{structured}}}"#
    )
}

fn run(lines: &[String]) -> Option<TaskList> {
    let mut t = TaskTracker::new();
    t.lines(lines.join("\n").as_bytes());
    t.current()
}

fn summary(list: &TaskList) -> Vec<(Option<&str>, &str, &str, Option<&str>)> {
    list.items
        .iter()
        .map(|t| {
            (
                t.id.as_deref(),
                t.subject.as_str(),
                t.status.as_str(),
                t.owner.as_deref(),
            )
        })
        .collect()
}

#[test]
fn todo_write_replaces_the_whole_list() {
    let lines = [
        call(
            "2026-01-01T00:00:00Z",
            "t1",
            "TodoWrite",
            r#"{"todos":[{"content":"Write tests","status":"in_progress","activeForm":"Writing tests"},{"content":"Ship","status":"pending"}]}"#,
        ),
        call(
            "2026-01-01T00:01:00Z",
            "t2",
            "TodoWrite",
            r#"{"todos":[{"content":"Write tests","status":"completed"},{"content":"Ship","status":"in_progress","id":"2"}]}"#,
        ),
    ];
    let list = run(&lines).expect("a list");
    assert_eq!(list.source, TaskSource::TodoWrite);
    assert_eq!(
        summary(&list),
        [
            (None, "Write tests", "completed", None),
            (Some("2"), "Ship", "in_progress", None)
        ]
    );
    assert_eq!(list.timestamp.as_deref(), Some("2026-01-01T00:01:00Z"));
    assert_eq!(list.open(), 1);
}

#[test]
fn task_tools_follow_ids_statuses_owners_and_deletions() {
    let lines = [
        call(
            "2026-01-01T00:00:00Z",
            "c1",
            "TaskCreate",
            r#"{"subject":"Research","description":"d","activeForm":"Researching"}"#,
        ),
        result(
            "2026-01-01T00:00:01Z",
            "c1",
            "Task #1 created successfully: Research",
            r#"{"task":{"id":"1","subject":"Research"}}"#,
        ),
        call(
            "2026-01-01T00:00:02Z",
            "c2",
            "TaskCreate",
            r#"{"subject":"Merge"}"#,
        ),
        // No structured result: the id comes from the text.
        result(
            "2026-01-01T00:00:03Z",
            "c2",
            "Task #2 created successfully: Merge",
            "null",
        ),
        call(
            "2026-01-01T00:00:04Z",
            "c3",
            "TaskCreate",
            r#"{"subject":"Obsolete"}"#,
        ),
        result(
            "2026-01-01T00:00:05Z",
            "c3",
            "Task #3 created successfully: Obsolete",
            r#"{"task":{"id":"3"}}"#,
        ),
        call(
            "2026-01-01T00:00:06Z",
            "u1",
            "TaskUpdate",
            r#"{"taskId":"1","status":"in_progress","owner":"alice"}"#,
        ),
        call(
            "2026-01-01T00:00:07Z",
            "u2",
            "TaskUpdate",
            r#"{"taskId":"3","status":"deleted"}"#,
        ),
        call(
            "2026-01-01T00:00:08Z",
            "u3",
            "TaskUpdate",
            r#"{"taskId":"2","addBlockedBy":["1"]}"#,
        ),
        // A task created elsewhere (a teammate, an earlier session) is added when updated.
        call(
            "2026-01-01T00:00:09Z",
            "u4",
            "TaskUpdate",
            r#"{"taskId":7,"status":"completed","subject":"From bob"}"#,
        ),
        call(
            "2026-01-01T00:00:10Z",
            "u5",
            "TaskUpdate",
            r#"{"taskId":"1","status":"completed"}"#,
        ),
    ];
    let list = run(&lines).expect("a list");
    assert_eq!(list.source, TaskSource::Tasks);
    assert_eq!(
        summary(&list),
        [
            (Some("1"), "Research", "completed", Some("alice")),
            (Some("2"), "Merge", "pending", None),
            (Some("7"), "From bob", "completed", None),
        ]
    );
    assert_eq!(list.items[0].active_form.as_deref(), Some("Researching"));
    assert_eq!(list.items[1].blocked_by, ["1"]);
    assert_eq!(list.timestamp.as_deref(), Some("2026-01-01T00:00:10Z"));
}

#[test]
fn a_task_list_result_is_authoritative_and_results_may_come_first() {
    let lines = [
        // The result of c1 is written before its call (same millisecond in real files).
        result(
            "2026-01-01T00:00:01Z",
            "c1",
            "Task #4 created successfully: A",
            r#"{"task":{"id":"4"}}"#,
        ),
        call(
            "2026-01-01T00:00:01Z",
            "c1",
            "TaskCreate",
            r#"{"subject":"A"}"#,
        ),
        call(
            "2026-01-01T00:00:02Z",
            "c2",
            "TaskCreate",
            r#"{"subject":"B"}"#,
        ),
        result(
            "2026-01-01T00:00:03Z",
            "c2",
            "Task #5 created successfully: B",
            r#"{"task":{"id":"5"}}"#,
        ),
        call("2026-01-01T00:00:04Z", "l1", "TaskList", "{}"),
        result(
            "2026-01-01T00:00:05Z",
            "l1",
            "#5 [in_progress] B (carol)",
            r#"{"tasks":[{"id":"5","subject":"B","status":"in_progress","owner":"carol","blockedBy":[]},{"id":"9","subject":"C","status":"pending","blockedBy":["5"]}]}"#,
        ),
        call("2026-01-01T00:00:06Z", "g1", "TaskGet", r#"{"taskId":"9"}"#),
        result(
            "2026-01-01T00:00:07Z",
            "g1",
            "C",
            r#"{"task":{"id":"9","subject":"C (renamed)","status":"in_progress","owner":"dave"}}"#,
        ),
    ];
    let list = run(&lines).expect("a list");
    assert_eq!(
        summary(&list),
        [
            (Some("5"), "B", "in_progress", Some("carol")),
            (Some("9"), "C (renamed)", "in_progress", Some("dave")),
        ]
    );
    assert_eq!(list.items[1].blocked_by, ["5"]);
}

#[test]
fn the_list_changed_last_wins_and_errors_change_nothing() {
    let tasks_then_todos = [
        call(
            "2026-01-01T00:00:00Z",
            "c1",
            "TaskCreate",
            r#"{"subject":"Task era"}"#,
        ),
        call(
            "2026-01-01T00:00:01Z",
            "t1",
            "TodoWrite",
            r#"{"todos":[{"content":"Todo era","status":"pending"}]}"#,
        ),
    ];
    let list = run(&tasks_then_todos).expect("a list");
    assert_eq!(list.source, TaskSource::TodoWrite);
    assert_eq!(list.items[0].subject, "Todo era");

    let failed = [
        call("2026-01-01T00:00:00Z", "c1", "TaskCreate", r#"{"subject":"X"}"#),
        r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"c1","is_error":true,"content":"Task #8 created successfully"}]}}"#.to_owned(),
    ];
    let list = run(&failed).expect("a list");
    assert_eq!(
        list.items,
        [TaskItem {
            subject: "X".into(),
            status: "pending".into(),
            ..TaskItem::default()
        }]
    );

    // Nothing task-related, a torn line and junk: no list.
    assert_eq!(
        run(&[
            "{\"type\":\"user\",\"message\":{\"content\":\"Task\"}}".into(),
            "{\"type\":\"assis".into(),
            "not json".into()
        ]),
        None
    );
}

#[test]
fn records_and_lines_give_the_same_list() {
    let lines = [
        call(
            "2026-01-01T00:00:00Z",
            "c1",
            "TaskCreate",
            r#"{"subject":"One"}"#,
        ),
        result(
            "2026-01-01T00:00:01Z",
            "c1",
            "Task #1 created successfully: One",
            "null",
        ),
        call(
            "2026-01-01T00:00:02Z",
            "u1",
            "TaskUpdate",
            r#"{"taskId":"1","status":"completed"}"#,
        ),
    ];
    let mut by_record = TaskTracker::new();
    for l in &lines {
        by_record.record(&serde_json::from_str(l).expect("json"));
    }
    // Fed in two slices, as a hook reads what was appended since last time.
    let mut by_lines = TaskTracker::new();
    let text = format!("{}\n{}\n", lines[0], lines[1]);
    by_lines.lines(text.as_bytes());
    by_lines.lines(lines[2].as_bytes());
    assert_eq!(by_record.current(), by_lines.current());
    assert_eq!(
        by_lines.current().expect("list").items[0].status,
        "completed"
    );
}

#[test]
fn corpus_team_session_ends_with_every_task_completed() {
    let Some(dir) = skein_testkit::corpus_dir() else {
        return;
    };
    let path = dir.join("daaain__claude-code-log/test/test_data/real_projects/-experiments-worktrees/ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl");
    let data = std::fs::read(&path).expect("corpus team session");
    let mut t = TaskTracker::new();
    t.lines(&data);
    let list = t.current().expect("a task list");
    assert_eq!(list.source, TaskSource::Tasks);
    let ids: Vec<&str> = list.items.iter().filter_map(|t| t.id.as_deref()).collect();
    assert_eq!(
        ids,
        ["1", "3", "5", "2", "6", "4"],
        "the order of the last TaskList"
    );
    assert!(
        list.items.iter().all(|t| t.status == "completed"),
        "{list:?}"
    );
    let owner = |id: &str| {
        list.items
            .iter()
            .find(|t| t.id.as_deref() == Some(id))
            .and_then(|t| t.owner.as_deref())
    };
    assert_eq!(
        (owner("1"), owner("2"), owner("3")),
        (Some("alice"), Some("bob"), Some("carol"))
    );
}
