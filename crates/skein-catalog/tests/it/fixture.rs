//! The fixture history: known words in every kind of place, found with the right session,
//! agent, kind and tool; `sessions` lists exactly the main sessions.

use skein_catalog::{SearchQuery, SessionQuery};
use skein_reports::pricing::PricingTable;

use crate::common::{A, B, Fixture, found, hits};

#[test]
fn every_kind_of_place_is_found() {
    let f = Fixture::new();
    let mut c = f.open();
    let r = f.refresh(&mut c);
    assert_eq!((r.sources, r.reindexed), (3, 3));
    let s = |v: &str| v.to_owned();
    let agent = Some(s("a1b2c3"));
    let cases = [
        ("flamingo", A, None, "prompt", None),
        ("walrus", A, None, "thinking", None),
        ("zeppelin", A, None, "text", None),
        ("quokka", A, None, "tool_use", Some(s("Bash"))),
        ("narwhal", A, None, "tool_result", Some(s("Bash"))),
        ("pangolin", A, agent.clone(), "prompt", None),
        ("axolotl", A, agent.clone(), "text", None),
        ("capybara", B, None, "prompt", None),
    ];
    for (word, session, agent, kind, tool) in cases {
        assert_eq!(
            hits(&c, word),
            [(s(session), agent, s(kind), tool)],
            "search {word}"
        );
    }
    // Phrases, prefixes, AND, case.
    assert_eq!(hits(&c, "\"flamingo authentication\"").len(), 1);
    assert!(hits(&c, "\"authentication flamingo\"").is_empty());
    assert_eq!(hits(&c, "FLAMIN*").len(), 1);
    assert_eq!(
        hits(&c, "flamingo walrus").len(),
        0,
        "words are ANDed within one block"
    );
    // Filters.
    let found = c
        .search(&SearchQuery {
            query: "src".into(),
            tool: Some("Bash".into()),
            kinds: vec![skein_catalog::DocKind::ToolResult],
            limit: 10,
            ..SearchQuery::default()
        })
        .expect("search");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].uuid.as_deref(), Some("a-u2"));
    assert_eq!(
        found[0].snippet,
        "«src»/auth.rs:12: let narwhal = refresh();"
    );
    assert_eq!(
        found[0].timestamp.as_deref(),
        Some("2026-03-01T10:00:04.500Z")
    );
    let none = c
        .search(&SearchQuery {
            query: "flamingo".into(),
            project: Some("other".into()),
            limit: 10,
            ..SearchQuery::default()
        })
        .expect("search");
    assert!(none.is_empty());
    let by_session = c
        .search(&SearchQuery {
            query: "capybara".into(),
            session: Some("2222".into()),
            since_ms: Some(1_772_409_600_000), // 2026-03-02
            limit: 10,
            ..SearchQuery::default()
        })
        .expect("search");
    assert_eq!(by_session.len(), 1);
}

#[test]
fn sessions_lists_exactly_the_main_sessions() {
    let f = Fixture::new();
    let mut c = f.open();
    f.refresh(&mut c);
    let rows = c
        .sessions(&SessionQuery::default(), &PricingTable::embedded())
        .expect("sessions");
    let ids: Vec<&str> = rows.iter().map(|r| r.session_id.as_str()).collect();
    assert_eq!(ids, [B, A], "newest first, subagents not listed");
    let a = &rows[1];
    assert_eq!(a.title.as_deref(), Some("Fix the authentication bug"));
    assert_eq!(a.project, "-home-me-widgets");
    assert_eq!(a.cwd.as_deref(), Some("/home/me/widgets"));
    assert_eq!(a.git_branch.as_deref(), Some("main"));
    assert_eq!(a.subagents, 1);
    assert_eq!(a.prompts, 1);
    // Two distinct tool calls (Bash, Task). Messages are user prompts and API responses
    // (tool results are not counted): 1 + 2 in the main file, 1 + 1 in the subagent.
    assert_eq!(a.tool_calls, 2);
    assert_eq!(a.messages, 5);
    assert_eq!(a.models, ["claude-sonnet-4-5"]);
    assert_eq!(
        a.first_timestamp.as_deref(),
        Some("2026-03-01T10:00:00.000Z")
    );
    assert_eq!(
        a.last_timestamp.as_deref(),
        Some("2026-03-01T10:01:00.000Z")
    );
    assert!(!a.archived);
    assert!(a.cost_usd > 0.0);
    let b = &rows[0];
    assert_eq!(b.title.as_deref(), Some("hello capybara, continue"));
    // Filters and limits.
    let only = c
        .sessions(
            &SessionQuery {
                project: Some("widgets".into()),
                ..SessionQuery::default()
            },
            &PricingTable::embedded(),
        )
        .expect("sessions");
    assert_eq!(only.len(), 1);
    let limited = c
        .sessions(
            &SessionQuery {
                limit: Some(1),
                since_ms: Some(1_772_409_600_000), // 2026-03-02T00:00:00Z
                ..SessionQuery::default()
            },
            &PricingTable::embedded(),
        )
        .expect("sessions");
    assert_eq!(limited.len(), 1);
    assert_eq!(limited[0].session_id, B);
}

