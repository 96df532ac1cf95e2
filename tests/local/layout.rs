//! The layout DESIGN.md sets: the tools (`src/cli`) reach the data only through the client
//! API (`src/client`), never a backend (`src/local`, `src/remote`) directly.

use std::path::{Path, PathBuf};

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

/// Whether the source names a backend module.
fn reaches_a_backend(source: &str) -> bool {
    [
        "crate::local",
        "crate::remote",
        "kafkit::local",
        "kafkit::remote",
    ]
    .iter()
    .any(|p| source.contains(p))
}

#[test]
fn cli_uses_only_the_client_api() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src/cli"), &mut files);
    assert!(files.len() > 10, "{files:?}");
    let offenders: Vec<String> = files
        .iter()
        .filter(|file| reaches_a_backend(&std::fs::read_to_string(file).unwrap()))
        .map(|file| file.strip_prefix(root).unwrap().display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "src/cli must reach the data through crate::client only; these use a backend: {offenders:?}"
    );
}

#[test]
fn the_check_sees_a_backend_import() {
    assert!(reaches_a_backend("use crate::local::LogDir;"));
    assert!(reaches_a_backend(
        "let x = crate::remote::Cluster::connect(s, c);"
    ));
    assert!(!reaches_a_backend("use crate::client::Client;"));
}

/// The cluster client's layers (DESIGN.md): `remote/net` (connections) uses only the error
/// type and its own config of `remote` (and the wire format, `src/wire`, which uses nothing of
/// `remote`: see `dependencies_point_down_to_the_ground`); only the client logic above it uses
/// both.
#[test]
fn remote_layers_use_only_the_layers_below() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let allowed: [(&str, &[&str]); 1] = [("src/remote/net", &["net", "error", "ClientConfig"])];
    for (dir, may_use) in allowed {
        let mut files = Vec::new();
        rust_files(&root.join(dir), &mut files);
        assert!(files.len() >= 3, "{dir}: {files:?}");
        for file in files {
            let source = std::fs::read_to_string(&file).unwrap();
            for (i, _) in source.match_indices("crate::remote::") {
                let used: String = source[i + "crate::remote::".len()..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                assert!(
                    may_use.contains(&used.as_str()),
                    "{} uses crate::remote::{used}, above its layer",
                    file.display()
                );
            }
            assert!(!source.contains("super::super"), "{}", file.display());
        }
    }
}

/// Files under `dir` (relative to the crate) that name any of `modules`.
fn naming(dir: &str, modules: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join(dir), &mut files);
    assert!(files.len() >= 3, "{dir}: {files:?}");
    files
        .iter()
        .filter(|file| {
            let source = std::fs::read_to_string(file).unwrap();
            modules.iter().any(|m| names_module(&source, m))
        })
        .map(|file| file.strip_prefix(root).unwrap().display().to_string())
        .collect()
}

/// Whether `source` names the module path `m` itself (`crate::cli` is not `crate::client`).
fn names_module(source: &str, m: &str) -> bool {
    source
        .match_indices(m)
        .any(|(i, _)| !source[i + m.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
}

#[test]
fn the_check_tells_modules_apart() {
    assert!(names_module("use crate::cli::run;", "crate::cli"));
    assert!(names_module("use crate::client;", "crate::client"));
    assert!(!names_module("use crate::client::Result;", "crate::cli"));
}

/// The arrows point down (DESIGN.md): `kafka` (the shared vocabulary) is the ground and uses
/// none of the others; the backends and the server never use the client, so the embedded log
/// builds without the network client; the embedded log uses neither the cluster client nor the
/// server; the cluster client and the server share one wire layer (`wire`) and the server uses
/// nothing else of the cluster client.
#[test]
fn dependencies_point_down_to_the_ground() {
    let rules: [(&str, &[&str]); 7] = [
        (
            "src/kafka",
            &[
                "crate::client",
                "crate::local",
                "crate::remote",
                "crate::server",
                "crate::cli",
                "crate::assignor",
                "crate::wire",
            ],
        ),
        (
            "src/record",
            &[
                "crate::client",
                "crate::local",
                "crate::remote",
                "crate::server",
            ],
        ),
        (
            "src/local",
            &[
                "crate::client",
                "crate::remote",
                "crate::server",
                "crate::cli",
            ],
        ),
        (
            "src/remote",
            &[
                "crate::client",
                "crate::local",
                "crate::server",
                "crate::cli",
            ],
        ),
        (
            "src/wire",
            &[
                "crate::client",
                "crate::local",
                "crate::remote",
                "crate::server",
                "crate::cli",
            ],
        ),
        (
            "src/server",
            &["crate::client", "crate::cli", "crate::remote"],
        ),
        ("src/client", &["crate::server", "crate::cli"]),
    ];
    for (dir, forbidden) in rules {
        let offenders = naming(dir, forbidden);
        assert!(
            offenders.is_empty(),
            "{dir} must not use any of {forbidden:?}; these do: {offenders:?}"
        );
    }
}
