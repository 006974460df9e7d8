//! The import graph is the pipeline: every module of `src/` sits on a layer
//! (ARCHITECTURE.md, "Layers"), and non-test code imports only from its own
//! layer or the layers below it. No two modules import each other (no
//! cycles), whatever their layers.
//!
//! This test reads `src/` as text: every `crate::…`, `super::…` and (in the
//! binary) `lucy::…` path is resolved to the module it names. Test code is
//! exempt (files named `tests.rs` / `*_tests.rs`, and a trailing
//! `#[cfg(test)] mod … {` block): tests may reach anywhere.
//!
//! When a new module lands, give it a row in [`LAYERS`] and in
//! ARCHITECTURE.md's code map.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module path prefix → layer, lowest first. The longest matching prefix
/// wins, so a submodule may sit on a different layer than its parent.
const LAYERS: &[(&str, u32)] = &[
    // 0: values and errors everything shares.
    ("error", 0),
    ("types", 0),
    // 1: the dbModel format, the LLM client, prompt templates.
    ("model", 1),
    ("model/import/dbt", 1),
    ("llm", 1),
    ("prompts", 1),
    // 2: the schema graph, the one place names become ids.
    ("graph", 2),
    // 3: SQL analysis, the guard and execution.
    ("sql", 3),
    // 4: the phases' building blocks.
    ("view", 4),
    ("crush", 4),
    ("query", 4),
    ("check", 4),
    // 5: the phases built on them.
    ("solve", 5),
    ("link", 5),
    ("examples", 5),
    // 6: the orchestrator; pictures of its results.
    ("pipeline", 6),
    ("render", 6),
    // 7: measurement.
    ("bench", 7),
    // 8: the front ends: HTTP and MCP servers (library), the binary.
    ("serve", 8),
    ("mcp", 8),
    ("cli", 8),
    ("main", 8),
];

/// The crate root (`lib.rs`) may re-export anything.
const ROOT_LAYER: u32 = u32::MAX;

/// One import of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Import {
    line: usize,
    /// The module path it names, e.g. `["pipeline", "llm_call"]`.
    target: Vec<String>,
    /// The path as written, for messages.
    text: String,
}

/// A module path as a `/`-joined string, e.g. `solve/milp`.
fn joined(p: &[String]) -> String {
    p.join("/")
}

/// The layer of a module path (longest prefix in `LAYERS`).
fn layer_of(path: &[String]) -> Option<u32> {
    if path.is_empty() {
        return Some(ROOT_LAYER);
    }
    let mut best: Option<(usize, u32)> = None;
    for (prefix, layer) in LAYERS {
        let parts: Vec<&str> = prefix.split('/').collect();
        if parts.len() <= path.len()
            && parts.iter().zip(path).all(|(a, b)| *a == b)
            && best.is_none_or(|(n, _)| parts.len() > n)
        {
            best = Some((parts.len(), *layer));
        }
    }
    best.map(|(_, l)| l)
}

