//! The catalog composed with the environment: which roots a catalog-backed command covers
//! (the given paths, else the default Claude projects roots and the default archive), and
//! refreshing the catalog for them.

use std::path::{Path, PathBuf};

use skein_catalog::{Catalog, Progress, RefreshOptions, RootsReport};
use skein_layout::Env;

/// What a catalog-backed command covers.
#[derive(Debug, Default, Clone)]
pub struct Scope {
    /// Absolute roots: the paths given, or the default projects roots and archive.
    pub roots: Vec<PathBuf>,
    /// Whether the paths were given (the command then only answers for them).
    pub explicit: bool,
}

impl Scope {
    /// `paths`, or, when none are given, the default roots and the default archive
    /// (`archive`, else `<state>/archive`) that exist.
    pub fn of(env: &Env, paths: &[PathBuf], archive: Option<&Path>) -> Self {
        if !paths.is_empty() {
            return Self::of_roots(paths.to_vec(), true);
        }
        // Default roots that do not exist (yet) are not errors: the catalog still answers.
        let mut roots: Vec<PathBuf> = env
            .projects_roots()
            .into_iter()
            .filter(|r| r.exists())
            .collect();
        let archive = archive
            .map(Path::to_path_buf)
            .or_else(|| env.default_archive());
        roots.extend(archive.filter(|a| skein_archive::is_archive_root(a)));
        Self::of_roots(roots, false)
    }

    /// Exactly `roots`, made absolute (so one file is one source whichever way it was named);
    /// standard input (`-`) is not catalogued.
    pub fn of_roots(roots: Vec<PathBuf>, explicit: bool) -> Self {
        let roots = given_roots(roots).into_iter().map(|r| r.absolute).collect();
        Self { roots, explicit }
    }
}

/// `roots` as given, each with the absolute form a [`Scope`] of them refreshes the catalog
/// for (`std::path::absolute`: lexical, `..` kept); standard input (`-`) is left out.
pub fn given_roots(roots: Vec<PathBuf>) -> Vec<skein_layout::GivenRoot> {
    roots
        .into_iter()
        .filter(|p| p.as_os_str() != "-")
        .map(|given| {
            let absolute = std::path::absolute(&given).unwrap_or_else(|_| given.clone());
            skein_layout::GivenRoot { given, absolute }
        })
        .collect()
}

/// Refreshes `catalog` for `scope` (see [`Catalog::refresh_roots`]); `now_ns` is the clock;
/// with `defer_above`, nothing is indexed when more new bytes than that are found.
pub fn refresh(
    catalog: &mut Catalog,
    scope: &Scope,
    threads: usize,
    now_ns: Option<i64>,
    defer_above: Option<u64>,
    progress: &mut dyn FnMut(Progress),
) -> skein_catalog::Result<RootsReport> {
    catalog.refresh_roots(
        &scope.roots,
        &RefreshOptions {
            threads,
            now_ns,
            defer_above,
            ..RefreshOptions::default()
        },
        progress,
    )
}
