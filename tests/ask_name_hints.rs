//! Name hints (issue 23; `link::hints`): with `--name-hints on` (the
//! default since session 15), QueryView's prompt names the view column each phrase of the question
//! spells ("claim number" → `Claim_Company_Claim_Number`, through ACME's
//! synonym), and `lucy explain` shows the lines. End to end through `lucy
//! ask` with a scripted OpenAI-compatible mock on 127.0.0.1 that writes the
//! hinted column when the prompt names it and the claim's key otherwise,
//! on ACME's curated model and data (../shared/benchmarks/acme/acme_small.sqlite).

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{json_ok, rows_of, rule, run_mock, sqlite_rows};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/acme.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/benchmarks/acme/acme_small.sqlite");
const Q: &str = "Return all the claims by claim number and close date";
const HINT: &str = "- \"claim number\": Claim_Company_Claim_Number";

fn script() -> Script {
    Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"Claim\"]"]))
        .rule(rule(&["is part of a star"], &["[]"]))
        .rule(rule(&["JSON schema of the table"], &["[\"Company_Claim_Number\", \"Claim_Close_Date\"]"]))
        .rule(rule(
            &["I created a view table lucy_view", HINT],
            &["SELECT Claim_Company_Claim_Number, Claim_Claim_Close_Date FROM lucy_view"],
        ))
        .rule(rule(
            &["I created a view table lucy_view"],
            &["SELECT Claim_Claim_Identifier, Claim_Claim_Close_Date FROM lucy_view"],
        ))
}

/// `lucy --json ask` with `extra` flags: its output, the trace's path (in
/// the returned directory) and the QueryView prompt the mock received.
fn ask(extra: &[&str]) -> (serde_json::Value, tempfile::TempDir, String) {
    let server = MockServer::start(script());
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let mut args = vec!["--json", "ask", "--model", MODEL, Q, "--samples", "1", "--execute", DB];
    args.extend_from_slice(&["--trace", trace.to_str().unwrap()]);
    args.extend_from_slice(extra);
    let out = run_mock(&args, &server.url());
    let v = json_ok(&out);
    let prompt = server
        .chat_requests()
        .iter()
        .filter_map(|r| r.json())
        .filter_map(|j| j["messages"][0]["content"].as_str().map(str::to_string))
        .find(|m| m.contains("I created a view table lucy_view"))
        .expect("a QueryView request");
    (v, dir, prompt)
}

#[test]
fn the_hinted_column_reaches_the_prompt_and_the_explanation() {
    assert!(std::path::Path::new(DB).is_file(), "{DB} is missing: ../shared sits beside the clone");
    let gold = sqlite_rows(DB, "SELECT Company_Claim_Number, Claim_Close_Date FROM Claim");
    assert!(!gold.is_empty());

    // Off: no hint lines; the model writes the claim's key.
    let (off, _dir, prompt) = ask(&["--name-hints", "off"]);
    assert!(!prompt.contains("Columns that words of the question name"), "{prompt}");
    assert_ne!(rows_of(&off), gold);

    // On (the default): the lines are in the prompt, before the question,
    // and the answer is gold.
    let (on, dir, prompt) = ask(&[]);
    let hints = prompt.find("Columns that words of the question name").expect("the hint block");
    assert!(prompt[hints..].contains("claim number"), "{prompt}");
    assert!(prompt[hints..].contains("close date"), "{prompt}");
    assert!(hints < prompt.rfind("The question:").unwrap());
    assert_eq!(rows_of(&on), gold);
    let (explicit, _, prompt_on) = ask(&["--name-hints", "on"]);
    assert_eq!(prompt_on, prompt);
    assert_eq!(rows_of(&explicit), gold);

    let trace = dir.path().join("t.json");
    let out = support::lucy().args(["explain", trace.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("name hints shown (--name-hints):"), "{text}");
    assert!(text.contains("\"claim number\": Claim_Company_Claim_Number"), "{text}");
}
