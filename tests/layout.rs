//! The layout DESIGN.md sets: the tools (`src/cli`) reach the data only through the client
//! API (`src/client`), never a backend (`src/local`, `src/remote`) directly.

use std::path::{Path, PathBuf};

/// Tools not yet moved onto the client API. This list only shrinks: a file leaves it when it
/// stops reaching a backend, and the test fails if a listed file no longer needs to be here.
const NOT_YET_MOVED: &[&str] = &[
    "src/cli/groups/delete.rs",
    "src/cli/groups/describe.rs",
    "src/cli/groups/logs.rs",
    "src/cli/groups/mod.rs",
    "src/cli/groups/reset.rs",
    "src/cli/groups/source.rs",
    "src/cli/mod.rs",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Whether the source names a backend module or the backend behind the client.
fn reaches_a_backend(source: &str) -> bool {
    [
        "crate::local",
        "crate::remote",
        "kafkit::local",
        "kafkit::remote",
        "client::Backend",
        "open_backend",
    ]
    .iter()
    .any(|p| source.contains(p))
}

#[test]
fn cli_uses_only_the_client_api() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/cli"), &mut files);
    assert!(!files.is_empty());
    let mut offenders = Vec::new();
    let mut moved = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let reaches = reaches_a_backend(&std::fs::read_to_string(&file).unwrap());
        let listed = NOT_YET_MOVED.contains(&rel.as_str());
        if reaches && !listed {
            offenders.push(rel);
        } else if !reaches && listed {
            moved.push(rel);
        }
    }
    assert!(
        offenders.is_empty(),
        "src/cli must reach the data through crate::client only; these use a backend: {offenders:?}"
    );
    assert!(
        moved.is_empty(),
        "no longer reaching a backend: take these off NOT_YET_MOVED in tests/layout.rs: {moved:?}"
    );
}
