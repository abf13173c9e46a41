//! Facts for `skein --version`: the git commit of the build and the date of the embedded price
//! table (so a bug report says which prices were used).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "a build script reads files and runs git"
)]

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .filter(|s| !s.is_empty())
}

fn main() {
    let commit = git(&["rev-parse", "--short=10", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"]).is_some();
    println!(
        "cargo:rustc-env=SKEIN_GIT_COMMIT={commit}{}",
        if dirty { "-modified" } else { "" }
    );
    // A new commit moves HEAD's reflog; without git nothing is watched beyond the price table.
    for path in ["HEAD", "logs/HEAD"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    let prices = "../skein-reports/pricing.json";
    println!("cargo:rerun-if-changed={prices}");
    let text = std::fs::read_to_string(prices).unwrap_or_default();
    let as_of = text
        .split("\"as_of\"")
        .nth(1)
        .and_then(|rest| rest.split('"').nth(1))
        .unwrap_or("unknown")
        .to_owned();
    println!("cargo:rustc-env=SKEIN_PRICES_AS_OF={as_of}");
}
