//! Name hints (issue 23; `link::hints`): with `--name-hints on` (the
//! default since session 15), QueryView's prompt names the view column each phrase of the question
//! spells ("claim number" → `Claim_Company_Claim_Number`, through ACME's
//! synonym), and `lucy explain` shows the lines. End to end through `lucy
//! ask` with a scripted OpenAI-compatible mock on 127.0.0.1 that writes the
//! hinted column when the prompt names it and the claim's key otherwise,
//! on ACME's curated model and data (../shared/benchmarks/acme/acme_small.sqlite).

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{rows_of, rule, sqlite_rows};

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

/// `lucy --json ask` with `extra` flags: its output, the run (its trace)
/// and the QueryView prompt the mock received.
fn ask(extra: &[&str]) -> (serde_json::Value, support::Asked, String) {
    let server = MockServer::start(script());
    let a = support::ask_traced(&server.url(), MODEL, DB, Q, extra);
    (a.json(), a, query_view_prompt(&server))
}

/// The QueryView prompt the mock received.
fn query_view_prompt(server: &MockServer) -> String {
    server
        .chat_requests()
        .iter()
        .filter_map(|r| r.json())
        .filter_map(|j| j["messages"][0]["content"].as_str().map(str::to_string))
        .find(|m| m.contains("I created a view table lucy_view"))
        .expect("a QueryView request")
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
    let (on, run, prompt) = ask(&[]);
    let hints = prompt.find("Columns that words of the question name").expect("the hint block");
    assert!(prompt[hints..].contains("claim number"), "{prompt}");
    assert!(prompt[hints..].contains("close date"), "{prompt}");
    assert!(hints < prompt.rfind("The question:").unwrap());
    assert_eq!(rows_of(&on), gold);
    let (explicit, _, prompt_on) = ask(&["--name-hints", "on"]);
    assert_eq!(prompt_on, prompt);
    assert_eq!(rows_of(&explicit), gold);

    let text = run.explain();
    assert!(text.contains("name hints shown (--name-hints):"), "{text}");
    assert!(text.contains("\"claim number\": Claim_Company_Claim_Number"), "{text}");
}

/// A hinted phrase the question asks "by": the prompt's line is the plain
/// hint, and `--by-groups` (the default) groups the mock's count by its
/// column.
#[test]
fn a_phrase_asked_by_groups_the_count_by_its_column() {
    const Q2: &str = "Count the claims by policy number";
    let script = Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"Claim\", \"Policy\"]"]))
        .rule(rule(&["JSON schema of the table"], &["[\"Policy_Number\", \"Claim_Identifier\"]"]))
        .rule(rule(
            &["I created a view table lucy_view"],
            &["SELECT COUNT(DISTINCT Claim_Claim_Identifier) FROM lucy_view"],
        ));
    let run = |extra: &[&str]| {
        let server = MockServer::start(script.clone());
        let a = support::ask_traced(&server.url(), MODEL, DB, Q2, extra);
        (a.json(), query_view_prompt(&server))
    };
    let gold = sqlite_rows(
        DB,
        "SELECT p.Policy_Number, COUNT(DISTINCT c.Claim_Identifier) FROM Policy p \
         JOIN Policy_Coverage_Detail d ON d.Policy_Identifier = p.Policy_Identifier \
         JOIN Claim_Coverage cc ON cc.Policy_Coverage_Detail_Identifier = d.Policy_Coverage_Detail_Identifier \
         AND cc.Effective_Date = d.Effective_Date \
         JOIN Claim c ON c.Claim_Identifier = cc.Claim_Identifier GROUP BY p.Policy_Number",
    );
    assert!(!gold.is_empty());
    // The plain hint line; the mock counts every claim, which is the
    // answer without `--by-groups` (on by default since session 20: it
    // groups the count by the policy number itself).
    let (off, prompt) = run(&["--by-groups", "off"]);
    assert!(prompt.contains("- \"policy number\": Policy_Policy_Number\n"), "{prompt}");
    assert_ne!(rows_of(&off), gold);
    let (grouped, _) = run(&[]);
    assert_eq!(rows_of(&grouped), gold);
}

/// The model's own words are the lever (issue 23, item 7): over a copy of
/// ACME's model without the column's synonym ("claim number"), no line
/// names Claim_Company_Claim_Number and the answer is the claim's key;
/// with it (the curated model), the gold rows.
#[test]
fn a_column_synonym_is_what_names_the_column() {
    let gold = sqlite_rows(DB, "SELECT Company_Claim_Number, Claim_Close_Date FROM Claim");
    let dir = tempfile::tempdir().unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(MODEL).unwrap()).unwrap();
    let claim = m["tables"].as_array_mut().unwrap().iter_mut().find(|t| t["name"] == "Claim").unwrap();
    let col =
        claim["columns"].as_array_mut().unwrap().iter_mut().find(|c| c["name"] == "Company_Claim_Number").unwrap();
    assert_eq!(col["synonyms"], serde_json::json!(["claim number"]));
    col.as_object_mut().unwrap().remove("synonyms");
    let bare = dir.path().join("acme.json");
    std::fs::write(&bare, serde_json::to_string(&m).unwrap()).unwrap();

    let server = MockServer::start(script());
    let without = support::ask_traced(&server.url(), bare.to_str().unwrap(), DB, Q, &[]);
    let prompt = query_view_prompt(&server);
    assert!(!prompt.contains(HINT), "{prompt}");
    assert_ne!(rows_of(&without.json()), gold);

    let (with, _, prompt) = ask(&[]);
    assert!(prompt.contains(HINT), "{prompt}");
    assert_eq!(rows_of(&with), gold);
}