/// Blank out comments, string and char literals (keeping newlines), so
/// paths inside them are not read as imports.
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |out: &mut String, s: &[u8]| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            let end = src[i..].find('\n').map_or(b.len(), |k| i + k);
            blank(&mut out, &b[i..end]);
            i = end;
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let end = src[i + 2..].find("*/").map_or(b.len(), |k| i + 2 + k + 2);
            blank(&mut out, &b[i..end]);
            i = end;
        } else if c == b'r'
            && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#'))
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let mut j = i + 1;
            while b.get(j) == Some(&b'#') {
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(c as char);
                i += 1;
                continue;
            }
            let closing = format!("\"{}", "#".repeat(j - i - 1));
            let end = src[j + 1..].find(&closing).map_or(b.len(), |k| j + 1 + k + closing.len());
            blank(&mut out, &b[i..end]);
            i = end;
        } else if c == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(b.len());
            blank(&mut out, &b[i..end]);
            i = end;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if b.get(i + 1) == Some(&b'\\') {
                let end = src[i + 2..].find('\'').map_or(b.len(), |k| i + 2 + k + 1);
                blank(&mut out, &b[i..end]);
                i = end;
            } else if let Some(ch) = src[i + 1..].chars().next() {
                let after = i + 1 + ch.len_utf8();
                if b.get(after) == Some(&b'\'') {
                    blank(&mut out, &b[i..after + 1]);
                    i = after + 1;
                } else {
                    out.push('\'');
                    i += 1;
                }
            } else {
                i += 1;
            }
        } else {
            let ch = src[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Cut a trailing `#[cfg(test)] mod name {` block (the unit tests).
fn without_test_module(src: &str) -> &str {
    let mut offset = 0;
    let mut lines = src.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            if let Some(next) = lines.peek() {
                let t = next.trim();
                if (t.starts_with("mod ") || t.starts_with("pub(crate) mod ") || t.starts_with("pub mod "))
                    && t.ends_with('{')
                {
                    return &src[..offset];
                }
            }
        }
        offset += line.len();
    }
    src
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Read an identifier path starting at `s` (`a::b::{c, d::e}`) and return
/// the first segments of every alternative: `[[a, b, c], [a, b, d, e]]`.
fn paths_at(s: &str) -> Vec<Vec<String>> {
    let mut segs = Vec::new();
    let mut rest = s;
    loop {
        let id: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if id.is_empty() {
            if let Some(inner) = rest.strip_prefix('{') {
                // A group: split at top-level commas up to the matching brace.
                let mut depth = 0;
                let mut end = inner.len();
                for (k, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => {
                            end = k;
                            break;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                let group = &inner[..end];
                let mut out = Vec::new();
                let mut depth = 0;
                let mut start = 0;
                for (k, c) in group.char_indices().chain(std::iter::once((group.len(), ','))) {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            let item = group[start..k.min(group.len())].trim();
                            start = k + 1;
                            if item.is_empty() || item == "self" || item.starts_with("self ") {
                                out.push(segs.clone());
                                continue;
                            }
                            for tail in paths_at(item) {
                                let mut p = segs.clone();
                                p.extend(tail);
                                out.push(p);
                            }
                        }
                        _ => {}
                    }
                }
                return out;
            }
            return vec![segs];
        }
        segs.push(id.clone());
        rest = &rest[id.len()..];
        let trimmed = rest.trim_start();
        match trimmed.strip_prefix("::") {
            Some(r) => rest = r.trim_start(),
            None => return vec![segs],
        }
    }
}

/// Module path of a file under `src/`: `link/describe.rs` → `[link,
/// describe]`, `link/mod.rs` → `[link]`, `lib.rs` → `[]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// Every import of one file's (stripped, test-free) text. `module` is the
/// file's module path; `binary` says whether it belongs to the binary
/// (where the library is `lucy::`).
fn imports(text: &str, module: &[String], binary: bool) -> Vec<Import> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut k = 0;
        while k < line.len() {
            let rest = &line[k..];
            let prev_ok = k == 0 || !is_ident(line[..k].chars().last().unwrap());
            let found = if !prev_ok {
                None
            } else if let Some(r) = rest.strip_prefix("crate::") {
                // In the binary `crate::` is main.rs, whose modules (`cli`)
                // are named the same way as in src/.
                Some((Vec::new(), r, "crate::"))
            } else if let Some(r) = rest.strip_prefix("lucy::").filter(|_| binary) {
                Some((Vec::new(), r, "lucy::"))
            } else if rest.starts_with("super::") {
                let mut base = module.to_vec();
                let mut r = rest;
                while let Some(x) = r.strip_prefix("super::") {
                    base.pop();
                    r = x;
                }
                Some((base, r, "super::"))
            } else {
                None
            };
            match found {
                Some((base, r, _)) => {
                    for tail in paths_at(r) {
                        // Only the module part matters: keep segments that
                        // look like modules (lowercase), drop the item.
                        let mut target = base.clone();
                        target.extend(
                            tail.into_iter().take_while(|s| s.chars().next().is_some_and(|c| c.is_ascii_lowercase())),
                        );
                        out.push(Import { line: n + 1, target, text: line.trim().to_string() });
                    }
                    k += rest.len() - r.len();
                }
                None => k += rest.chars().next().map_or(1, char::len_utf8),
            }
        }
    }
    out
}

