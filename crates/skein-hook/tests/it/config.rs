//! Config layering (user → project → explicit), defaults, and error reporting.

use std::fs;
use std::path::PathBuf;

use skein_hook::{Config, ConfigError, ConfigFiles, LogLevel, ProjectLookup};

#[test]
fn defaults_serve_most_users() {
    let c = Config::default();
    assert_eq!(c.passes_for("Stop"), ["snapshot", "archive", "index"]);
    assert_eq!(
        c.passes_for("SubagentStop"),
        ["extract", "archive", "index"]
    );
    assert_eq!(c.passes_for("SessionEnd"), ["archive"]);
    assert_eq!(c.passes_for("PreCompact"), ["archive"]);
    assert_eq!(c.passes_for("UserPromptSubmit"), ["open-request"]);
    assert!(c.passes_for("SessionStart").is_empty());
    assert!(!c.blocking && c.goal_reminder && c.redact && c.compress);
    assert_eq!(c.log.level, LogLevel::Warn);
}

#[test]
fn layers_apply_in_order() {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let user = home.join(".config/skein/config.toml");
    fs::create_dir_all(user.parent().expect("parent")).expect("mkdir");
    fs::write(
        &user,
        r#"
redact = false
archive_dir = "~/archive"
lock_timeout_ms = 500
[log]
dir = "logs"
level = "info"
[events]
Stop = ["archive"]
SessionStart = ["mine"]
[pass.archive]
zstd_level = 9
"#,
    )
    .expect("write");
    let project = dir.path().join("work/proj");
    let sub = project.join("src/deep");
    fs::create_dir_all(&sub).expect("mkdir");
    fs::create_dir_all(project.join(".claude")).expect("mkdir");
    fs::write(
        project.join(".claude/skein.toml"),
        "goal_reminder = false\n[events]\nStop = []\n",
    )
    .expect("write");
    let explicit = dir.path().join("explicit.toml");
    fs::write(&explicit, "blocking = true\n").expect("write");
    let files = ConfigFiles {
        user: Some(user.clone()),
        project: ProjectLookup::EventCwd,
        explicit: Some(explicit.clone()),
    };
    let (c, read) = Config::default()
        .load(&files, Some(&sub), Some(&home))
        .expect("load");
    assert_eq!(
        read,
        [user.clone(), project.join(".claude/skein.toml"), explicit]
    );
    assert!(!c.redact && !c.goal_reminder && c.blocking);
    assert_eq!(c.lock_timeout_ms, 500);
    assert_eq!(c.archive_dir, Some(home.join("archive")));
    assert_eq!(c.log.dir, Some(user.parent().expect("p").join("logs")));
    assert_eq!(c.log.level, LogLevel::Info);
    assert!(
        c.passes_for("Stop").is_empty(),
        "project layer replaced the list"
    );
    assert_eq!(c.passes_for("SessionStart"), ["mine"]);
    assert_eq!(
        c.passes_for("SubagentStop"),
        ["extract", "archive", "index"],
        "untouched default"
    );
    assert_eq!(
        c.pass_options["archive"]["zstd_level"].as_integer(),
        Some(9)
    );

    // Missing user/project files are skipped; a missing explicit file is an error.
    let none = ConfigFiles {
        user: Some(dir.path().join("nope.toml")),
        project: ProjectLookup::Dir(dir.path().join("nowhere")),
        explicit: None,
    };
    assert_eq!(
        Config::default().load(&none, None, None).expect("load").1,
        Vec::<PathBuf>::new()
    );
    let missing = ConfigFiles {
        explicit: Some(dir.path().join("nope.toml")),
        ..ConfigFiles::default()
    };
    assert!(matches!(
        Config::default().load(&missing, None, None),
        Err(ConfigError::Read { .. })
    ));
}

fn apply(text: &str) -> Result<Config, ConfigError> {
    let mut c = Config::default();
    c.apply_toml(text, std::path::Path::new("/cfg/config.toml"), None)
        .map(|()| c)
}

