//! The examples file: JSON Lines, one `{"question", "sql"}` object per line
//! (`"database"` too in a benchmark pool). Blank lines are allowed; every
//! error names the file and the 1-based line.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One verified query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Example {
    /// The question, in natural language.
    pub question: String,
    /// SQL over the model's base tables that answers it.
    pub sql: String,
    /// The database it belongs to (benchmark pools; absent in a model's file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
}

/// An example with the line it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Entry {
    /// 1-based line in the file.
    pub line: usize,
    #[serde(flatten)]
    pub example: Example,
}

/// A parsed examples file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExamplesFile {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    pub entries: Vec<Entry>,
}

/// `M.examples.jsonl` beside the model file `M.json` (`M.examples.jsonl`
/// beside `M` when the model file has no extension).
pub fn default_path(model: &Path) -> PathBuf {
    model.with_extension("examples.jsonl")
}

impl ExamplesFile {
    /// Read and parse `path`. A missing file is an error naming it.
    pub fn load(path: &Path) -> Result<ExamplesFile> {
        let text = crate::error::read_to_string(path)?;
        Self::parse(path, &text)
    }

    /// Read `path` when it exists, else an empty file at that path.
    pub fn load_or_empty(path: &Path) -> Result<ExamplesFile> {
        if path.exists() {
            Self::load(path)
        } else {
            Ok(ExamplesFile { path: path.to_path_buf(), entries: Vec::new() })
        }
    }

    /// Parse JSON Lines text; `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<ExamplesFile> {
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let example: Example = serde_json::from_str(line).map_err(|e| {
                Error::Input(format!(
                    "{}:{n}: not an example object {{\"question\": …, \"sql\": …}}: {e}",
                    path.display()
                ))
            })?;
            check_fields(&example).map_err(|m| Error::Input(format!("{}:{n}: {m}", path.display())))?;
            entries.push(Entry { line: n, example });
        }
        Ok(ExamplesFile { path: path.to_path_buf(), entries })
    }

    /// The entry whose question equals `question` (trimmed, case-insensitive).
    pub fn find_question(&self, question: &str) -> Option<&Entry> {
        let q = normalize_text(question);
        self.entries.iter().find(|e| normalize_text(&e.example.question) == q)
    }

    /// Append one example as a new line (creating the file), after checking
    /// its fields and that no entry has the same question. Returns its line.
    pub fn append(&mut self, example: Example) -> Result<usize> {
        check_fields(&example).map_err(|m| Error::Input(format!("{}: {m}", self.path.display())))?;
        if let Some(e) = self.find_question(&example.question) {
            return Err(Error::Input(format!(
                "{}:{}: already has this question; edit that line instead",
                self.path.display(),
                e.line
            )));
        }
        let existing = if self.path.exists() { crate::error::read_to_string(&self.path)? } else { String::new() };
        let mut text = String::new();
        if !existing.is_empty() && !existing.ends_with('\n') {
            text.push('\n');
        }
        let json = serde_json::to_string(&example).map_err(|e| Error::Input(e.to_string()))?;
        text.push_str(&json);
        text.push('\n');
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        f.write_all(text.as_bytes()).map_err(|e| Error::io(&self.path, e))?;
        let line = existing.lines().count() + 1;
        self.entries.push(Entry { line, example });
        Ok(line)
    }
}

/// Non-empty question and SQL.
fn check_fields(e: &Example) -> std::result::Result<(), String> {
    if e.question.trim().is_empty() {
        return Err("`question` is empty".into());
    }
    if e.sql.trim().is_empty() {
        return Err("`sql` is empty".into());
    }
    Ok(())
}

/// Text compared without case, surrounding space, runs of spaces or a
/// trailing `;` / `?` / `.`: the normal form the leakage checks compare.
pub fn normalize_text(s: &str) -> String {
    let t = s.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
    t.trim_end_matches([';', '?', '.', ' ']).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_names_file_and_line_of_bad_json_and_missing_fields() {
        let p = Path::new("m.examples.jsonl");
        let ok = "{\"question\":\"a\",\"sql\":\"SELECT 1\"}\n\n{\"question\":\"b\",\"sql\":\"SELECT 2\"}\n";
        let f = ExamplesFile::parse(p, ok).unwrap();
        assert_eq!(f.entries.iter().map(|e| e.line).collect::<Vec<_>>(), vec![1, 3]);
        let e = ExamplesFile::parse(p, "{\"question\":\"a\",\"sql\":\"SELECT 1\"}\n{oops\n").unwrap_err().to_string();
        assert!(e.contains("m.examples.jsonl:2:"), "{e}");
        let e = ExamplesFile::parse(p, "{\"question\":\"a\"}\n").unwrap_err().to_string();
        assert!(e.contains(":1:") && e.contains("sql"), "{e}");
        let e = ExamplesFile::parse(p, "{\"question\":\" \",\"sql\":\"SELECT 1\"}\n").unwrap_err().to_string();
        assert!(e.contains(":1: `question` is empty"), "{e}");
        let e = ExamplesFile::parse(p, "{\"question\":\"a\",\"sql\":\"x\",\"gold\":1}\n").unwrap_err().to_string();
        assert!(e.contains("unknown field `gold`"), "{e}");
    }

    #[test]
    fn append_adds_a_line_and_refuses_a_duplicate_question() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("m.examples.jsonl");
        std::fs::write(&p, "{\"question\":\"How many clients?\",\"sql\":\"SELECT 1\"}").unwrap();
        let mut f = ExamplesFile::load(&p).unwrap();
        let ex = Example { question: "List clients".into(), sql: "SELECT 2".into(), database: None };
        assert_eq!(f.append(ex).unwrap(), 2);
        let again = ExamplesFile::load(&p).unwrap();
        assert_eq!(again.entries.len(), 2);
        assert_eq!(again.entries[1].example.sql, "SELECT 2");
        let dup = Example { question: "how many clients".into(), sql: "SELECT 3".into(), database: None };
        let e = f.append(dup).unwrap_err().to_string();
        assert!(e.contains(":1: already has this question"), "{e}");
    }

    #[test]
    fn default_path_sits_beside_the_model() {
        assert_eq!(default_path(Path::new("dbmodels/ddo.json")), PathBuf::from("dbmodels/ddo.examples.jsonl"));
    }
}
