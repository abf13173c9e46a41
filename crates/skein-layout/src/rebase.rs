//! Naming sessions found under absolute roots by the roots as the user gave them.
//!
//! The catalog stores every path in the absolute form of the root it was listed from
//! (`std::path::absolute`: the working directory joined lexically, `..` kept). A report given a
//! relative root (`skein usage daily .`) names its files relatively, as a listing of that root
//! does (in warnings, in the project filter). [`rebase_sessions`] turns the catalog's sessions
//! into exactly what [`crate::discover`] of the given roots returns, so the report can take
//! them from the catalog instead of walking the tree again.

use std::path::{Path, PathBuf};

use crate::discover::SessionFiles;

/// A root as given, and its absolute form (the catalog's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GivenRoot {
    pub given: PathBuf,
    pub absolute: PathBuf,
}

/// `sessions` (found under the absolute forms of `roots`, ordered as [`crate::group`] orders
/// them) named under the roots as given; `None` when a path lies under no root, or under a
/// root that is not a directory (a single file's project directory is its parent, which a
/// relative file root does not name the same way): the caller lists the roots instead.
pub fn rebase_sessions(
    sessions: Vec<SessionFiles>,
    roots: &[GivenRoot],
) -> Option<Vec<SessionFiles>> {
    // Compared as strings: `Path`'s equality ignores a `.` component or a doubled `/` that the
    // listing keeps in its names (`/a/./b` lists `/a/./b/x`, the catalog holds `/a/b/x`).
    if roots
        .iter()
        .all(|r| r.given.as_os_str() == r.absolute.as_os_str())
    {
        return Some(sessions);
    }
    let mut out = Vec::with_capacity(sessions.len());
    for mut s in sessions {
        let root = roots
            .iter()
            .find(|r| s.project_dir.starts_with(&r.absolute))?;
        let rebase = |p: &Path| rebase_path(p, root);
        s.project_dir = rebase(&s.project_dir)?;
        if let Some(main) = &s.main {
            s.main = Some(rebase(main)?);
        }
        for a in &mut s.agents {
            a.path = rebase(&a.path)?;
        }
        out.push(s);
    }
    // Under one root the order is the absolute paths' (one common prefix); across roots given
    // in different forms it is not: sort as `group` does.
    if roots.len() > 1 {
        out.sort_by(|a, b| (&a.project_dir, &a.session_id).cmp(&(&b.project_dir, &b.session_id)));
    }
    Some(out)
}

