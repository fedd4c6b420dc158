//! The repository stands on its own:
//!
//! * every section citation (the section sign followed by a number, as in "spec <sign>3.4 step E")
//!   in the source tree names a section of `docs/protocol.md` — or of the note in `docs/` that the
//!   same line names before it — and, for "step"/"rule" citations, an item of that section;
//! * no file names a path of a machine (home directories, the build machine's work tree) or the
//!   reference notes the project was started from.
//!
//! Native only: it reads the source tree from disk.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

const SECTION_SIGN: char = '\u{a7}';

/// Directories that are not part of the source tree, by name anywhere.
const SKIP_DIR_NAMES: &[&str] = &[
    "target",
    "node_modules",
    ".git",
    ".venv",
    "__pycache__",
    ".pytest_cache",
];
/// Generated or local directories, relative to the crate root.
const SKIP_DIRS: &[&str] = &["www/pkg", "test-output", "data"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every UTF-8 text file of the tree (binary files such as screenshots are skipped), with its
/// path relative to the root.
fn text_files(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
            .map(|e| e.expect("directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let rel = path
                .strip_prefix(root)
                .expect("under root")
                .to_string_lossy()
                .replace('\\', "/");
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            // `.git` is a file in a worktree and a directory otherwise: skip both.
            if SKIP_DIR_NAMES.contains(&name.as_str()) {
                continue;
            }
            if path.is_dir() {
                if !SKIP_DIRS.contains(&rel.as_str()) {
                    stack.push(path);
                }
            } else if let Ok(text) = fs::read_to_string(&path) {
                out.push((rel, text));
            }
        }
    }
    out.sort();
    out
}

/// The sections of one note: section number ("3.4", "0") -> body (up to the next heading).
fn sections(note: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in note.lines() {
        if line.starts_with('#') {
            let title = line.trim_start_matches('#').trim();
            let first = title.split_whitespace().next().unwrap_or("");
            let number = first.trim_end_matches('.');
            let numbered = !number.is_empty()
                && number
                    .split('.')
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
            current = numbered.then(|| number.to_string());
            if let Some(n) = &current {
                out.insert(n.clone(), String::new());
            }
        } else if let Some(n) = &current {
            let body = out.get_mut(n).unwrap();
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// One citation: the section number and the step or rule items it names ("A", "2a", "7").
#[derive(Debug, PartialEq, Eq)]
struct Citation {
    section: String,
    items: Vec<String>,
    /// Byte offset of the section sign in its line.
    at: usize,
}

fn number_at(s: &str) -> Option<(String, usize)> {
    let bytes = s.as_bytes();
    let mut end = 0;
    loop {
        let start = end;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        if end == start {
            // No digits after a dot: back off the dot.
            if start == 0 {
                return None;
            }
            end = start - 1;
            break;
        }
        if end + 1 < bytes.len() && bytes[end] == b'.' && bytes[end + 1].is_ascii_digit() {
            end += 1;
        } else {
            break;
        }
    }
    Some((s[..end].to_string(), end))
}

/// The citations of one line. A range ("5.2-5.4") cites both ends; "step"/"steps"/"rule"/"rules"
/// after the number names items ("step E", "steps 2-5", "steps B/C", "step 2b/4").
fn citations(line: &str) -> Vec<Citation> {
    let mut out = Vec::new();
    for (at, _) in line.match_indices(SECTION_SIGN) {
        let rest = &line[at + SECTION_SIGN.len_utf8()..];
        let Some((section, len)) = number_at(rest) else {
            continue;
        };
        let mut after = &rest[len..];
        let mut cited = vec![section];
        // "5.2-5.4"; in "3.1-<sign>3.5" the second number is found by the loop on its own.
        if let Some(r) = after
            .strip_prefix('-')
            .or_else(|| after.strip_prefix('\u{2013}'))
            && let Some((end, l)) = number_at(r)
        {
            cited.push(end);
            after = &r[l..];
        }
        let mut items = Vec::new();
        for word in ["steps ", "step ", "rules ", "rule "] {
            if let Some(r) = after.strip_prefix(' ').and_then(|a| a.strip_prefix(word)) {
                let token: String = r
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '/' || *c == '-')
                    .collect();
                for part in token.split(['/', '-']).filter(|p| !p.is_empty()) {
                    items.push(part.to_string());
                }
                break;
            }
        }
        // Items belong to the last number of a range ("3.1-3.2 rule 4" names rule 4 of 3.2).
        let last = cited.len() - 1;
        for (i, section) in cited.into_iter().enumerate() {
            out.push(Citation {
                section,
                items: if i == last { items.clone() } else { Vec::new() },
                at,
            });
        }
    }
    out
}

/// Whether a section body has the item: `Step A` for a letter, a numbered list entry `7.` for a
/// number, and additionally a lettered sub-entry `a.` for "2a".
fn has_item(body: &str, item: &str) -> bool {
    // "7. text", or a bullet with a bold label: "* **a. Repartition topics.** text".
    let list_entry = |label: &str| {
        body.lines().any(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("* ").unwrap_or(l);
            let l = l.strip_prefix("**").unwrap_or(l);
            l.starts_with(&format!("{label}. "))
        })
    };
    let bytes = item.as_bytes();
    if bytes.len() == 1 && bytes[0].is_ascii_uppercase() {
        return body.contains(&format!("**Step {item} "));
    }
    let digits: String = item.chars().take_while(|c| c.is_ascii_digit()).collect();
    let letter = &item[digits.len()..];
    if digits.is_empty() {
        return false;
    }
    list_entry(&digits) && (letter.is_empty() || list_entry(letter))
}

/// The note a citation refers to: the nearest `NAME.md` before it on the line if `docs/NAME.md`
/// is a note with numbered sections, else `protocol.md`.
fn note_for<'a>(
    line: &str,
    at: usize,
    notes: &'a BTreeMap<String, BTreeMap<String, String>>,
) -> (&'a str, &'a BTreeMap<String, String>) {
    let before = &line[..at];
    let mut best: Option<(usize, &str)> = None;
    for name in notes.keys() {
        if let Some(pos) = before.rfind(name.as_str())
            && best.is_none_or(|(p, _)| pos > p)
        {
            best = Some((pos, name));
        }
    }
    let name = best.map_or("protocol.md", |(_, n)| n);
    let (name, sections) = notes
        .get_key_value(name)
        .expect("docs/protocol.md is a note");
    (name, sections)
}

/// Every problem with the citations of `files`, as `path:line: message`, and the number checked.
fn check_citations(
    files: &[(String, String)],
    notes: &BTreeMap<String, BTreeMap<String, String>>,
) -> (Vec<String>, usize) {
    let mut problems = Vec::new();
    let mut checked = 0;
    for (path, text) in files {
        for (n, line) in text.lines().enumerate() {
            for c in citations(line) {
                checked += 1;
                let (note, sections) = note_for(line, c.at, notes);
                let Some(body) = sections.get(&c.section) else {
                    problems.push(format!(
                        "{path}:{}: {SECTION_SIGN}{} has no section in docs/{note}",
                        n + 1,
                        c.section
                    ));
                    continue;
                };
                for item in &c.items {
                    if !has_item(body, item) {
                        problems.push(format!(
                            "{path}:{}: {SECTION_SIGN}{} has no step or rule {item} in docs/{note}",
                            n + 1,
                            c.section
                        ));
                    }
                }
            }
        }
    }
    (problems, checked)
}

/// Strings no file may contain. Built from pieces so that this file does not contain them.
fn forbidden() -> Vec<String> {
    [
        ["/wo", "rk/"].concat(),
        ["/ro", "ot/"].concat(),
        ["/ho", "me/"].concat(),
        ["/Us", "ers/"].concat(),
        ["../sha", "red"].concat(),
        ["shared", "/spec"].concat(),
        ["shared", "/seeds"].concat(),
        ["streams-group-", "protocol.md"].concat(),
        ["wasm-tool", "chain.md"].concat(),
        ["wire-", "clients.md"].concat(),
    ]
    .to_vec()
}

fn check_paths(files: &[(String, String)]) -> Vec<String> {
    let patterns = forbidden();
    let mut problems = Vec::new();
    for (path, text) in files {
        for (n, line) in text.lines().enumerate() {
            for p in &patterns {
                if line.contains(p.as_str()) {
                    problems.push(format!("{path}:{}: names `{p}`", n + 1));
                }
            }
        }
    }
    problems
}

fn notes(root: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for entry in fs::read_dir(root.join("docs")).expect("docs/ exists") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let s = sections(&fs::read_to_string(&path).unwrap());
            if !s.is_empty() {
                out.insert(path.file_name().unwrap().to_string_lossy().to_string(), s);
            }
        }
    }
    out
}

