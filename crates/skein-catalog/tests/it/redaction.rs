//! With redaction on, no secret reaches the catalog file (full-text index, titles, prompts)
//! or a search snippet, and a catalog filled without redaction is rebuilt.

use std::path::Path;

use skein_catalog::{Catalog, CatalogOptions, Opened, SearchQuery};
use skein_redact::RedactOptions;

use crate::common::{hits, refresh};

const SECRET: &str = "ghp_Zq8vR2mT5yK1wX9cB4nL7pD3sF6hJ0aQeUiO";

fn write_session(projects: &Path) {
    let dir = projects.join("-home-me-app");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let lines = [
        format!(
            r#"{{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s1","timestamp":"2026-05-01T10:00:00Z","cwd":"/home/me/app","message":{{"role":"user","content":"deploy with token {SECRET} please, zebrafish"}}}}"#
        ),
        format!(
            r#"{{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"s1","timestamp":"2026-05-01T10:00:05Z","message":{{"id":"msg_1","role":"assistant","model":"claude-opus-4-7","content":[{{"type":"text","text":"Using {SECRET} for zebrafish"}}],"usage":{{"input_tokens":1,"output_tokens":1}}}}}}"#
        ),
    ];
    std::fs::write(dir.join("s1.jsonl"), lines.join("\n") + "\n").expect("write");
}

/// Every byte of the catalog's files, lower-cased (a search index folds case).
fn catalog_bytes(db: &Path) -> Vec<u8> {
    let mut all = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let p = db.with_file_name(format!(
            "{}{suffix}",
            db.file_name().expect("name").to_string_lossy()
        ));
        if let Ok(b) = std::fs::read(p) {
            all.extend(b.to_ascii_lowercase());
        }
    }
    all
}

fn contains(hay: &[u8], needle: &str) -> bool {
    let n = needle.to_ascii_lowercase();
    hay.windows(n.len()).any(|w| w == n.as_bytes())
}

fn options(redact: bool) -> CatalogOptions {
    CatalogOptions {
        redact: redact.then(RedactOptions::default),
        ..CatalogOptions::default()
    }
}

#[test]
fn no_secret_reaches_the_catalog_or_a_snippet() {
    let dir = tempfile::tempdir().expect("tempdir");
    let projects = dir.path().join("projects");
    write_session(&projects);
    let db = dir.path().join("catalog.db");

    // Without redaction the secret is in the index: the check below can see it.
    {
        let mut c = Catalog::open(&db, options(false)).expect("open");
        refresh(&mut c, std::slice::from_ref(&projects));
        assert_eq!(hits(&c, SECRET).len(), 2);
        c.checkpoint().expect("checkpoint");
    }
    assert!(contains(&catalog_bytes(&db), SECRET));

    // Opened with redaction, it is rebuilt, and indexing again keeps the secret out.
    let mut c = Catalog::open(&db, options(true)).expect("open");
    assert!(matches!(c.opened(), Opened::Rebuilt(_)), "{:?}", c.opened());
    refresh(&mut c, std::slice::from_ref(&projects));
    c.checkpoint().expect("checkpoint");
    assert!(hits(&c, SECRET).is_empty());
    let found = c
        .search(&SearchQuery {
            query: "zebrafish".into(),
            limit: 10,
            ..SearchQuery::default()
        })
        .expect("search");
    assert_eq!(found.len(), 2, "the rest of the text is still searchable");
    for h in &found {
        assert!(!h.snippet.contains(SECRET), "{}", h.snippet);
        assert!(h.snippet.contains("[REDACTED:"), "{}", h.snippet);
    }
    drop(c);
    assert!(!contains(&catalog_bytes(&db), SECRET));

    // Opened again with redaction: nothing to rebuild.
    let c = Catalog::open(&db, options(true)).expect("open");
    assert!(matches!(c.opened(), Opened::Existing), "{:?}", c.opened());
}
