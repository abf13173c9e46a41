//! Helpers: the fixture history copied to a temp dir, a catalog beside it, refreshes.
#![allow(dead_code, reason = "modules use different subsets")]

use std::path::{Path, PathBuf};

use skein_catalog::{Catalog, CatalogOptions, RefreshOptions, RefreshReport, SearchQuery};

pub(crate) const A: &str = "11111111-1111-4111-8111-111111111111";
pub(crate) const B: &str = "22222222-2222-4222-8222-222222222222";

/// A path under `testdata/`.
pub(crate) fn testdata(rel: &str) -> PathBuf {
    skein_testkit::workspace_root().join("testdata").join(rel)
}

pub(crate) use skein_testkit::copy_dir;

/// A temp dir holding a copy of the catalog fixture history under `projects/`.
pub(crate) struct Fixture {
    pub(crate) dir: tempfile::TempDir,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        copy_dir(&testdata("catalog/projects"), &dir.path().join("projects"));
        Self { dir }
    }

    pub(crate) fn projects(&self) -> PathBuf {
        self.dir.path().join("projects")
    }

    pub(crate) fn db(&self) -> PathBuf {
        self.dir.path().join("state/catalog.db")
    }

    pub(crate) fn main_file(&self, session: &str, project: &str) -> PathBuf {
        self.projects()
            .join(project)
            .join(format!("{session}.jsonl"))
    }

    pub(crate) fn open(&self) -> Catalog {
        Catalog::open(&self.db(), CatalogOptions::default()).expect("open")
    }

    pub(crate) fn refresh(&self, c: &mut Catalog) -> RefreshReport {
        refresh(c, &[self.projects()])
    }
}

pub(crate) fn refresh(c: &mut Catalog, roots: &[PathBuf]) -> RefreshReport {
    let listing = skein_layout::sources(roots);
    assert!(listing.errors.is_empty(), "{:?}", listing.errors);
    let r = c
        .refresh(
            &listing.sources,
            &RefreshOptions {
                threads: 2,
                scope: roots.to_vec(),
                ..RefreshOptions::default()
            },
            &mut |_| {},
        )
        .expect("refresh");
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    r
}

/// A clock (ns) far enough ahead that every directory counts as settled: recorded, so that
/// the next refresh of the same roots can take the fast path.
pub(crate) const SETTLED_CLOCK: i64 = i64::MAX / 2;

/// The hits for `query`, at most `limit`, whole.
pub(crate) fn found(c: &Catalog, query: &str, limit: usize) -> Vec<skein_catalog::Hit> {
    c.search(&SearchQuery {
        query: query.into(),
        limit,
        ..SearchQuery::default()
    })
    .expect("search")
}

/// The hits for `query`, as (session, agent, kind, tool).
pub(crate) fn hits(
    c: &Catalog,
    query: &str,
) -> Vec<(String, Option<String>, String, Option<String>)> {
    c.search(&SearchQuery {
        query: query.into(),
        limit: 100,
        ..SearchQuery::default()
    })
    .expect("search")
    .into_iter()
    .map(|h| (h.session_id, h.agent_id, h.kind.to_owned(), h.tool))
    .collect()
}

/// Appends `text` to `path`.
pub(crate) fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open for append");
    f.write_all(text.as_bytes()).expect("append");
}
