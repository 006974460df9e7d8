//! What `results.json` holds about a run: the suite, mode, method, LLM,
//! date and commit, with the summary and every question's result.

use serde::{Deserialize, Serialize};

use super::run::QuestionResult;
use super::summary::Summary;

/// Everything `results.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchRun {
    pub suite: String,
    /// `oracle-tables`, `oracle-view`, `full`.
    pub mode: String,
    /// `lucy` or `direct`.
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<String>,
    /// `--examples POOL`: the pool's kind (`cross-database` or
    /// `in-database`) and file, e.g. `cross-database:pool.jsonl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub examples: Option<String>,
    /// `--sample N --seed S`: `N@S`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<String>,
    pub date: String,
    pub commit: String,
    pub summary: Summary,
    pub questions: Vec<QuestionResult>,
}

/// `git rev-parse --short HEAD` of the working directory, with `-dirty`
/// (as `git describe --dirty` says it) when tracked files that build lucy
/// or shape its prompts (`src/`, `prompts/`, `Cargo.toml`, `Cargo.lock`)
/// differ from it: a run of a binary built from uncommitted changes does
/// not claim the commit. `unknown` outside a git checkout.
pub fn git_commit() -> String {
    git_commit_in(std::path::Path::new("."))
}

/// [`git_commit`] of the checkout at `dir`.
pub fn git_commit_in(dir: &std::path::Path) -> String {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let Some(head) = git(&["rev-parse", "--short", "HEAD"]) else { return "unknown".into() };
    let changed =
        git(&["status", "--porcelain", "--untracked-files=no", "--", "src", "prompts", "Cargo.toml", "Cargo.lock"]);
    match changed {
        Some(c) if !c.is_empty() => format!("{head}-dirty"),
        _ => head,
    }
}

/// Today's UTC date, `YYYY-MM-DD`.
pub fn today_utc() -> String {
    let secs =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}-{m:02}-{d:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_commit_says_dirty_when_tracked_sources_changed() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(git_commit_in(dir.path()), "unknown");
        let git = |args: &[&str]| {
            let o = std::process::Command::new("git")
                .arg("-C")
                .arg(dir.path())
                .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
                .args(args)
                .output()
                .unwrap();
            assert!(o.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        };
        git(&["init", "-q"]);
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "1").unwrap();
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "x"]);
        let clean = git_commit_in(dir.path());
        assert!(clean.len() >= 7 && !clean.ends_with("-dirty"), "{clean}");
        // An untracked file or a change outside the sources is not a change.
        std::fs::write(dir.path().join("src/new.rs"), "2").unwrap();
        std::fs::write(dir.path().join("notes.md"), "n").unwrap();
        assert_eq!(git_commit_in(dir.path()), clean);
        std::fs::write(dir.path().join("src/a.rs"), "2").unwrap();
        assert_eq!(git_commit_in(dir.path()), format!("{clean}-dirty"));
    }
}