#[test]
fn every_section_citation_resolves() {
    let root = root();
    let notes = notes(&root);
    assert!(
        notes.contains_key("protocol.md"),
        "docs/protocol.md has numbered sections"
    );
    let files = text_files(&root);
    let (problems, checked) = check_citations(&files, &notes);
    eprintln!(
        "{checked} section citations checked in {} files",
        files.len()
    );
    assert!(
        problems.is_empty(),
        "{} citations do not resolve:\n{}",
        problems.len(),
        problems.join("\n")
    );
    // The tree cites hundreds of sections; finding none means the walk or the parser broke.
    assert!(checked > 300, "only {checked} citations found");
}

#[test]
fn no_machine_paths_or_external_notes() {
    let files = text_files(&root());
    let problems = check_paths(&files);
    assert!(
        problems.is_empty(),
        "files name paths outside the repository:\n{}",
        problems.join("\n")
    );
}

// The checker itself, on small inputs, so that it is known to fail when it should.

const NOTE: &str = "# Title\n## 3. Heartbeat\n### 3.2 Validation\n1. first\n2. second\n\
                    ### 3.4 Steps\n**Step A — find**\n### 3.7 Topics\n1. one\n2. two\n\
                    \x20  * **a. Sub.** text\n";

fn one_note() -> BTreeMap<String, BTreeMap<String, String>> {
    BTreeMap::from([("protocol.md".to_string(), sections(NOTE))])
}

