//! `skein statusline install|uninstall` on settings.json files in a temp dir: the same backup,
//! atomic write and idempotence as `hooks install`, and another tool's status line is never
//! replaced silently.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use serde_json::{Value, json};
use skein_hook::settings::BACKUP_SUFFIX;
use skein_hook::{
    InstallOptions, StatusLineOptions, install, install_status_line, uninstall_status_line,
};

fn read(path: &std::path::Path) -> Value {
    serde_json::from_slice(&fs::read(path).expect("read")).expect("json")
}

#[test]
fn install_is_idempotent_keeps_the_rest_and_uninstall_restores() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("settings.json");
    let backup = dir.path().join(format!("settings.json{BACKUP_SUFFIX}"));
    let original = json!({"model": "opus", "env": {"A": "1"}, "permissions": {"allow": []}});
    let text = serde_json::to_string_pretty(&original).expect("json") + "\n";
    fs::write(&path, &text).expect("write");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o640)).expect("chmod");
    let opts = StatusLineOptions::default();

    let dry = install_status_line(
        &path,
        &StatusLineOptions {
            dry_run: true,
            ..opts.clone()
        },
    )
    .expect("dry run");
    assert!(dry.changed && !dry.written);
    assert_eq!(fs::read_to_string(&path).expect("read"), text);

    let c = install_status_line(&path, &opts).expect("install");
    assert!(c.changed && c.written);
    assert_eq!(c.events, ["statusLine"]);
    let v = read(&path);
    assert_eq!(
        v["statusLine"],
        json!({"type": "command", "command": "skein statusline", "padding": 0})
    );
    // The rest untouched, in its order; the backup is the old file; the mode kept.
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["model", "env", "permissions", "statusLine"]);
    assert_eq!(fs::read_to_string(&backup).expect("backup"), text);
    assert_eq!(
        fs::metadata(&path).expect("meta").permissions().mode() & 0o777,
        0o640
    );

    // Again: nothing to do, nothing written (the backup is still the first one).
    let after = fs::read_to_string(&path).expect("read");
    let again = install_status_line(&path, &opts).expect("again");
    assert!(!again.changed && !again.written);
    assert_eq!(fs::read_to_string(&path).expect("read"), after);

    // Hooks go through the same writer and leave the status line alone.
    install(&path, &InstallOptions::default()).expect("hooks");
    assert_eq!(read(&path)["statusLine"]["command"], "skein statusline");

    let u = uninstall_status_line(&path, &opts).expect("uninstall");
    assert!(u.changed && u.written);
    assert!(read(&path).get("statusLine").is_none());
    assert!(read(&path).get("hooks").is_some());
    let u = uninstall_status_line(&path, &opts).expect("nothing left");
    assert!(!u.changed && !u.written);
}

#[test]
fn another_status_line_is_replaced_only_when_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("settings.json");
    let theirs = json!({"statusLine": {"type": "command", "command": "ccusage statusline"}});
    let text = serde_json::to_string_pretty(&theirs).expect("json") + "\n";
    fs::write(&path, &text).expect("write");

    let e = install_status_line(&path, &StatusLineOptions::default()).expect_err("refused");
    assert!(e.to_string().contains("`ccusage statusline`"), "{e}");
    assert!(e.to_string().contains("--force"), "{e}");
    assert_eq!(fs::read_to_string(&path).expect("read"), text, "untouched");
    // Uninstall does not remove someone else's status line.
    let u = uninstall_status_line(&path, &StatusLineOptions::default()).expect("no-op");
    assert!(!u.changed);
    assert_eq!(fs::read_to_string(&path).expect("read"), text);

    let c = install_status_line(
        &path,
        &StatusLineOptions {
            replace: true,
            command: "/opt/skein/bin/skein statusline".into(),
            ..StatusLineOptions::default()
        },
    )
    .expect("replaced");
    assert!(c.written);
    assert_eq!(
        read(&path)["statusLine"]["command"],
        "/opt/skein/bin/skein statusline"
    );
    let backup = dir.path().join(format!("settings.json{BACKUP_SUFFIX}"));
    assert_eq!(fs::read_to_string(&backup).expect("backup"), text);

    // A missing file is created; broken JSON is refused untouched.
    let fresh = dir.path().join("sub/settings.json");
    assert!(
        install_status_line(&fresh, &StatusLineOptions::default())
            .expect("new")
            .written
    );
    assert_eq!(read(&fresh)["statusLine"]["type"], "command");
    let broken = dir.path().join("broken.json");
    fs::write(&broken, "{\"a\":").expect("write");
    assert!(install_status_line(&broken, &StatusLineOptions::default()).is_err());
    assert_eq!(fs::read_to_string(&broken).expect("read"), "{\"a\":");
}
