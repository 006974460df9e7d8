//! Dropping filters on an entity the question never names: what is
//! dropped, what is held by the question, and what is never touched.

use super::*;

const V: &str = "lucy_view";

fn entities() -> Vec<String> {
    ["Policy_Policy_Number", "Claim_Claim_Identifier", "CLIENT_name"].iter().map(|s| s.to_string()).collect()
}

fn run(sql: &str, question: &str) -> Option<LiteralNote> {
    rewrite(sql, V, &entities(), question, Dialect::Sqlite).unwrap()
}

#[test]
fn an_example_value_the_question_never_names_is_dropped() {
    let n = run(
        "SELECT COUNT(DISTINCT Claim_Claim_Identifier) FROM lucy_view WHERE Policy_Policy_Number = '12312701'",
        "How many claims have been placed by policy number?",
    )
    .unwrap();
    assert_eq!(n.dropped, vec!["Policy_Policy_Number = '12312701'"]);
    assert_eq!(n.rewritten, "SELECT COUNT(DISTINCT Claim_Claim_Identifier) FROM lucy_view");
    assert!(n.describe().contains("Policy_Policy_Number = '12312701'"));
}

#[test]
fn only_the_invented_conjunct_goes() {
    let n = run(
        "SELECT Policy_Policy_Number FROM lucy_view AS T1 WHERE T1.Policy_Policy_Number = 31003000336 AND (Claim_Claim_Identifier IS NOT NULL AND T1.Claim_Status = 'open')",
        "Return all the open policies by policy number",
    )
    .unwrap();
    assert_eq!(n.dropped, vec!["T1.Policy_Policy_Number = 31003000336"]);
    assert_eq!(
        n.rewritten,
        "SELECT Policy_Policy_Number FROM lucy_view AS T1 WHERE Claim_Claim_Identifier IS NOT NULL AND T1.Claim_Status = 'open'"
    );
}

#[test]
fn values_the_question_holds_stay() {
    for (sql, q) in [
        ("SELECT CLIENT_name FROM lucy_view WHERE CLIENT_name LIKE 'dev%'", "Clients with names starting with 'dev'"),
        ("SELECT CLIENT_name FROM lucy_view WHERE Policy_Policy_Number = 31003000336", "Who holds policy 31003000336?"),
        ("SELECT 1 FROM lucy_view WHERE CLIENT_name IN ('Acme', 'Zed')", "Are acme or zed clients?"),
        ("SELECT 1 FROM lucy_view WHERE 'ACME' = CLIENT_name", "Is Acme a client?"),
    ] {
        assert_eq!(run(sql, q), None, "{sql}");
    }
}

#[test]
fn other_columns_negations_and_non_literals_are_left_alone() {
    let q = "How many claims are there?";
    for sql in [
        // Not an entity column: a code, a status.
        "SELECT COUNT(*) FROM lucy_view WHERE Claim_Status_Code = 'closed'",
        // Negated or not a literal.
        "SELECT COUNT(*) FROM lucy_view WHERE Policy_Policy_Number <> '1'",
        "SELECT COUNT(*) FROM lucy_view WHERE Policy_Policy_Number NOT IN ('1')",
        "SELECT COUNT(*) FROM lucy_view WHERE Policy_Policy_Number = Claim_Claim_Identifier",
        "SELECT COUNT(*) FROM lucy_view WHERE Policy_Policy_Number IS NOT NULL",
        // Not the view alone.
        "SELECT COUNT(*) FROM lucy_view AS a JOIN lucy_view AS b ON a.x = b.x WHERE a.Policy_Policy_Number = '1'",
        // An OR is one conjunct that is no filter of this kind.
        "SELECT COUNT(*) FROM lucy_view WHERE Policy_Policy_Number = '1' OR CLIENT_name = 'x'",
    ] {
        assert_eq!(run(sql, q), None, "{sql}");
    }
}

#[test]
fn a_where_left_empty_goes_and_subqueries_are_read_too() {
    let n = run(
        "SELECT SUM(x) FROM (SELECT * FROM lucy_view WHERE CLIENT_name = 'Bob') AS lucy_view",
        "What is the total x?",
    )
    .unwrap();
    assert_eq!(n.rewritten, "SELECT SUM(x) FROM (SELECT * FROM lucy_view) AS lucy_view");
}

#[test]
fn entity_names_are_identifiers_numbers_and_names() {
    for c in ["Policy_Number", "claim_identifier", "CustomerId", "name", "Party_Name", "song_title"] {
        assert!(is_entity_name(c), "{c}");
    }
    for c in ["Party_Role_Code", "status", "amount", "Close_Date", "gender", "named_count"] {
        assert!(!is_entity_name(c), "{c}");
    }
}
