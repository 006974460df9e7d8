//! `lucy ask`'s status line (issue 23, item 8): shown on a terminal's
//! stderr while the phases run, never in a pipe, with `--json` or with
//! `--quiet`. The LLM is the scripted mock on 127.0.0.1 (DDO Q1).

use std::process::{Command, Output};

use lucy::llm::mock::{MockServer, Script};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q1_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mock/ddo-q1.json");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

/// Words only the status line writes.
const STATUS_WORDS: [&str; 4] = ["MatchTables", "GenerateView", "QueryView", "tok/s"];

fn ask_args(url: &str, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = ["ask", "--model", MODEL, "--execute", DB, "--min-votes", "2"].map(String::from).into();
    v.extend(["--llm-url", url, "--llm-model", "mock-model", "--llm-retries", "0"].map(String::from));
    v.extend(extra.iter().map(|s| s.to_string()));
    v.push(Q1.to_string());
    v
}

fn lucy(args: &[String]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_URL")
        .env_remove("CI")
        .output()
        .expect("run lucy")
}

fn has_status(text: &str) -> bool {
    STATUS_WORDS.iter().any(|w| text.contains(w))
}

#[test]
fn nothing_is_drawn_into_a_pipe() {
    let server = MockServer::start(Script::from_file(Q1_SCRIPT).unwrap());
    for extra in [&[][..], &["--quiet"][..]] {
        let o = lucy(&ask_args(&server.url(), extra));
        let err = String::from_utf8_lossy(&o.stderr);
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success(), "{err}");
        assert!(out.contains("-- 29 row(s)"), "{out}");
        assert!(!has_status(&err), "a status line went into a pipe: {err}");
        assert!(!err.contains('\r') && !err.contains('\u{1b}'), "terminal control codes in a pipe: {err:?}");
    }
    // SQL given with --sql: no LLM, and no status either.
    let o = lucy(
        &[
            "ask",
            "--model",
            MODEL,
            "--execute",
            DB,
            "--tables",
            "CLIENT,DATACENTER",
            "--sql",
            "SELECT DISTINCT CLIENT_name FROM lucy_view",
        ]
        .map(String::from),
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!has_status(&String::from_utf8_lossy(&o.stderr)), "{}", String::from_utf8_lossy(&o.stderr));
}

/// A word for `sh -c`, single-quoted.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Run lucy under a pseudo-terminal (`script` from util-linux): stdout and
/// stderr both go to the terminal it reads. `None` without `script`.
fn lucy_on_a_terminal(args: &[String]) -> Option<(bool, String)> {
    if Command::new("script").arg("--version").output().is_err() {
        return None;
    }
    let cmd = std::iter::once(env!("CARGO_BIN_EXE_lucy").to_string())
        .chain(args.iter().cloned())
        .map(|a| sh_quote(&a))
        .collect::<Vec<_>>()
        .join(" ");
    let o = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_URL")
        .env_remove("CI")
        .output()
        .expect("run script");
    Some((o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned()))
}

#[test]
fn a_terminal_sees_the_steps_unless_quiet() {
    let server = MockServer::start(Script::from_file(Q1_SCRIPT).unwrap());
    let Some((ok, shown)) = lucy_on_a_terminal(&ask_args(&server.url(), &[])) else {
        eprintln!("`script` (util-linux) is not installed: the terminal half of this test did not run");
        return;
    };
    assert!(ok, "{shown}");
    assert!(shown.contains("MatchTables"), "no status on a terminal: {shown:?}");
    assert!(shown.contains("-- 29 row(s)"), "{shown}");
    let (ok, quiet) = lucy_on_a_terminal(&ask_args(&server.url(), &["--quiet"])).unwrap();
    assert!(ok, "{quiet}");
    assert!(!has_status(&quiet), "--quiet still drew: {quiet:?}");
    assert!(quiet.contains("-- 29 row(s)"), "{quiet}");
    let (ok, json) = lucy_on_a_terminal(&[vec!["--json".to_string()], ask_args(&server.url(), &[])].concat()).unwrap();
    assert!(ok, "{json}");
    assert!(!has_status(&json), "--json drew a status line: {json:?}");
}
