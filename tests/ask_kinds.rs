//! The kinds of a star's root and the core tables a question names, read
//! without the LLM (issue 23; `link::kinds`, `link::named`):
//! `--kind-names on` keeps a subtype child the question names although
//! the pattern-children answer left it out, `--kind-instance on` makes a
//! single chosen marker kind (a table holding only its key, ACME's
//! `Premium`) the instance `ROOT@CHILD`, so the view holds only the root's
//! rows of that kind, and `--table-names on` keeps a core table the
//! question names that the vote left out. End to end through `lucy ask`
//! with a scripted OpenAI-compatible mock on 127.0.0.1, on ACME's curated
//! model and data (../shared/benchmarks/acme/acme_small.sqlite): the levers
//! change the answer to the gold rows.

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{rows_of, rule, sqlite_rows};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/acme.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/benchmarks/acme/acme_small.sqlite");
const Q: &str = "Show the sum of premiums for every policy number.";

/// A model that lists Policy_Amount and Policy, leaves `Premium` out of
/// Policy_Amount's children, and sums whichever amount column the view has.
fn script() -> Script {
    Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"Policy_Amount\", \"Policy\"]"]))
        .rule(rule(&["The table Policy_Amount is part of a star"], &["[\"Policy_Amount\"]"]))
        .rule(rule(&["JSON schema of the table"], &["[\"Policy_Number\"]"]))
        .rule(rule(
            &["I created a view table lucy_view", "Policy_Amount_Premium_Policy_Amount ("],
            &["SELECT Policy_Policy_Number, SUM(Policy_Amount_Premium_Policy_Amount) FROM lucy_view GROUP BY Policy_Policy_Number"],
        ))
        .rule(rule(
            &["I created a view table lucy_view"],
            &["SELECT Policy_Policy_Number, SUM(Policy_Amount_Policy_Amount) FROM lucy_view GROUP BY Policy_Policy_Number"],
        ))
}

/// The relevant tables of an answer, sorted.
fn tables(v: &serde_json::Value) -> Vec<String> {
    let mut t: Vec<String> = v["tables"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect();
    t.sort();
    t
}

/// `lucy --json ask` of [`Q`] with `extra` flags: its output, its trace and the mock.
fn ask(extra: &[&str]) -> (serde_json::Value, String, MockServer) {
    ask_with(script(), Q, extra)
}

/// `lucy --json ask` of `q` on the mock `script` with `extra` flags.
fn ask_with(script: Script, q: &str, extra: &[&str]) -> (serde_json::Value, String, MockServer) {
    let server = MockServer::start(script);
    let a = support::ask_traced(&server.url(), MODEL, DB, q, extra);
    (a.json(), a.trace_text(), server)
}

#[test]
fn a_named_marker_kind_filters_the_view_to_its_rows() {
    assert!(std::path::Path::new(DB).is_file(), "{DB} is missing: ../shared sits beside the clone");
    let gold = sqlite_rows(
        DB,
        "SELECT p.Policy_Number, SUM(pa.Policy_Amount) FROM Policy p \
         JOIN Policy_Amount pa ON pa.Policy_Identifier = p.Policy_Identifier \
         JOIN Premium pr ON pr.Policy_Amount_Identifier = pa.Policy_Amount_Identifier \
         GROUP BY p.Policy_Number",
    );
    assert!(!gold.is_empty());

    // Off: no Premium, every policy amount summed.
    let (off, _, _) = ask(&["--kind-names", "off", "--kind-instance", "off"]);
    assert_eq!(tables(&off), ["Policy", "Policy_Amount"]);
    assert_ne!(rows_of(&off), gold, "without the levers the sums include amounts that are not premiums");

    // --kind-names alone: Premium kept, joined by a LEFT JOIN branch; the
    // same SQL still sums every amount.
    let (named, trace, _) = ask(&["--kind-names", "on", "--kind-instance", "off"]);
    assert_eq!(tables(&named), ["Policy", "Policy_Amount", "Premium"]);
    assert!(trace.contains("--kind-names: the question names Premium: kept"), "{trace}");
    assert!(named["view"]["view_sql"].as_str().unwrap().contains("LEFT JOIN Premium"));

    // Both: the view holds the premium rows only, and the answer is gold.
    let (both, trace, server) = ask(&["--kind-names", "on", "--kind-instance", "on"]);
    assert_eq!(tables(&both), ["Policy", "Policy_Amount@Premium.Policy_Amount_Identifier", "Premium"]);
    let view_sql = both["view"]["view_sql"].as_str().unwrap();
    assert!(view_sql.contains("INNER JOIN Premium"), "{view_sql}");
    assert_eq!(rows_of(&both), gold);
    assert!(trace.contains("--kind-instance: Premium holds only Policy_Amount's key"), "{trace}");
    // No call more than without the levers: the match, the star's prompt
    // and QueryView (the default view shows every column of its tables, so
    // no attribute prompt is asked, Premium's included).
    assert_eq!(server.chat_requests().len(), 3);
}

/// A model that lists Claim alone for a question that says "policy", and
/// reads the policy number when the view has it.
fn claims_script() -> Script {
    Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"Claim\"]"]))
        .rule(rule(&["JSON schema of the table"], &["[\"Company_Claim_Number\", \"Policy_Number\"]"]))
        .rule(rule(
            &["I created a view table lucy_view", "Policy_Policy_Number ("],
            &["SELECT DISTINCT Claim_Company_Claim_Number, Policy_Policy_Number FROM lucy_view"],
        ))
        .rule(rule(
            &["I created a view table lucy_view"],
            &["SELECT DISTINCT Claim_Company_Claim_Number FROM lucy_view"],
        ))
}

#[test]
fn a_core_table_the_question_names_joins_the_relevant_tables() {
    let q = "List the claim number and policy number of every claim.";
    let run = |extra: &[&str]| {
        let (v, trace, server) = ask_with(claims_script(), q, extra);
        (v, trace, server.chat_requests().len())
    };
    // Off: the vote's Claim alone; the SQL cannot read a policy number.
    let (off, _, calls_off) = run(&["--table-names", "off"]);
    assert_eq!(tables(&off), ["Claim"]);
    assert!(!off["sql"].as_str().unwrap().contains("Policy_Policy_Number"), "{off}");
    // On (the default since session 17): "policy" names Policy, which is
    // kept and joined at no call (a plain table's only prompt is its
    // attribute prompt, not asked for the default view of every column);
    // the answer reads its number.
    let (on, trace, calls_on) = run(&[]);
    let (explicit, _, _) = run(&["--table-names", "on"]);
    assert_eq!(explicit["sql"], on["sql"]);
    assert!(tables(&on).contains(&"Policy".to_string()), "{on}");
    assert!(trace.contains("--table-names: the question names Policy: kept"), "{trace}");
    assert_eq!(calls_on, calls_off);
    assert!(on["sql"].as_str().unwrap().contains("Policy_Policy_Number"), "{on}");
    let gold = sqlite_rows(
        DB,
        "SELECT DISTINCT c.Company_Claim_Number, p.Policy_Number FROM Policy p \
         JOIN Policy_Coverage_Detail d ON d.Policy_Identifier = p.Policy_Identifier \
         JOIN Claim_Coverage cc ON cc.Policy_Coverage_Detail_Identifier = d.Policy_Coverage_Detail_Identifier \
         AND cc.Effective_Date = d.Effective_Date \
         JOIN Claim c ON c.Claim_Identifier = cc.Claim_Identifier",
    );
    assert!(!gold.is_empty());
    assert_eq!(rows_of(&on), gold);
}