/// Whether a file is test code as a whole.
fn is_test_file(rel: &Path) -> bool {
    let name = rel.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name == "tests.rs" || name.ends_with("_tests.rs") || rel.iter().any(|c| c == "tests")
}

/// The binary's files: `main.rs` and `cli/**`.
fn is_binary(rel: &Path) -> bool {
    rel == Path::new("main.rs") || rel.starts_with("cli")
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Every layering violation in `files` (`(path relative to src, text)`), as
/// `file:line: message` strings.
fn violations(files: &[(PathBuf, String)]) -> Vec<String> {
    let mut errs = Vec::new();
    for (rel, text) in files {
        if is_test_file(rel) {
            continue;
        }
        let module = module_path(rel);
        let binary = is_binary(rel);
        let own_path = if binary && module.is_empty() { vec!["main".to_string()] } else { module.clone() };
        let Some(own) = layer_of(&own_path) else {
            errs.push(format!(
                "src/{}: module `{}` has no layer: add it to LAYERS in tests/layering.rs and to ARCHITECTURE.md",
                rel.display(),
                joined(&own_path)
            ));
            continue;
        };
        let stripped = strip(text);
        for imp in imports(without_test_module(&stripped), &module, binary) {
            if imp.target.is_empty() {
                continue;
            }
            if !binary && imp.target[0] == "cli" {
                errs.push(format!(
                    "src/{}:{}: the library imports the binary's `cli`: `{}`",
                    rel.display(),
                    imp.line,
                    imp.text
                ));
                continue;
            }
            let Some(theirs) = layer_of(&imp.target) else { continue };
            if theirs != ROOT_LAYER && theirs > own {
                errs.push(format!(
                    "src/{}:{}: `{}` (layer {own}) imports `{}` (layer {theirs}), a layer above it: `{}`",
                    rel.display(),
                    imp.line,
                    joined(&own_path),
                    joined(&imp.target),
                    imp.text
                ));
            }
        }
    }
    errs
}

/// Module-level import cycles among non-test library code: an edge A → B
/// when a file of module A names module B (neither an ancestor of the
/// other); reported once per strongly connected pair.
fn cycles(files: &[(PathBuf, String)]) -> Vec<String> {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|(r, _)| module_path(r)).collect();
    let mut edges: BTreeMap<(Vec<String>, Vec<String>), (PathBuf, usize)> = BTreeMap::new();
    for (rel, text) in files {
        if is_test_file(rel) || is_binary(rel) {
            continue;
        }
        let module = module_path(rel);
        let stripped = strip(text);
        for imp in imports(without_test_module(&stripped), &module, false) {
            // The longest existing module the path names.
            let mut target = imp.target.clone();
            while !target.is_empty() && !modules.contains(&target) {
                target.pop();
            }
            let related = target.starts_with(&module) || module.starts_with(&target);
            if !target.is_empty() && !related {
                edges.entry((module.clone(), target)).or_insert((rel.clone(), imp.line));
            }
        }
    }
    // A cycle between two modules, possibly through others: report each
    // edge A → B where B also reaches A.
    let reach = |from: &Vec<String>, to: &Vec<String>| -> bool {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(m) = stack.pop() {
            if &m == to {
                return true;
            }
            if !seen.insert(m.clone()) {
                continue;
            }
            for (a, b) in edges.keys() {
                if a == &m {
                    stack.push(b.clone());
                }
            }
        }
        false
    };
    let mut out = Vec::new();
    for ((a, b), (file, line)) in &edges {
        if reach(b, a) {
            out.push(format!(
                "src/{}:{line}: `{}` imports `{}`, which imports it back (a cycle)",
                file.display(),
                joined(a),
                joined(b)
            ));
        }
    }
    out
}

