//! Every file a document of the workspace names exists (issue 63: docs that
//! name a file name one that exists).
//!
//! A name is a backquoted word that ends in a file extension this project
//! uses, or in `/` (a directory). One with a `/` in it must be found
//! relative to the document's directory, its `src/`, the workspace root or
//! `crates/`; a bare file name (`charge.rs`, in a sentence about the
//! folder that holds it) must exist somewhere under the document's
//! directory. Left out: `bench/RESULTS.md` (a dated record of runs names
//! files as they were on the day), names under `target/` (built, not
//! committed), placeholders (`DIR/summary.json`), patterns, URLs, flags,
//! and other projects' C sources (`geohash.c` is Redis's).

use std::path::{Path, PathBuf};

const EXTENSIONS: &[&str] = &[
    "rs", "md", "toml", "sh", "py", "json", "txt", "tcl", "yml", "lua", "go", "pyi",
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.md` file of the workspace but the build directories.
fn documents(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            let built =
                name.starts_with("target") || name.starts_with('.') || name == "node_modules";
            if !built {
                documents(&path, out);
            }
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// The backquoted words of a line.
fn quoted(line: &str) -> impl Iterator<Item = &str> {
    line.split('`').skip(1).step_by(2)
}

/// The file name a quoted word names, if it names one.
fn named_file(word: &str) -> Option<&str> {
    if word.contains(char::is_whitespace) {
        return None;
    }
    let word = word.trim_end_matches(['.', ',', ':', ';', ')']);
    let word = word.split("::").next().unwrap();
    // `file.rs:120` or `file.rs:120-140`: the file.
    let word = match word.rsplit_once(':') {
        Some((file, at)) if at.chars().all(|c| c.is_ascii_digit() || c == '-') => file,
        _ => word,
    };
    let foreign = ["http", "-", "$", "~", "/", "target"];
    if foreign.iter().any(|p| word.starts_with(p)) || word.contains(['*', '{', '<', '=', '(']) {
        return None;
    }
    // `DIR/summary.json`, `results/DATE/`: a path someone chooses or a run
    // makes, not one in the repository.
    let placeholder = |segment: &str| {
        segment.len() > 1 && segment.bytes().all(|b| b.is_ascii_uppercase() || b == b'_')
    };
    if word.split('/').any(placeholder) {
        return None;
    }
    let is_dir = word.ends_with('/') && word.len() > 1;
    let has_extension = word
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && EXTENSIONS.contains(&ext));
    (is_dir || has_extension).then_some(word)
}

fn exists_under(dir: &Path, name: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        let file = path.file_name().unwrap().to_string_lossy();
        file == name || (path.is_dir() && !file.starts_with("target") && exists_under(&path, name))
    })
}

fn resolves(doc_dir: &Path, root: &Path, name: &str) -> bool {
    let bare = name.trim_end_matches('/');
    if !bare.contains('/') {
        return exists_under(doc_dir, bare);
    }
    let bases = [
        doc_dir.to_path_buf(),
        doc_dir.join("src"),
        root.to_path_buf(),
        root.join("crates"),
    ];
    bases.iter().any(|b| b.join(name).exists())
}

#[test]
fn every_file_the_documents_name_exists() {
    let root = workspace_root();
    let mut docs = Vec::new();
    documents(&root, &mut docs);
    docs.retain(|d| !d.ends_with("bench/RESULTS.md"));
    assert!(docs.len() >= 10, "found only {} documents", docs.len());
    let mut missing = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        let dir = doc.parent().unwrap();
        for (n, line) in text.lines().enumerate() {
            for name in quoted(line).filter_map(named_file) {
                if !resolves(dir, &root, name) {
                    let shown = doc.strip_prefix(&root).unwrap_or(doc).display().to_string();
                    missing.push(format!("{shown}:{}: `{name}`", n + 1));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "documents name files that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_check_tells_file_names_from_other_words() {
    assert_eq!(named_file("run/reader.rs"), Some("run/reader.rs"));
    assert_eq!(named_file("db/mod.rs:120"), Some("db/mod.rs"));
    assert_eq!(named_file("batch.rs::WriteBatch"), Some("batch.rs"));
    assert_eq!(named_file("cache/"), Some("cache/"));
    assert_eq!(named_file("Db::open"), None);
    assert_eq!(named_file("geohash.c"), None);
    assert_eq!(named_file("target/release/slsm"), None);
    assert_eq!(named_file("--db DIR"), None);
    assert_eq!(named_file("DIR/summary.json"), None);
    let root = workspace_root();
    let engine = root.join("crates/slsm");
    assert!(resolves(&engine, &root, "sst/format.rs"));
    assert!(resolves(&engine, &root, "charge.rs"));
    assert!(
        !resolves(&engine, &root, "run/reader.rs"),
        "a name that went away is caught"
    );
    assert!(!resolves(&engine, &root, "txn.rs"));
}