#[test]
fn errors_name_file_and_line() {
    let err =
        apply("redact = true\n\n[log]\nkeep = 2\ncolour = \"red\"\n").expect_err("unknown key");
    let msg = err.to_string();
    assert!(msg.starts_with("/cfg/config.toml:5: "), "{msg}");
    assert!(msg.contains("colour"), "{msg}");
    let err = apply("blocking = true\nverbose = 1\n").expect_err("unknown key");
    assert!(err.to_string().starts_with("/cfg/config.toml:2: "), "{err}");
    let err = apply("[events]\nStop = [\"../evil\"]\n").expect_err("bad pass");
    assert!(
        err.to_string().contains(":2: ") && err.to_string().contains("invalid pass name"),
        "{err}"
    );
    let err = apply("[events]\n\"Sto p\" = []\n").expect_err("bad event");
    assert!(err.to_string().contains("invalid event name"), "{err}");
    let err = apply("blocking = \"yes\"\n").expect_err("type");
    assert!(matches!(err, ConfigError::Parse { line: 1, .. }), "{err}");
    let err = apply("archive_dir = \"~/a\"\n").expect_err("no home");
    assert!(matches!(err, ConfigError::NoHome { .. }), "{err}");
}

#[test]
fn project_layer_may_not_redirect_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(dir.path().join(".claude")).expect("mkdir");
    for text in ["archive_dir = \"/tmp/leak\"\n", "[log]\ndir = \"here\"\n"] {
        fs::write(dir.path().join(".claude/skein.toml"), text).expect("write");
        let files = ConfigFiles {
            project: ProjectLookup::Dir(dir.path().to_owned()),
            ..ConfigFiles::default()
        };
        let err = Config::default()
            .load(&files, None, None)
            .expect_err("refused");
        assert!(matches!(err, ConfigError::NotAllowed { .. }), "{err}");
    }
}

#[test]
fn one_file_serves_every_command_with_every_section_typed() {
    let c = apply("redact = false\n\n[statusline]\nformat = \"{model} · {today}\"\n")
        .expect("one config file serves the hook and the status line");
    assert!(!c.redact);
    assert_eq!(c.statusline.format.as_deref(), Some("{model} · {today}"));
    let err = apply("[statusline]\n\nformat = 3\n").expect_err("typed now");
    assert!(matches!(err, ConfigError::Parse { line: 3, .. }), "{err}");

    let c = apply(
        "[hook]\nblocking = true\nlock_timeout_ms = 10\n[archive]\ndir = \"/a\"\nlevel = 19\n\
         [reports]\ntimezone = \"Asia/Tokyo\"\nformat = \"json\"\npricing = \"prices.json\"\n\
         [passes.prune]\npreset = \"lean\"\nthinking = false\n[passes.snapshot]\nsince = \"2026-05-01T00:00:00Z\"\n",
    )
    .expect("parse");
    assert!(c.blocking);
    assert_eq!(c.lock_timeout_ms, 10);
    assert_eq!(c.archive_dir, Some(PathBuf::from("/a")));
    assert_eq!(c.archive_level, Some(19));
    assert_eq!(c.reports.timezone.as_deref(), Some("Asia/Tokyo"));
    assert_eq!(c.reports.format, Some(skein_hook::ReportFormat::Json));
    assert_eq!(c.reports.pricing, Some(PathBuf::from("/cfg/prices.json")));
    let prune = c.passes.prune.expect("preset");
    assert_eq!(prune.thinking, Some(false));
    assert!(c.passes.snapshot.is_some());

    // Today's top-level hook keys keep working, but not twice in one file.
    let c = apply("archive_dir = \"/old\"\ngoal_reminder = false\n").expect("legacy keys");
    assert_eq!(c.archive_dir, Some(PathBuf::from("/old")));
    assert!(!c.goal_reminder);
    let err = apply("archive_dir = \"/a\"\n[archive]\ndir = \"/b\"\n").expect_err("twice");
    assert!(matches!(err, ConfigError::Value { line: 3, .. }), "{err}");
    let err = apply("[archive]\nlevel = 23\n").expect_err("range");
    assert!(
        err.to_string().contains(":2: ") && err.to_string().contains("out of range"),
        "{err}"
    );
}

#[test]
fn one_redaction_table_serves_hook_and_command_until_both_are_set() {
    let c = apply("[passes.redact]\nlevel = \"standard\"\n").expect("parse");
    assert_eq!(c.redaction.level, skein_redact::Level::Standard);
    assert_eq!(c.command_redaction().level, skein_redact::Level::Standard);
    let c = apply("[redaction]\ndisable = [\"email\"]\n").expect("parse");
    assert_eq!(c.command_redaction().disable, ["email"]);
    let c = apply("[redaction]\ndisable = [\"email\"]\n[passes.redact]\nlevel = \"standard\"\n")
        .expect("parse");
    assert_eq!(c.redaction.disable, ["email"]);
    assert!(c.command_redaction().disable.is_empty());
}
