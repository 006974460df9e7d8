//! Helpers shared by the integration tests that run the `lucy` binary: one
//! runner (no LLM from the environment, or the scripted mock on
//! 127.0.0.1), the mock's rules ([`rule`]), the rows `lucy ask --json` printed and the rows of SQL on a
//! SQLite file in the same text form, one traced `lucy ask` against the
//! mock ([`ask_traced`]), and one check of a trace and its `lucy explain`
//! report. A test file includes it with `mod support;`.

// Each test crate uses a part of this module.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output};

use lucy::llm::mock::{Reply, Rule};

/// What a scripted mock rule looks for in a request's last user message:
/// one text, or several that must all be there.
pub trait Needles {
    fn needles(self) -> Vec<String>;
}

impl Needles for &str {
    fn needles(self) -> Vec<String> {
        vec![self.to_string()]
    }
}

impl Needles for &[&str] {
    fn needles(self) -> Vec<String> {
        self.iter().map(|s| s.to_string()).collect()
    }
}

impl<const N: usize> Needles for &[&str; N] {
    fn needles(self) -> Vec<String> {
        self.iter().map(|s| s.to_string()).collect()
    }
}

/// A mock rule: a request whose last user message holds every needle gets
/// `answers` (the choices of one response).
pub fn rule(needles: impl Needles, answers: &[&str]) -> Rule {
    Rule::when_contains(needles.needles()).reply(Reply::ok(answers.iter().copied()))
}

/// The environment variables that would configure an LLM; every run here
/// removes them, so a developer's own settings never reach a test.
pub const LLM_ENV: [&str; 6] =
    ["LUCY_LLM_URL", "LUCY_LLM_MODEL", "LUCY_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "LUCY_LLM_BACKEND"];

/// The API key [`run_mock`] passes (distinctive, so a test can check that
/// it never leaks into output, traces or cassettes).
pub const MOCK_API_KEY: &str = "sk-SENTINEL-lucy-tests-0123456789";

/// The built `lucy` with no LLM configured from the environment, and no
/// embedded model either (even where scripts/fetch-model.sh has run).
pub fn lucy() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lucy"));
    for v in LLM_ENV {
        c.env_remove(v);
    }
    c.env("LUCY_LLM_GGUF", "off");
    c
}

/// Run `lucy ARGS` with no LLM configured.
pub fn run(args: &[&str]) -> Output {
    lucy().args(args).output().expect("run lucy")
}

/// Run `lucy ARGS` against the OpenAI-compatible mock at `url` (model
/// `mock-model`, no retries), with [`MOCK_API_KEY`] as the key.
/// QueryView runs in the `sql` form ([`MOCK_FORM`]): the scripted rules
/// answer its SQL prompt; a test of the plan form says `--query-form`.
pub fn run_mock(args: &[&str], url: &str) -> Output {
    lucy()
        .args(args)
        .args(["--llm-url", url, "--llm-model", "mock-model", "--llm-retries", "0"])
        .env("LUCY_API_KEY", MOCK_API_KEY)
        .env(MOCK_FORM.0, MOCK_FORM.1)
        .output()
        .expect("run lucy")
}

/// The environment setting that keeps QueryView in the `sql` form for the
/// scripted mock (the default is `auto`, the plan first, since session
/// 30; flags win over it).
pub const MOCK_FORM: (&str, &str) = ("LUCY_SET", "query.form=sql");

/// `out`'s stdout as JSON (the output and stderr shown when it is not).
pub fn stdout_json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `out`'s stdout as JSON, after asserting that the run succeeded (stderr
/// shown when it did not).
pub fn json_ok(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    stdout_json(out)
}

/// The rows `lucy ask --json` printed (`rows.rows`), as a set of text
/// tuples: strings as they are, other values as JSON.
pub fn rows_of(json: &serde_json::Value) -> BTreeSet<Vec<String>> {
    json["rows"]["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("no rows in {json}"))
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))
                .collect()
        })
        .collect()
}

/// The rows of `sql` on the SQLite file `db` (opened read-only), as a set
/// of text tuples in [`rows_of`]'s form: text as it is, numbers and NULL
/// as JSON.
pub fn sqlite_rows(db: &str, sql: &str) -> BTreeSet<Vec<String>> {
    use rusqlite::types::Value;
    let c = rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut st = c.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    let n = st.column_count();
    let text = |v: Value| match v {
        Value::Null => "null".to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Real(f) => serde_json::json!(f).to_string(),
        Value::Text(t) => t,
        Value::Blob(b) => format!("{b:?}"),
    };
    let rows =
        st.query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i).map(text)).collect::<Result<Vec<_>, _>>()).unwrap();
    rows.map(|r| r.unwrap()).collect()
}

