//! The rewrites of QueryView's SQL read from the question's words (issue
//! 23; on by default since session 20): a filter on an identifying column
//! with a value the question never names is dropped (`--entity-literals`),
//! and an aggregate over every row is grouped by the column the question
//! asks "by" (`--by-groups`). End to end through `lucy ask` with a
//! scripted OpenAI-compatible mock on 127.0.0.1, on ACME's curated model
//! and data: QueryView answers "How many claims have been placed by policy
//! number?" as the embedded model did in session 15, with the claim
//! number's description example as a policy number filter.

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{rows_of, rule, run_mock, sqlite_rows};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/acme.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/benchmarks/acme/acme_small.sqlite");
const Q: &str = "How many claims have been placed by policy number?";
const ANSWER: &str =
    "SELECT COUNT(DISTINCT Claim_Claim_Identifier) FROM lucy_view WHERE Policy_Policy_Number = '12312701'";

/// The claims against each policy (Policy, its coverage details, their
/// claim coverages, the claims), per policy number.
const GOLD: &str = "SELECT p.Policy_Number, COUNT(DISTINCT c.Claim_Identifier) FROM Policy p \
    JOIN Policy_Coverage_Detail d ON d.Policy_Identifier = p.Policy_Identifier \
    JOIN Claim_Coverage cc ON cc.Policy_Coverage_Detail_Identifier = d.Policy_Coverage_Detail_Identifier \
    JOIN Claim c ON c.Claim_Identifier = cc.Claim_Identifier GROUP BY p.Policy_Number";

fn script() -> Script {
    Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"Policy\", \"Claim\"]"]))
        .rule(rule(&["is part of a star"], &["[]"]))
        .rule(rule(&["JSON schema of the table"], &["[\"Policy_Number\"]"]))
        .rule(rule(&["I created a view table lucy_view"], &[ANSWER]))
}

#[test]
fn an_invented_filter_is_dropped_and_the_by_phrase_groups() {
    assert!(std::path::Path::new(DB).is_file(), "{DB} is missing: ../shared sits beside the clone");
    let gold = sqlite_rows(DB, GOLD);
    assert!(!gold.is_empty());

    // Both off: the SQL runs as written; no policy has that number.
    let server = MockServer::start(script());
    let off = support::ask_traced(&server.url(), MODEL, DB, Q, &["--entity-literals", "off", "--by-groups", "off"]);
    assert_eq!(rows_of(&off.json()), [vec!["0".to_string()]].into_iter().collect());
    let a = &off.trace()["query_view"]["attempts"][0];
    assert!(a.get("literals").is_none() && a.get("grouped").is_none(), "{a}");

    // Only the filter dropped: one count over every policy.
    let one = support::ask_traced(&server.url(), MODEL, DB, Q, &["--by-groups", "off"]);
    assert_eq!(rows_of(&one.json()).len(), 1);
    assert_ne!(rows_of(&one.json()), gold);

    // The defaults: the filter dropped, one count per policy number.
    let on = support::ask_traced(&server.url(), MODEL, DB, Q, &[]);
    assert_eq!(rows_of(&on.json()), gold);
    let t = on.trace();
    let a = &t["query_view"]["attempts"][0];
    assert_eq!(a["literals"]["dropped"][0], "Policy_Policy_Number = '12312701'", "{a}");
    assert_eq!(a["grouped"]["columns"][0], "Policy_Policy_Number", "{a}");
    assert_eq!(a["grouped"]["phrases"][0], "policy number", "{a}");
    let sql = t["query_view"]["sql"].as_str().unwrap();
    assert!(sql.contains("GROUP BY Policy_Policy_Number") && !sql.contains("12312701"), "{sql}");
    let explained = on.explain();
    assert!(explained.contains("dropped Policy_Policy_Number = '12312701'"), "{explained}");
    assert!(explained.contains("grouped by Policy_Policy_Number"), "{explained}");

    // The human output says what lucy changed, before the SQL.
    let out = run_mock(&["ask", "--model", MODEL, Q, "--samples", "1", "--execute", DB], &server.url());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("-- SQL rewritten: dropped Policy_Policy_Number = '12312701'"), "{text}");
    assert!(text.contains("-- SQL rewritten: grouped by Policy_Policy_Number"), "{text}");
}
