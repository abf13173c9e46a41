//! The catalog composed with the layout: which sources a catalog-backed command covers
//! (the given paths, else the default Claude projects roots and the default archive), and
//! refreshing the catalog for them.

use std::path::{Path, PathBuf};

use skein_catalog::{Catalog, Progress, RefreshOptions, RefreshReport};
use skein_layout::{Env, Listing};

/// The default archive directory: `<state>/archive`.
pub fn default_archive(env: &Env) -> Option<PathBuf> {
    env.state_root().map(|d| d.join("archive"))
}

/// What a catalog-backed command covers.
#[derive(Debug, Default)]
pub struct Scope {
    /// The roots listed: the paths given, or the default projects roots and archive.
    pub roots: Vec<PathBuf>,
    /// Whether the paths were given (the command then only answers for them).
    pub explicit: bool,
    /// Sources under the roots (a session both live and archived is listed once, live).
    pub listing: Listing,
}

impl Scope {
    /// The sources under `paths`, or, when none are given, under the default roots and the
    /// default archive (`archive`, else `<state>/archive`) when they exist.
    pub fn of(env: &Env, paths: &[PathBuf], archive: Option<&Path>) -> Self {
        let explicit = !paths.is_empty();
        // Absolute (in `of_roots`), so one file is one source whichever way it was named.
        let roots: Vec<PathBuf> = if explicit {
            paths.to_vec()
        } else {
            let mut roots = env.projects_roots();
            let archive = archive.map(Path::to_path_buf).or_else(|| default_archive(env));
            roots.extend(archive.filter(|a| skein_archive::is_archive_root(a)));
            roots
        };
        Self::of_roots(roots, explicit)
    }

    /// The sources under exactly `roots` (made absolute).
    pub fn of_roots(roots: Vec<PathBuf>, explicit: bool) -> Self {
        let roots: Vec<PathBuf> = roots
            .into_iter()
            .map(|p| std::path::absolute(&p).unwrap_or(p))
            .collect();
        let listing = skein_layout::sources(&roots);
        Self {
            roots,
            explicit,
            listing,
        }
    }

    /// The paths of the sources, for queries limited to the scope.
    pub fn paths(&self) -> std::collections::HashSet<String> {
        self.listing
            .sources
            .iter()
            .map(|s| s.path.to_string_lossy().into_owned())
            .collect()
    }
}

/// Refreshes `catalog` for `scope`: new bytes indexed, and catalogued sources under the
/// scope's roots that are no longer listed dropped.
pub fn refresh(
    catalog: &mut Catalog,
    scope: &Scope,
    threads: usize,
    progress: &mut dyn FnMut(Progress),
) -> skein_catalog::Result<RefreshReport> {
    catalog.refresh(
        &scope.listing.sources,
        &RefreshOptions {
            threads,
            limit_per_source: u64::MAX,
            scope: scope.roots.clone(),
        },
        progress,
    )
}