/// DDO's Q1 gold over the base tables (the distinct client, datacenter
/// pairs of datacenters named `dev…`), for [`sqlite_rows`] on
/// dbmodels/ddo.sqlite.
pub const DDO_Q1_GOLD: &str = "SELECT DISTINCT CLIENT.name, DATACENTER.name FROM DATACENTER \
    JOIN COMPUTE ON COMPUTE.dc_id = DATACENTER.id JOIN RESOURCEPOOL ON RESOURCEPOOL.compute_id = COMPUTE.id \
    JOIN RSPOOL2CLIENT ON RSPOOL2CLIENT.rspool_id = RESOURCEPOOL.id JOIN CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id \
    WHERE DATACENTER.name LIKE 'dev%'";

/// The trace at `path` (as `lucy ask --trace` wrote it), parsed, after
/// checking that `lucy explain` renders it: explain succeeds and its report
/// holds each of `expected` (the report is shown when one is missing).
pub fn trace_and_explain(path: &Path, expected: &[&str]) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let trace: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()));
    let ex = run(&["explain", path.to_str().unwrap()]);
    let report = String::from_utf8_lossy(&ex.stdout);
    assert!(ex.status.success(), "lucy explain failed: {}", String::from_utf8_lossy(&ex.stderr));
    for e in expected {
        assert!(report.contains(e), "{e:?} is not in the report:\n{report}");
    }
    trace
}

/// One `lucy --json ask` run by [`ask_traced`]: its output and the trace
/// it wrote (kept on disk until this drops).
pub struct Asked {
    pub out: Output,
    pub trace_path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Asked {
    /// The JSON `lucy ask` printed, after asserting that it succeeded.
    pub fn json(&self) -> serde_json::Value {
        json_ok(&self.out)
    }

    /// The trace file as JSON.
    pub fn trace(&self) -> serde_json::Value {
        let text =
            std::fs::read_to_string(&self.trace_path).unwrap_or_else(|e| panic!("{}: {e}", self.trace_path.display()));
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", self.trace_path.display()))
    }

    /// The trace file as text.
    pub fn trace_text(&self) -> String {
        std::fs::read_to_string(&self.trace_path).unwrap_or_else(|e| panic!("{}: {e}", self.trace_path.display()))
    }

    /// `lucy explain` of the trace (asserting that it succeeded).
    pub fn explain(&self) -> String {
        let ex = run(&["explain", self.trace_path.to_str().unwrap()]);
        assert!(ex.status.success(), "lucy explain failed: {}", String::from_utf8_lossy(&ex.stderr));
        String::from_utf8_lossy(&ex.stdout).into_owned()
    }
}

/// `lucy --json ask QUESTION --model MODEL --samples 1 --execute DB --trace
/// T EXTRA…` against the mock at `url` (see [`run_mock`]), the trace in a
/// temporary directory.
pub fn ask_traced(url: &str, model: &str, db: &str, question: &str, extra: &[&str]) -> Asked {
    let dir = tempfile::tempdir().unwrap();
    let trace_path = dir.path().join("t.json");
    let mut args = vec!["--json", "ask", "--model", model, question, "--samples", "1", "--execute", db];
    args.extend_from_slice(&["--trace", trace_path.to_str().unwrap()]);
    args.extend_from_slice(extra);
    Asked { out: run_mock(&args, url), trace_path, _dir: dir }
}

/// A generated block of a committed document: the text of `file` (from the
/// crate root) between `<!-- NAME:begin -->` and `<!-- NAME:end -->` must be
/// `body`; with `LUCY_UPDATE_DOCS` set it is rewritten instead. `test` names
/// the test binary for the message (`cargo test --test TEST`).
pub fn generated_block(file: &str, name: &str, body: &str, test: &str) {
    let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(&path).unwrap();
    let begin = format!("<!-- {name}:begin -->\n");
    let end = format!("<!-- {name}:end -->");
    let b = doc.find(&begin).unwrap_or_else(|| panic!("{file}: no `{}` marker", begin.trim()));
    let e = doc.find(&end).unwrap_or_else(|| panic!("{file}: no `{end}` marker"));
    let fresh = format!("{}{begin}{body}{}", &doc[..b], &doc[e..]);
    if std::env::var_os("LUCY_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    assert!(
        fresh == doc,
        "{file}: the `{name}` block is stale: run `LUCY_UPDATE_DOCS=1 cargo test --test {test}` and review the diff"
    );
}