/// `path` (below `root.absolute`) under `root.given`, as a listing of the given root names it:
/// the root's own directory without a trailing separator (a file's parent), anything below it
/// joined to the root.
fn rebase_path(path: &Path, root: &GivenRoot) -> Option<PathBuf> {
    let rest = path.strip_prefix(&root.absolute).ok()?;
    if rest.as_os_str().is_empty() {
        let given = root.given.to_str()?;
        let trimmed = given.trim_end_matches('/');
        return Some(PathBuf::from(if trimmed.is_empty() {
            given
        } else {
            trimmed
        }));
    }
    Some(root.given.join(rest))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::AgentFile;

    fn root(given: &str, absolute: &str) -> GivenRoot {
        GivenRoot {
            given: given.into(),
            absolute: absolute.into(),
        }
    }

    fn session(id: &str, dir: &str, main: Option<&str>, agents: &[&str]) -> SessionFiles {
        SessionFiles {
            session_id: id.into(),
            project_dir: dir.into(),
            main: main.map(PathBuf::from),
            agents: agents
                .iter()
                .map(|p| AgentFile {
                    agent_id: "a".into(),
                    path: p.into(),
                    meta: None,
                    internal: false,
                    legacy: false,
                })
                .collect(),
        }
    }

    #[test]
    fn paths_below_a_relative_root_are_named_from_it() {
        let abs = vec![session(
            "s1",
            "/w/cfg/p/proj",
            Some("/w/cfg/p/proj/s1.jsonl"),
            &["/w/cfg/p/proj/s1/subagents/agent-x.jsonl"],
        )];
        let got = rebase_sessions(abs, &[root("cfg/p", "/w/cfg/p")]).unwrap();
        assert_eq!(
            got,
            vec![session(
                "s1",
                "cfg/p/proj",
                Some("cfg/p/proj/s1.jsonl"),
                &["cfg/p/proj/s1/subagents/agent-x.jsonl"],
            )]
        );
    }

    #[test]
    fn a_project_directory_given_itself_is_named_as_a_listing_names_a_files_parent() {
        for (given, dir) in [
            (".", "."),
            ("./", "."),
            ("proj/", "proj"),
            ("proj//", "proj"),
            ("../proj", "../proj"),
        ] {
            let abs = vec![session("s1", "/w/proj", Some("/w/proj/s1.jsonl"), &[])];
            let got = rebase_sessions(abs, &[root(given, "/w/proj")]).unwrap();
            // What `Path::parent` of the listed file gives.
            let file = Path::new(given).join("s1.jsonl");
            assert_eq!(
                got[0].project_dir.as_os_str(),
                file.parent().unwrap().as_os_str()
            );
            assert_eq!(got[0].project_dir.as_os_str(), dir, "{given}");
            assert_eq!(got[0].main.as_deref(), Some(file.as_path()));
        }
    }

    #[test]
    fn absolute_roots_leave_the_sessions_as_they_are() {
        let abs = vec![session("s1", "/w/p/proj", Some("/elsewhere/s1.jsonl"), &[])];
        let got = rebase_sessions(abs.clone(), &[root("/w/p", "/w/p")]).unwrap();
        assert_eq!(got, abs);
    }

    #[test]
    fn an_absolute_root_named_with_a_dot_is_named_as_given() {
        let abs = vec![session("s1", "/w/p/proj", Some("/w/p/proj/s1.jsonl"), &[])];
        let got = rebase_sessions(abs, &[root("/w/./p", "/w/p")]).unwrap();
        assert_eq!(
            got[0].main.as_deref(),
            Some(Path::new("/w/./p/proj/s1.jsonl"))
        );
        assert_eq!(got[0].project_dir.as_os_str(), "/w/./p/proj");
    }

    #[test]
    fn a_path_under_no_root_or_under_a_file_root_gives_none() {
        let outside = vec![session("s1", "/w/other", Some("/w/other/s1.jsonl"), &[])];
        assert_eq!(rebase_sessions(outside, &[root("p", "/w/p")]), None);
        // A single file given: its project directory is its parent, above the root.
        let file = vec![session("s1", "/w", Some("/w/s1.jsonl"), &[])];
        assert_eq!(
            rebase_sessions(file, &[root("s1.jsonl", "/w/s1.jsonl")]),
            None
        );
        // An agent file outside the session's root.
        let agent = vec![session("s1", "/w/p/proj", None, &["/x/agent-a.jsonl"])];
        assert_eq!(rebase_sessions(agent, &[root("p", "/w/p")]), None);
    }

    #[test]
    fn roots_in_different_forms_are_ordered_as_a_listing_orders_them() {
        // Absolute order: /a/proj < /w/b/proj; named as given: "/a/proj" < "b/proj" too, but
        // /w/b/proj < /x/proj while "b/proj" > "/x/proj".
        let abs = vec![
            session("s1", "/w/b/proj", Some("/w/b/proj/s1.jsonl"), &[]),
            session("s2", "/x/proj", Some("/x/proj/s2.jsonl"), &[]),
        ];
        let got = rebase_sessions(abs, &[root("b", "/w/b"), root("/x", "/x")]).unwrap();
        let dirs: Vec<&str> = got
            .iter()
            .map(|s| s.project_dir.to_str().unwrap())
            .collect();
        assert_eq!(dirs, ["/x/proj", "b/proj"]);
    }
}
