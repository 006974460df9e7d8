//! `COUNT(*)` as a count of the table the question counts (issue 23;
//! `check::counted`, `--count-names`, on by default since session 17).
//! End to end through `lucy ask` with a scripted OpenAI-compatible mock on
//! 127.0.0.1, on ACME's curated model and data
//! (../shared/benchmarks/acme/acme_small.sqlite): MatchTables keeps Policy
//! and Claim, so the view holds a policy once per claim against it, and
//! QueryView writes `COUNT(*)` for "how many policies".

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{rows_of, rule, sqlite_rows};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/acme.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/benchmarks/acme/acme_small.sqlite");
const Q: &str = "How many policies with a claim are there for each policy status code?";

/// The policies with a claim against them, per status code: the join the
/// view makes (Policy, its coverage details, their claim coverages, the
/// claims), each policy counted once.
const GOLD: &str = "SELECT p.Status_Code, COUNT(DISTINCT p.Policy_Identifier) FROM Policy p \
    JOIN Policy_Coverage_Detail d ON d.Policy_Identifier = p.Policy_Identifier \
    JOIN Claim_Coverage cc ON cc.Policy_Coverage_Detail_Identifier = d.Policy_Coverage_Detail_Identifier \
    JOIN Claim c ON c.Claim_Identifier = cc.Claim_Identifier GROUP BY p.Status_Code";

fn script() -> Script {
    Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"Policy\", \"Claim\"]"]))
        .rule(rule(&["is part of a star"], &["[]"]))
        .rule(rule(&["JSON schema of the table"], &["[\"Status_Code\"]"]))
        .rule(rule(
            &["I created a view table lucy_view"],
            &["SELECT Policy_Status_Code, COUNT(*) FROM lucy_view GROUP BY Policy_Status_Code"],
        ))
}

/// `lucy --json ask` with `extra` flags, and its trace.
fn ask(extra: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let server = MockServer::start(script());
    let a = support::ask_traced(&server.url(), MODEL, DB, Q, extra);
    (a.json(), a.trace())
}

#[test]
fn count_star_counts_the_policies_the_question_counts() {
    assert!(std::path::Path::new(DB).is_file(), "{DB} is missing: ../shared sits beside the clone");
    let gold = sqlite_rows(DB, GOLD);
    assert!(!gold.is_empty());

    // Off: the SQL runs as written and counts a policy once per claim.
    let (off, t) = ask(&["--count-names", "off"]);
    assert_ne!(rows_of(&off), gold, "the data must show a difference");
    assert!(t["query_view"]["attempts"][0].get("counted").is_none());

    // On (the default): COUNT(*) counts Policy's rows, the gold numbers.
    let (on, t) = ask(&[]);
    assert_eq!(rows_of(&on), gold);
    let note = &t["query_view"]["attempts"][0]["counted"];
    assert_eq!(note["instance"], "Policy", "{note}");
    assert_eq!(note["key"], "Policy_Policy_Identifier", "{note}");
    assert!(on["sql"].as_str().unwrap().contains("COUNT(DISTINCT Policy_Policy_Identifier)"), "{on}");
    let (explicit, _) = ask(&["--count-names", "on"]);
    assert_eq!(rows_of(&explicit), gold);
}

#[test]
fn explain_names_the_rewrite() {
    let (_, t) = ask(&[]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    std::fs::write(&path, t.to_string()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(["explain", path.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("COUNT(*) counts Policy rows"), "{text}");
    assert!(text.contains("(--count-names on)"), "{text}");
}
