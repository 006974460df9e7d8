//! One error type for the library. Every variant carries enough context to
//! tell the user which file, JSON path, table or phase is at fault and what
//! to do; the CLI maps variants to exit codes.

use std::fmt;
use std::path::{Path, PathBuf};

/// A problem found in a dbModel (or an imported schema), located by file and
/// JSON path, with a hint on how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ModelIssue {
    /// File the model came from, when it came from a file.
    pub file: Option<String>,
    /// JSON path of the offending element, e.g. `$.relationships[3].on[0][1]`.
    pub path: String,
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

impl fmt::Display for ModelIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        write!(f, "{}: {}", self.path, self.message)?;
        if !self.hint.is_empty() {
            write!(f, " (hint: {})", self.hint)?;
        }
        Ok(())
    }
}

/// Every error lucy reports.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The dbModel is malformed or inconsistent.
    #[error("invalid dbModel:\n{}", .0.iter().map(|i| format!("  - {i}")).collect::<Vec<_>>().join("\n"))]
    Model(Vec<ModelIssue>),

    /// A file could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io { path: PathBuf, source: std::io::Error },

    /// Bad input from the user (unknown table, bad flag combination, ...).
    #[error("{0}")]
    Input(String),

    /// GenerateView proved that no view satisfies the constraints.
    #[error("infeasible: {0}")]
    Infeasible(String),

    /// The solver failed for a reason other than infeasibility.
    #[error("solver error: {0}")]
    Solver(String),

    /// An LLM call failed (timeout, HTTP error, unusable answer, missing cassette key).
    #[error("LLM error ({phase}): {message}")]
    Llm { phase: String, message: String },

    /// SQL that does not parse or is not allowed.
    #[error("SQL rejected: {0}")]
    Sql(String),

    /// A database could not be opened or queried.
    #[error("database error: {0}")]
    Db(String),
}

/// Result with lucy's error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Process exit code for this error: 2 for bad input, 3 for infeasible,
    /// 1 for anything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Model(_) | Error::Input(_) | Error::Io { .. } => 2,
            Error::Infeasible(_) => 3,
            _ => 1,
        }
    }

    /// An I/O error on `path`.
    pub fn io(path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Error::Io { path: path.as_ref().to_path_buf(), source }
    }

    /// An LLM error in `phase`.
    pub fn llm(phase: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Llm { phase: phase.into(), message: message.into() }
    }
}

/// Read a file to a string, with the path in the error.
pub fn read_to_string(path: impl AsRef<Path>) -> Result<String> {
    std::fs::read_to_string(path.as_ref()).map_err(|e| Error::io(path, e))
}
