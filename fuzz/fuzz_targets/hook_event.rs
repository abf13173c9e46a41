//! Any bytes as hook input: parsing never panics, and whatever validation accepts is safe to
//! use as a path: ids are plain path components, transcript paths are normalised and lie
//! strictly inside the projects directory.
#![no_main]

use std::path::{Component, Path};

use libfuzzer_sys::fuzz_target;
use skein_hook::event::HookEvent;

const PROJECTS: &str = "/nonexistent-skein-fuzz/.claude/projects";

fuzz_target!(|data: &[u8]| {
    let Ok(event) = HookEvent::parse(data) else {
        return;
    };
    let _ = event.kind().name().to_owned();
    let dirs = [Path::new(PROJECTS).to_path_buf()];
    let Ok(valid) = event.validate(&dirs) else {
        return;
    };
    assert!(skein_store::safe_component(&valid.session).is_ok());
    if let Some(a) = &valid.agent_id {
        assert!(skein_store::safe_component(a).is_ok());
    }
    for p in [&valid.transcript, &valid.agent_transcript].into_iter().flatten() {
        assert!(p.starts_with(PROJECTS) && p != Path::new(PROJECTS), "{p:?}");
        assert!(
            p.components()
                .all(|c| !matches!(c, Component::ParentDir | Component::CurDir)),
            "{p:?}"
        );
    }
});
