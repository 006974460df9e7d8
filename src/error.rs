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
        write!(f, "{}: {}", cut(&self.path, 200), bounded(&self.message))?;
        if !self.hint.is_empty() {
            write!(f, " (hint: {})", bounded(&self.hint))?;
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
    #[error("{}", bounded(.0))]
    Input(String),

    /// GenerateView proved that no view satisfies the constraints.
    #[error("infeasible: {}", bounded(.0))]
    Infeasible(String),

    /// The solver failed for a reason other than infeasibility.
    #[error("solver error: {}", bounded(.0))]
    Solver(String),

    /// An LLM call failed (timeout, HTTP error, unusable answer, missing cassette key).
    #[error("LLM error ({phase}): {}", bounded(.message))]
    Llm { phase: String, message: String },

    /// SQL that does not parse or is not allowed.
    #[error("SQL rejected: {}", bounded(.0))]
    Sql(String),

    /// A database could not be opened or queried.
    #[error("database error: {}", bounded(.0))]
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

/// Read a file to a string, with the path in the error. Only regular files
/// are read (see [`regular_file`]).
pub fn read_to_string(path: impl AsRef<Path>) -> Result<String> {
    regular_file(path.as_ref())?;
    std::fs::read_to_string(path.as_ref()).map_err(|e| Error::io(path, e))
}

/// Read a file's bytes; only regular files are read (see [`regular_file`]).
pub fn read_bytes(path: impl AsRef<Path>) -> Result<Vec<u8>> {
    regular_file(path.as_ref())?;
    std::fs::read(path.as_ref()).map_err(|e| Error::io(path, e))
}

/// `Ok` when `path` is a regular file (after symlinks); otherwise an error
/// that says what it is instead. Checked before opening: opening a FIFO
/// blocks until a writer appears, and a device such as `/dev/zero` never
/// ends.
pub fn regular_file(path: &Path) -> Result<()> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_file() {
        return Ok(());
    }
    let ft = meta.file_type();
    let what = if ft.is_dir() {
        "a directory"
    } else {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if ft.is_fifo() {
                "a FIFO (named pipe)"
            } else if ft.is_char_device() {
                "a character device"
            } else if ft.is_block_device() {
                "a block device"
            } else if ft.is_socket() {
                "a socket"
            } else {
                "not a regular file"
            }
        }
        #[cfg(not(unix))]
        {
            "not a regular file"
        }
    };
    Err(Error::Input(format!(
        "{}: is {what}, not a regular file; give the path of a file",
        cut(&path.display().to_string(), 300)
    )))
}

/// The longest line an error message prints; longer lines are cut with
/// their length (a 100 KB table name must not flood a terminal or a log).
pub const MAX_ERROR_LINE: usize = 2_000;

/// Every line of `s` cut to [`MAX_ERROR_LINE`] characters.
pub fn bounded(s: &str) -> String {
    if s.len() <= MAX_ERROR_LINE {
        return s.to_string();
    }
    s.split('\n').map(|l| cut(l, MAX_ERROR_LINE)).collect::<Vec<_>>().join("\n")
}

/// `s` cut to `max` characters, with its full length when cut. Every error
/// that echoes input (a name, the model's SQL, a server's body) goes through
/// this: input may be arbitrarily long.
pub fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((end, _)) => format!("{}… ({} characters)", &s[..end], s.chars().count()),
    }
}

/// The first character of `s` a reader cannot see or tell apart from ASCII
/// (a non-ASCII space, a zero-width or bidi control, a control character, a
/// byte-order mark, or a letter outside ASCII), described with its code
/// point and its 1-based line and column, e.g.
/// `U+00A0 (no-break space) at line 1, column 7`.
pub fn odd_char(s: &str) -> Option<String> {
    let (ch, _, line, col) = first_odd(s)?;
    Some(format!("U+{:04X} ({}) at line {line}, column {col}", ch as u32, char_name(ch)))
}

/// Like [`odd_char`] for a name (one line): `U+0421 (non-ASCII letter) at
/// character 1`.
pub fn odd_char_in_name(s: &str) -> Option<String> {
    let (ch, i, _, _) = first_odd(s)?;
    Some(format!("U+{:04X} ({}) at character {}", ch as u32, char_name(ch), i + 1))
}