fn problems_in(text: &str) -> Vec<String> {
    check_citations(&[("f".to_string(), text.to_string())], &one_note()).0
}

#[test]
fn checker_parses_sections_and_citations() {
    let s = sections(NOTE);
    assert_eq!(s.keys().collect::<Vec<_>>(), ["3", "3.2", "3.4", "3.7"]);
    let c = citations("spec \u{a7}3.4 step A, \u{a7}5.2-5.4 and \u{a7}3.7 steps 2a/2c.");
    let got: Vec<(&str, Vec<&str>)> = c
        .iter()
        .map(|c| {
            (
                c.section.as_str(),
                c.items.iter().map(|s| s.as_str()).collect(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("3.4", vec!["A"]),
            ("5.2", vec![]),
            ("5.4", vec![]),
            ("3.7", vec!["2a", "2c"]),
        ]
    );
    assert!(citations("cited as \u{a7}x.y, end of \u{a7}3.").len() == 1);
}

#[test]
fn checker_reports_missing_sections_and_items() {
    assert!(problems_in("see \u{a7}3.2 rule 2 and \u{a7}3.7 step 2a").is_empty());
    assert_eq!(problems_in("see \u{a7}3.5").len(), 1);
    assert_eq!(problems_in("see \u{a7}3.2 rule 3").len(), 1);
    assert_eq!(problems_in("see \u{a7}3.4 step B").len(), 1);
    assert_eq!(problems_in("see \u{a7}3.7 step 2b").len(), 1);
    assert_eq!(problems_in("see \u{a7}3.2-3.9").len(), 1);
}

#[test]
fn checker_reports_machine_paths() {
    let file = |t: &str| vec![("f".to_string(), t.to_string())];
    assert!(check_paths(&file("cd \"$(dirname \"$0\")/..\"; ls /tmp/x")).is_empty());
    for bad in forbidden() {
        assert_eq!(check_paths(&file(&format!("see {bad}x"))).len(), 1, "{bad}");
    }
}
