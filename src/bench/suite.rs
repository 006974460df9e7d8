//! Benchmark suites: which dbModel, which database, which questions.
//!
//! A suite is a JSON file in `benchmarks/suites/`. Paths inside it are
//! relative to the repository root (the directory that holds
//! `benchmarks/`), so `../shared/benchmarks/...` points at the staged
//! external data. `{db_id}` in `model`/`database` is replaced by each
//! question's database id (Spider: one model and database per question).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::types::Dialect;

/// A suite file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// dbModel path; may contain `{db_id}`.
    pub model: String,
    /// SQLite database path (may contain `{db_id}`); absent when the
    /// benchmark ships no data (only non-executing metrics then).
    #[serde(default)]
    pub database: Option<String>,
    /// Dialect of the gold SQL.
    #[serde(default)]
    pub dialect: Dialect,
    pub questions: QuestionSource,
    /// Known problems of individual gold queries, by question id. A note
    /// starting with `not-executable:` marks a gold query that cannot run on
    /// the suite's database; it stays in the suite and is reported as such.
    #[serde(default)]
    pub notes: BTreeMap<String, String>,
}

/// Where the questions come from and which fields hold what.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuestionSource {
    /// A `.jsonl` file (one object per line) or a `.json` array.
    pub path: String,
    #[serde(default = "f_id")]
    pub id: String,
    #[serde(default = "f_question")]
    pub question: String,
    #[serde(default = "f_gold")]
    pub gold_sql: String,
    #[serde(default)]
    pub evidence: Option<String>,
    #[serde(default)]
    pub db_id: Option<String>,
    /// Keep only objects whose field equals the value (e.g. `{"db_id": "financial"}`).
    #[serde(default)]
    pub filter: BTreeMap<String, String>,
}

fn f_id() -> String {
    "id".into()
}
fn f_question() -> String {
    "question".into()
}
fn f_gold() -> String {
    "gold_sql".into()
}

/// One benchmark question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Question {
    pub id: String,
    pub question: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<String>,
    pub gold_sql: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_id: Option<String>,
    /// Suite note for this question, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Question {
    /// The reason the gold query cannot run on the suite database, when
    /// the suite says so.
    pub fn gold_not_executable(&self) -> Option<&str> {
        self.note.as_deref().and_then(|n| n.strip_prefix("not-executable:")).map(str::trim)
    }
}

/// A loaded suite: resolved paths and questions.
#[derive(Debug, Clone)]
pub struct Suite {
    pub file: SuiteFile,
    /// Path of the suite file.
    pub path: PathBuf,
    /// Repository root the suite's paths are relative to.
    pub root: PathBuf,
    pub questions: Vec<Question>,
}

