//! `skein hooks install|uninstall|doctor` on settings.json files in a temp dir.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};
use skein_hook::settings::{BACKUP_SUFFIX, SettingsScope, settings_path};
use skein_hook::{
    ConfigFiles, DoctorInput, InstallOptions, Severity, default_hooks, doctor, install, uninstall,
};

fn foreign() -> Value {
    json!({
        "model": "opus",
        "permissions": {"allow": ["Bash(cargo test:*)"]},
        "hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}],
            "SubagentStop": [{"matcher": "Explore", "hooks": [
                {"type": "command", "command": "other-tool"},
                {"type": "prompt", "prompt": "skein hook"}
            ]}]
        },
        "statusLine": {"type": "command", "command": "echo hi"}
    })
}

fn read(path: &std::path::Path) -> Value {
    serde_json::from_slice(&fs::read(path).expect("read")).expect("json")
}

#[test]
fn install_is_idempotent_and_uninstall_restores_exactly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("settings.json");
    let original = serde_json::to_string_pretty(&foreign()).expect("json") + "\n";
    fs::write(&path, &original).expect("write");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).expect("chmod");
    let opts = InstallOptions::default();

    let dry = install(
        &path,
        &InstallOptions {
            dry_run: true,
            ..opts.clone()
        },
    )
    .expect("dry");
    assert!(dry.changed && !dry.written);
    assert_eq!(
        fs::read_to_string(&path).expect("read"),
        original,
        "dry run writes nothing"
    );
    assert!(
        !dir.path()
            .join(format!("settings.json{BACKUP_SUFFIX}"))
            .exists()
    );

    let first = install(&path, &opts).expect("install");
    assert!(first.written);
    assert_eq!(first.events.len(), default_hooks().len());
    assert_eq!(
        fs::read_to_string(first.backup.as_ref().expect("backup")).expect("b"),
        original
    );
    assert_eq!(
        fs::metadata(&path).expect("meta").permissions().mode() & 0o777,
        0o640
    );
    let v = read(&path);
    assert_eq!(v["model"], "opus");
    assert_eq!(v["statusLine"]["command"], "echo hi");
    let stop = v["hooks"]["Stop"].as_array().expect("Stop");
    assert_eq!(stop.len(), 2);
    assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
    assert_eq!(
        stop[1],
        json!({"hooks":[{"type":"command","command":"skein hook","timeout":30}]})
    );
    assert_eq!(v["hooks"]["SessionStart"][0]["matcher"], "compact");
    assert_eq!(v["hooks"]["PreToolUse"], foreign()["hooks"]["PreToolUse"]);
    // Key order of the user's file is kept; new events are appended.
    let keys: Vec<&String> = v.as_object().expect("obj").keys().collect();
    assert_eq!(keys, ["model", "permissions", "hooks", "statusLine"]);
    let events: Vec<&String> = v["hooks"].as_object().expect("obj").keys().collect();
    assert_eq!(&events[..3], ["Stop", "PreToolUse", "SubagentStop"]);

    let installed_text = fs::read_to_string(&path).expect("read");
    let second = install(&path, &opts).expect("again");
    assert!(!second.changed && !second.written && second.events.is_empty());
    assert_eq!(fs::read_to_string(&path).expect("read"), installed_text);

    let removed = uninstall(&path, &opts).expect("uninstall");
    assert!(removed.written);
    assert_eq!(removed.events.len(), default_hooks().len());
    assert_eq!(read(&path), foreign());
    assert_eq!(
        fs::read_to_string(&path).expect("read"),
        original,
        "byte for byte"
    );
    let again = uninstall(&path, &opts).expect("uninstall again");
    assert!(!again.changed && !again.written);
}

#[test]
fn install_into_missing_or_empty_file_and_uninstall_removes_hooks_key() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = settings_path(
        SettingsScope::ProjectLocal,
        dir.path(),
        &dir.path().join("proj"),
    );
    assert!(path.ends_with("proj/.claude/settings.local.json"));
    let opts = InstallOptions {
        command: "/opt/skein/bin/skein hook".into(),
        ..InstallOptions::default()
    };
    let change = install(&path, &opts).expect("install");
    assert!(change.written && change.backup.is_none());
    assert_eq!(
        read(&path)["hooks"]["Stop"][0]["hooks"][0]["command"],
        "/opt/skein/bin/skein hook"
    );
    uninstall(&path, &opts).expect("uninstall");
    assert_eq!(read(&path), json!({}));

    fs::write(&path, "  \n").expect("write");
    install(&path, &opts).expect("install into empty file");
    // Another command string is not ours: uninstall with the default command removes nothing.
    assert!(
        !uninstall(&path, &InstallOptions::default())
            .expect("uninstall")
            .changed
    );
}

#[test]
fn broken_settings_are_refused_untouched() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("settings.json");
    for text in [
        "{\"hooks\": {",
        "[1]",
        "{\"hooks\": []}",
        "{\"hooks\": {\"Stop\": {}}}",
    ] {
        fs::write(&path, text).expect("write");
        assert!(
            install(&path, &InstallOptions::default()).is_err(),
            "{text}"
        );
        assert_eq!(fs::read_to_string(&path).expect("read"), text);
    }
}