#[test]
fn fts5_is_compiled_in_and_the_catalog_is_private() {
    let f = Fixture::new();
    let mut c = f.open();
    f.refresh(&mut c);
    assert_eq!(c.integrity_check().expect("check"), Ok(()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(f.db()).expect("db").permissions().mode();
        assert_eq!(mode & 0o077, 0, "catalog mode {mode:o}");
    }
}

#[test]
fn a_corrupt_or_newer_catalog_is_rebuilt() {
    let f = Fixture::new();
    {
        let mut c = f.open();
        f.refresh(&mut c);
    }
    // A newer schema: rebuilt, then refreshed from the sources.
    {
        let conn = rusqlite::Connection::open(f.db()).expect("sqlite");
        conn.execute_batch("PRAGMA user_version = 99")
            .expect("set version");
    }
    let mut c = f.open();
    assert!(
        matches!(c.opened(), skein_catalog::Opened::Rebuilt(r) if r.contains("newer")),
        "{:?}",
        c.opened()
    );
    assert_eq!(c.stats().expect("stats").sources, 0);
    f.refresh(&mut c);
    assert_eq!(crate::common::hits(&c, "flamingo").len(), 1);
    drop(c);
    // Garbage in the file: rebuilt.
    for p in ["catalog.db-wal", "catalog.db-shm"] {
        let _ = std::fs::remove_file(f.db().with_file_name(p));
    }
    std::fs::write(
        f.db(),
        b"this is not a database, just some bytes ".repeat(200),
    )
    .expect("write");
    let mut c = f.open();
    assert!(
        matches!(c.opened(), skein_catalog::Opened::Rebuilt(_)),
        "{:?}",
        c.opened()
    );
    f.refresh(&mut c);
    assert_eq!(crate::common::hits(&c, "walrus").len(), 1);
    assert_eq!(c.integrity_check().expect("check"), Ok(()));
}

/// A hit names the directory its session is resumed from: the main transcript's `cwd`, even
/// for a subagent that ran in a worktree of its own; the agent's own when the main transcript
/// is gone.
#[test]
fn a_hit_names_the_directory_its_session_resumes_in() {
    let f = Fixture::new();
    let agent = f
        .projects()
        .join(format!("-home-me-widgets/{A}/subagents/agent-a1b2c3.jsonl"));
    let text = std::fs::read_to_string(&agent).expect("read");
    let worktree = "/home/me/widgets/.claude/worktrees/agent-a1b2c3";
    std::fs::write(
        &agent,
        text.replace(
            "\"cwd\":\"/home/me/widgets\"",
            &format!("\"cwd\":\"{worktree}\""),
        ),
    )
    .expect("write");
    let mut c = f.open();
    f.refresh(&mut c);
    let cwd = |c: &skein_catalog::Catalog, word: &str| {
        let found = found(c, word, 10);
        assert_eq!(found.len(), 1, "{word}");
        found[0].cwd.clone()
    };
    assert_eq!(cwd(&c, "pangolin").as_deref(), Some("/home/me/widgets"));
    assert_eq!(cwd(&c, "capybara").as_deref(), Some("/home/me/widgets"));
    std::fs::remove_file(f.main_file(A, "-home-me-widgets")).expect("rm");
    f.refresh(&mut c);
    assert_eq!(cwd(&c, "pangolin").as_deref(), Some(worktree));
}