impl Suite {
    /// Find a suite by name (`benchmarks/suites/<name>.json` under the
    /// repository root found from the current directory, or the crate's
    /// own checkout) or by path to a suite file.
    pub fn find(name_or_path: &str) -> Result<PathBuf> {
        let p = Path::new(name_or_path);
        if p.extension().is_some_and(|e| e == "json") || name_or_path.contains('/') {
            return if p.is_file() {
                Ok(p.to_path_buf())
            } else {
                Err(Error::Input(format!("suite file {} does not exist", p.display())))
            };
        }
        let mut candidates = Vec::new();
        if let Ok(cwd) = std::env::current_dir() {
            for dir in cwd.ancestors() {
                candidates.push(dir.join("benchmarks/suites").join(format!("{name_or_path}.json")));
            }
        }
        candidates
            .push(Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/suites").join(format!("{name_or_path}.json")));
        if let Some(found) = candidates.iter().find(|c| c.is_file()) {
            return Ok(found.clone());
        }
        let known = list_suites(&Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/suites"));
        Err(Error::Input(format!(
            "unknown suite `{name_or_path}`: no benchmarks/suites/{name_or_path}.json above the current directory{}",
            if known.is_empty() { String::new() } else { format!(" (known suites: {})", known.join(", ")) }
        )))
    }

    /// Load a suite file and its questions.
    pub fn load(path: &Path) -> Result<Suite> {
        let text = crate::error::read_to_string(path)?;
        let file: SuiteFile = serde_json::from_str(&text)
            .map_err(|e| Error::Input(format!("{}: invalid suite file: {e}", path.display())))?;
        let root = suite_root(path);
        let qpath = root.join(&file.questions.path);
        let questions = load_questions(&qpath, &file)?;
        Ok(Suite { file, path: path.to_path_buf(), root, questions })
    }

    /// Path of the dbModel for a question.
    pub fn model_path(&self, q: &Question) -> Result<PathBuf> {
        let p = self.root.join(subst(&self.file.model, q)?);
        if !p.is_file() {
            return Err(Error::Input(format!(
                "suite {}: dbModel {} does not exist (create or import it, e.g. `lucy model import`, or fix `model` in {})",
                self.file.name,
                p.display(),
                self.path.display()
            )));
        }
        Ok(p)
    }

    /// Path of the database for a question, `None` when the suite has no data.
    pub fn database_path(&self, q: &Question) -> Result<Option<PathBuf>> {
        let Some(db) = &self.file.database else { return Ok(None) };
        let p = self.root.join(subst(db, q)?);
        if !p.is_file() {
            return Err(Error::Input(format!(
                "suite {}: database {} does not exist (the external data lives in ../shared/benchmarks next to the repository; see ../shared/benchmarks/SOURCES.md)",
                self.file.name,
                p.display()
            )));
        }
        Ok(Some(p))
    }
}

/// The repository root of a suite file: the directory holding `benchmarks/`.
fn suite_root(path: &Path) -> PathBuf {
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    for dir in abs.ancestors() {
        if dir.file_name().is_some_and(|n| n == "benchmarks") {
            if let Some(parent) = dir.parent() {
                return parent.to_path_buf();
            }
        }
    }
    abs.parent().map(Path::to_path_buf).unwrap_or_default()
}

fn subst(template: &str, q: &Question) -> Result<String> {
    if !template.contains("{db_id}") {
        return Ok(template.to_string());
    }
    match &q.db_id {
        Some(db) => Ok(template.replace("{db_id}", db)),
        None => Err(Error::Input(format!("question {} has no db_id but the suite path `{template}` needs one", q.id))),
    }
}

fn list_suites(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.path().file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    v.sort();
    v
}

fn field(obj: &serde_json::Value, name: &str) -> Option<String> {
    match obj.get(name)? {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// Read the questions of a suite, with clear errors for a missing file or
/// a record without the mapped fields.
pub fn load_questions(path: &Path, file: &SuiteFile) -> Result<Vec<Question>> {
    if !path.is_file() {
        return Err(Error::Input(format!(
            "suite {}: questions file {} does not exist (external benchmark data is expected in ../shared/benchmarks next to the repository; see its SOURCES.md)",
            file.name,
            path.display()
        )));
    }
    let text = crate::error::read_to_string(path)?;
    let bad = |loc: String, e: String| Error::Input(format!("{}:{loc}: {e}", path.display()));
    let records: Vec<(String, serde_json::Value)> = if path.extension().is_some_and(|e| e == "jsonl") {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l)
                    .map(|v| (format!("{}", i + 1), v))
                    .map_err(|e| bad(format!("{}", i + 1), e.to_string()))
            })
            .collect::<Result<_>>()?
    } else {
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad("1".into(), e.to_string()))?;
        match v {
            serde_json::Value::Array(items) => {
                items.into_iter().enumerate().map(|(i, v)| (format!("[{i}]"), v)).collect()
            }
            _ => return Err(bad("1".into(), "expected a JSON array of question objects".into())),
        }
    };
    let src = &file.questions;
    let mut out = Vec::new();
    for (loc, rec) in records {
        if !src.filter.iter().all(|(k, v)| field(&rec, k).as_deref() == Some(v.as_str())) {
            continue;
        }
        let need = |name: &str| {
            field(&rec, name).ok_or_else(|| {
                bad(loc.clone(), format!("record has no `{name}` field (see `questions` in the suite file)"))
            })
        };
        let id = need(&src.id)?;
        let note = file.notes.get(&id).cloned();
        out.push(Question {
            question: need(&src.question)?,
            gold_sql: need(&src.gold_sql)?,
            evidence: src.evidence.as_deref().and_then(|f| field(&rec, f)).filter(|e| !e.is_empty()),
            db_id: match &src.db_id {
                Some(f) => Some(need(f)?),
                None => None,
            },
            note,
            id,
        });
    }
    if out.is_empty() {
        return Err(Error::Input(format!("suite {}: no questions in {} (check `filter`)", file.name, path.display())));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(dup) = out.iter().find(|q| !seen.insert(q.id.clone())) {
        return Err(Error::Input(format!(
            "suite {}: duplicate question id `{}` in {}",
            file.name,
            dup.id,
            path.display()
        )));
    }
    Ok(out)
}