#[test]
fn doctor_findings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let user = dir.path().join("user.json");
    let project = dir.path().join("project.json");
    let broken = dir.path().join("broken.json");
    let bin = dir.path().join("bin");
    fs::create_dir_all(&bin).expect("mkdir");
    let mut opts = InstallOptions::default();
    opts.hooks.retain(|h| h.event != "SessionEnd");
    install(&user, &opts).expect("install");
    // A duplicate in the project file, plus hooks disabled.
    let mut v = read(&user);
    let stop = v["hooks"]["Stop"][0].clone();
    v["hooks"]["Stop"].as_array_mut().expect("arr").push(stop);
    v["disableAllHooks"] = true.into();
    fs::write(&project, v.to_string()).expect("write");
    fs::write(&broken, "{nope").expect("write");
    let state_file = dir.path().join("state-is-a-file");
    fs::write(&state_file, "x").expect("write");
    let input = DoctorInput {
        settings_files: vec![
            user.clone(),
            project.clone(),
            broken.clone(),
            dir.path().join("absent.json"),
        ],
        command: "skein hook".into(),
        expected: default_hooks(),
        path_env: Some(bin.clone().into_os_string()),
        config: Some((ConfigFiles::default(), None)),
        home: None,
        state_root: Some(state_file),
        checks: skein_hook::config::check::Checks {
            runner_passes: ["snapshot", "archive", "index"].map(String::from).to_vec(),
            ..Default::default()
        },
        now_ms: None,
    };
    let findings = doctor(&input);
    let codes: Vec<(&str, Severity)> = findings.iter().map(|f| (f.code, f.severity)).collect();
    for want in [
        ("hooks-disabled", Severity::Warning),
        ("duplicate-entry", Severity::Warning),
        ("unparsable-settings", Severity::Error),
        ("no-settings", Severity::Info),
        ("missing-event", Severity::Warning),
        ("binary-not-found", Severity::Error),
        ("config-ok", Severity::Info),
        ("state-not-writable", Severity::Error),
    ] {
        assert!(codes.contains(&want), "{want:?} not in {codes:?}");
    }
    let missing: Vec<&str> = findings
        .iter()
        .filter(|f| f.code == "missing-event")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(missing, ["no `skein hook` handler for SessionEnd"]);
    assert_eq!(
        findings
            .iter()
            .find(|f| f.code == "duplicate-entry")
            .and_then(|f| f.path.clone()),
        Some(project)
    );

    // With the binary on PATH and a clean file: nothing above Info.
    let exe = bin.join("skein");
    fs::write(&exe, "#!/bin/sh\n").expect("write");
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).expect("chmod");
    install(&user, &InstallOptions::default()).expect("install all");
    let clean = DoctorInput {
        settings_files: vec![user],
        state_root: Some(dir.path().join("state")),
        ..input
    };
    let findings = doctor(&clean);
    assert!(
        findings.iter().all(|f| f.severity == Severity::Info),
        "{findings:?}"
    );
}

#[test]
fn doctor_reports_unknown_names_and_recent_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    fs::write(
        &config,
        "[events]\nStop = [\"snapshot\", \"archiv\"]\nStopp = [\"archive\"]\n",
    )
    .expect("write");
    let state = dir.path().join("state");
    fs::create_dir_all(state.join("logs")).expect("mkdir");
    let now = skein_core::time::parse_ms("2026-05-02T12:00:00.000Z").expect("ts");
    let line = |ts: &str, level: &str, message: &str| {
        format!("{{\"ts\":\"{ts}\",\"level\":\"{level}\",\"message\":\"{message}\"}}\n")
    };
    let log = [
        line("2026-05-01T08:00:00.000Z", "error", "too old"),
        line(
            "2026-05-02T09:00:00.000Z",
            "error",
            "unknown pass \\\"archiv\\\"",
        ),
        line(
            "2026-05-02T10:00:00.000Z",
            "error",
            "unknown pass \\\"archiv\\\"",
        ),
        line("2026-05-02T11:00:00.000Z", "warn", "a warning"),
        line("2026-05-02T11:30:00.000Z", "error", "disk full"),
    ]
    .concat();
    fs::write(state.join("logs/hook.log"), log).expect("write");
    let input = DoctorInput {
        config: Some((
            ConfigFiles {
                explicit: Some(config),
                ..ConfigFiles::default()
            },
            None,
        )),
        state_root: Some(state),
        checks: skein_hook::config::check::Checks {
            runner_passes: ["snapshot", "archive", "index"].map(String::from).to_vec(),
            ..Default::default()
        },
        now_ms: Some(now),
        ..DoctorInput::default()
    };
    let findings = doctor(&input);
    let of = |code: &str| -> Vec<(Severity, String)> {
        findings
            .iter()
            .filter(|f| f.code == code)
            .map(|f| (f.severity, f.message.clone()))
            .collect()
    };
    let pass = of("unknown-pass");
    assert_eq!(pass.len(), 1, "{findings:?}");
    assert_eq!(pass[0].0, Severity::Error);
    assert!(pass[0].1.contains("did you mean \"archive\""), "{pass:?}");
    let event = of("unknown-event");
    assert_eq!(event.len(), 1, "{findings:?}");
    assert!(event[0].1.contains("\"Stopp\""), "{event:?}");
    let recent = of("recent-errors");
    assert_eq!(recent.len(), 2, "{recent:?}");
    assert!(
        recent[0]
            .1
            .starts_with("2× in the last 24 h (last 2026-05-02T10:00:00.000Z)"),
        "{recent:?}"
    );
    assert!(recent[1].1.ends_with("disk full"), "{recent:?}");
}
