//! Every markdown table in the docs and the committed reports keeps its columns: an unescaped `|`
//! inside a cell (|B|, |λ_min|, `a|b` — GitHub splits cells even inside code spans) shifts the
//! rest of its row into the wrong columns.

use std::path::{Path, PathBuf};

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') || name == "target" {
            continue; // a venv's or a build's files are not ours
        } else if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

/// The cell separators of a table line: every `|` not escaped by a backslash.
fn separators(line: &str) -> usize {
    let b = line.as_bytes();
    (0..b.len()).filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\')).count()
}

/// (line number, separators, the header's) of every table row that does not match its header.
fn misaligned_rows(text: &str) -> Vec<(usize, usize, usize)> {
    let (mut bad, mut header, mut in_code) = (vec![], None, false);
    for (i, line) in text.lines().enumerate() {
        in_code ^= line.trim_start().starts_with("```");
        if in_code || !line.starts_with('|') {
            header = None;
            continue;
        }
        let n = separators(line);
        match header {
            None => header = Some(n),
            Some(h) if h != n => bad.push((i + 1, n, h)),
            _ => {}
        }
    }
    bad
}

#[test]
fn a_cell_with_an_unescaped_pipe_is_found() {
    let table = "| a | b |\n|---|---|\n| \\|x\\| | y |\n| |x| | y |\n";
    assert_eq!(misaligned_rows(table), vec![(4, 5, 3)]);
}

#[test]
fn every_markdown_table_keeps_its_columns() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    for dir in ["docs", "results", "python"] {
        markdown_files(&root.join(dir), &mut files);
    }
    assert!(files.len() >= 10, "{} markdown files", files.len());
    let mut bad = vec![];
    for f in &files {
        for (line, n, h) in misaligned_rows(&std::fs::read_to_string(f).unwrap()) {
            bad.push(format!("{}:{line}: {n} cell separators, the header has {h}", f.display()));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