/// (char, index in chars, line, column) of the first odd character.
fn first_odd(s: &str) -> Option<(char, usize, usize, usize)> {
    let (mut line, mut col) = (1usize, 0usize);
    for (i, ch) in s.chars().enumerate() {
        col += 1;
        if ch == '\n' {
            line += 1;
            col = 0;
            continue;
        }
        if ch == '\t' || ch == '\r' || (ch.is_ascii() && !ch.is_ascii_control()) {
            continue;
        }
        return Some((ch, i, line, col));
    }
    None
}

/// `s` with every character [`odd_char`] would report written as `\u{…}`:
/// safe to print (a bidi override cannot reorder the rest of the line) and
/// shows what is really there.
pub fn escape_odd(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        if ch.is_ascii() && !ch.is_ascii_control() {
            out.push(ch);
        } else {
            out.push_str(&format!("\\u{{{:x}}}", ch as u32));
        }
    }
    out
}

/// A short name for a character `odd_char` reports.
pub fn char_name(ch: char) -> &'static str {
    match ch {
        '\u{00A0}' => "no-break space",
        '\u{FEFF}' => "byte-order mark / zero-width no-break space",
        '\u{200B}' => "zero-width space",
        '\u{200C}' => "zero-width non-joiner",
        '\u{200D}' => "zero-width joiner",
        '\u{200E}' | '\u{200F}' => "directional mark",
        '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' => "bidi control",
        '\u{2060}' => "word joiner",
        '\u{00AD}' => "soft hyphen",
        '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' | '\u{1680}' => "non-ASCII space",
        '\u{2018}' | '\u{2019}' | '\u{201C}' | '\u{201D}' => "typographic quote",
        '\0' => "NUL",
        c if c.is_control() => "control character",
        c if c.is_alphabetic() => "non-ASCII letter",
        _ => "non-ASCII character",
    }
}

#[cfg(test)]
mod text_tests {
    use super::*;

    #[test]
    fn cut_keeps_short_text_and_counts_long_text() {
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(cut("abcd", 3), "abc… (4 characters)");
        assert_eq!(cut("ééé", 2), "éé… (3 characters)");
    }

    #[test]
    fn only_regular_files_are_read() {
        let e = read_to_string("/dev/null").unwrap_err().to_string();
        assert!(e.contains("/dev/null: is a character device, not a regular file"), "{e}");
        let e = read_bytes("/").unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        let dir = std::env::temp_dir().join(format!("lucy-fifo-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        let c = std::ffi::CString::new(dir.to_string_lossy().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo has no other effect.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_to_string(&dir).unwrap_err().to_string();
        let _ = std::fs::remove_file(&dir);
        assert!(e.contains("is a FIFO (named pipe)"), "{e}");
    }

    #[test]
    fn long_lines_of_errors_are_cut() {
        let name = "x".repeat(100_000);
        let e = Error::Input(format!("unknown table `{name}`"));
        let shown = e.to_string();
        assert!(shown.len() < MAX_ERROR_LINE + 100, "{}", shown.len());
        assert!(shown.ends_with("(100016 characters)"), "{}", &shown[shown.len() - 40..]);
        let issue = ModelIssue { file: None, path: "$".into(), message: name.clone(), hint: String::new() };
        assert!(issue.to_string().len() < MAX_ERROR_LINE + 100);
    }

    #[test]
    fn odd_char_names_code_point_and_position() {
        assert_eq!(odd_char("SELECT x"), None);
        assert_eq!(odd_char("SELECT\u{a0}x").unwrap(), "U+00A0 (no-break space) at line 1, column 7");
        assert_eq!(odd_char("a\nb\u{202e}").unwrap(), "U+202E (bidi control) at line 2, column 2");
        assert_eq!(odd_char("С").unwrap(), "U+0421 (non-ASCII letter) at line 1, column 1");
        assert_eq!(odd_char("a\0").unwrap(), "U+0000 (NUL) at line 1, column 2");
        assert_eq!(odd_char_in_name("CLIENT\u{200b}").unwrap(), "U+200B (zero-width space) at character 7");
        assert_eq!(escape_odd("\u{421}LIENT\n"), "\\u{421}LIENT\\u{a}");
    }
}