fn read_src() -> Vec<(PathBuf, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut paths = Vec::new();
    rs_files(&src, &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p.strip_prefix(&src).unwrap().to_path_buf(), text)
        })
        .collect()
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let v = violations(&read_src());
    assert!(v.is_empty(), "layering violations (see ARCHITECTURE.md):\n{}", v.join("\n"));
}

#[test]
fn no_import_cycles_between_modules() {
    let c = cycles(&read_src());
    assert!(c.is_empty(), "import cycles (see ARCHITECTURE.md):\n{}", c.join("\n"));
}

// --- tests of the test -----------------------------------------------------

fn file(path: &str, text: &str) -> (PathBuf, String) {
    (PathBuf::from(path), text.to_string())
}

#[test]
fn an_upward_import_fails_naming_file_and_line() {
    let files =
        [file("link/mod.rs", "//! Phase 1.\n\nuse crate::graph::SchemaGraph;\nuse crate::pipeline::llm_call;\n")];
    let v = violations(&files);
    assert_eq!(v.len(), 1, "{v:?}");
    assert!(v[0].starts_with("src/link/mod.rs:4: `link` (layer 5) imports `pipeline/llm_call` (layer 6)"), "{}", v[0]);
}

#[test]
fn grouped_super_and_inline_paths_are_read() {
    let files = [
        file("types/trace.rs", "use crate::{error::Result, sql::exec::SqlValue};\n"),
        file("model/validate/names.rs", "fn f() { let _ = super::super::super::graph::SchemaGraph::new; }\n"),
        file("llm/config.rs", "use super::{cassette::Recorder, ChatModel};\n"),
    ];
    let v = violations(&files);
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(v[0].starts_with("src/types/trace.rs:1: `types/trace` (layer 0) imports `sql/exec` (layer 3)"), "{}", v[0]);
    assert!(v[1].starts_with("src/model/validate/names.rs:1:"), "{}", v[1]);
}

#[test]
fn comments_strings_and_unit_tests_are_not_imports() {
    let text = "//! See [`crate::pipeline`].\nconst S: &str = \"crate::bench\";\nfn f() {}\n\n#[cfg(test)]\nmod tests {\n    use crate::pipeline::Fake;\n}\n";
    assert!(violations(&[file("graph/mod.rs", text)]).is_empty());
    assert!(violations(&[file("link/tests.rs", "use crate::pipeline::Fake;\n")]).is_empty());
}

#[test]
fn the_library_may_not_import_the_binary_and_unknown_modules_are_flagged() {
    let v = violations(&[file("bench/run.rs", "use crate::cli::Ctx;\n"), file("newthing/mod.rs", "\n")]);
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(v[0].contains("imports the binary"), "{}", v[0]);
    assert!(v[1].contains("has no layer"), "{}", v[1]);
    // The binary sees the library as `lucy::` and sits above it all.
    assert!(violations(&[file("cli/ask.rs", "use lucy::pipeline::ask;\nuse super::Ctx;\n")]).is_empty());
}

#[test]
fn a_cycle_between_siblings_fails() {
    let files = [
        file("solve/exact.rs", "use super::preprocess::INF;\n"),
        file("solve/preprocess.rs", "fn f() { super::exact::cost_distances(); }\n"),
        file("solve/mod.rs", "pub mod exact;\npub mod preprocess;\nuse exact::solve_exact;\n"),
    ];
    let c = cycles(&files);
    assert_eq!(c.len(), 2, "{c:?}");
    assert!(c[0].contains("`solve/exact` imports `solve/preprocess`"), "{}", c[0]);
    // A parent and its children are not a cycle.
    assert!(cycles(&[
        file("solve/mod.rs", "use crate::solve::exact::X;\n"),
        file("solve/exact.rs", "use super::CoreOptions;\n")
    ])
    .is_empty());
}
