//! Mending text filters by the database's values: respelled within the
//! column, moved to the one other column holding the literal, and every
//! case left alone.

use super::*;

const V: &str = "lucy_view";

fn col(alias: &str, values: &[&str]) -> ValueColumn {
    ValueColumn { alias: alias.into(), values: values.iter().map(|s| s.to_string()).collect(), numeric: false }
}

fn columns() -> Vec<ValueColumn> {
    vec![
        col("countries_CountryName", &["france", "germany", "usa"]),
        col("countries_Code", &["1", "2", "3"]),
        ValueColumn { alias: "countries_Continent".into(), values: Vec::new(), numeric: true },
        col("Claim_Status", &["Closed", "Open"]),
        col("src_City", &["Aberdeen", "Ashley"]),
        col("dst_City", &["Aberdeen", "Ashley"]),
        col("Role_Code", &["AG", "PH"]),
        col("Party_Type", &["Organization", "Person"]),
    ]
}

fn fold(s: &str) -> String {
    s.to_lowercase()
}

fn run(sql: &str, question: &str) -> Option<ValueNote> {
    rewrite(sql, V, &columns(), question, &fold, Dialect::Sqlite).unwrap()
}

#[test]
fn a_literal_of_another_column_the_question_holds_moves_there() {
    let n = run(
        "SELECT COUNT(DISTINCT car_makers_Id) FROM lucy_view WHERE countries_Continent = 'France'",
        "How many car makers are there in france?",
    )
    .unwrap();
    assert_eq!(
        n.rewritten,
        "SELECT COUNT(DISTINCT car_makers_Id) FROM lucy_view WHERE countries_CountryName = 'france'"
    );
    assert_eq!(n.changes, vec!["countries_Continent = 'France' → countries_CountryName = 'france'"]);
    assert!(n.describe().contains("countries_CountryName = 'france'"));
}

#[test]
fn a_literal_in_other_case_is_respelled_as_stored() {
    let n = run(
        "SELECT T1.Claim_Number FROM lucy_view AS T1 WHERE T1.Claim_Status = 'closed' AND T1.Claim_Year > 2019",
        "Which claims are closed?",
    )
    .unwrap();
    assert_eq!(
        n.rewritten,
        "SELECT T1.Claim_Number FROM lucy_view AS T1 WHERE T1.Claim_Status = 'Closed' AND T1.Claim_Year > 2019"
    );
}

#[test]
fn a_value_of_the_column_is_left_alone() {
    assert!(run("SELECT * FROM lucy_view WHERE Claim_Status = 'Open'", "open claims").is_none());
    assert!(run("SELECT * FROM lucy_view WHERE 'PH' = Role_Code", "policy holders").is_none());
}

#[test]
fn a_literal_two_columns_hold_is_ambiguous() {
    // The source's and the destination's city both hold Aberdeen.
    assert!(run("SELECT * FROM lucy_view WHERE Party_Type = 'Aberdeen'", "flights from Aberdeen").is_none());
}

#[test]
fn a_literal_the_question_does_not_hold_does_not_move() {
    // 'PH' is a Role_Code, but the question says "policy holders".
    assert!(run("SELECT * FROM lucy_view WHERE Party_Type = 'PH'", "Return policy holders").is_none());
    // Held only inside a longer word: not the question's word.
    assert!(run("SELECT * FROM lucy_view WHERE Party_Type = 'usa'", "the usage of each party").is_none());
}

#[test]
fn a_literal_no_column_holds_is_left_alone() {
    assert!(run("SELECT * FROM lucy_view WHERE Claim_Status = 'pending'", "pending claims").is_none());
}

#[test]
fn columns_without_complete_values_are_never_touched() {
    // countries_Region is not in the columns (not text, or sampled).
    assert!(run("SELECT * FROM lucy_view WHERE countries_Region = 'france'", "cars in france").is_none());
}

#[test]
fn in_lists_move_only_together() {
    let n = run(
        "SELECT * FROM lucy_view WHERE countries_Continent IN ('France', 'Germany')",
        "makers in france or germany",
    )
    .unwrap();
    assert_eq!(n.rewritten, "SELECT * FROM lucy_view WHERE countries_CountryName IN ('france', 'germany')");
    // One literal moves, the other is a value where it is: left alone.
    assert!(run("SELECT * FROM lucy_view WHERE countries_Continent IN ('France', '1')", "france and 1").is_none());
    assert!(run("SELECT * FROM lucy_view WHERE countries_Code IN ('France', '1')", "france and 1").is_none());
    let n = run("SELECT * FROM lucy_view WHERE Claim_Status IN ('open', 'Closed')", "claims").unwrap();
    assert_eq!(n.rewritten, "SELECT * FROM lucy_view WHERE Claim_Status IN ('Open', 'Closed')");
}

#[test]
fn negations_likes_numbers_and_other_tables_are_left_alone() {
    let q = "makers in france";
    assert!(run("SELECT * FROM lucy_view WHERE countries_Continent <> 'France'", q).is_none());
    assert!(run("SELECT * FROM lucy_view WHERE countries_Continent NOT IN ('France')", q).is_none());
    assert!(run("SELECT * FROM lucy_view WHERE countries_Continent LIKE 'France'", q).is_none());
    assert!(run("SELECT * FROM lucy_view WHERE countries_Continent = 4", q).is_none());
    assert!(run("SELECT * FROM lucy_view WHERE countries_Continent = 'France' OR Claim_Status = 'Open'", q).is_none());
    assert!(run("SELECT * FROM cars WHERE countries_Continent = 'France'", q).is_none());
    assert!(run(
        "SELECT * FROM lucy_view AS a JOIN lucy_view AS b ON a.x = b.x WHERE a.countries_Continent = 'France'",
        q
    )
    .is_none());
}

#[test]
fn filters_inside_subqueries_over_the_view_are_mended_too() {
    let n = run(
        "SELECT * FROM lucy_view WHERE countries_CountryName IN (SELECT countries_CountryName FROM lucy_view WHERE Claim_Status = 'open')",
        "open ones",
    )
    .unwrap();
    assert!(n.rewritten.ends_with("WHERE Claim_Status = 'Open')"), "{}", n.rewritten);
}

#[test]
fn a_numeric_column_holds_numbers_only() {
    assert!(run("SELECT * FROM lucy_view WHERE countries_Continent = '2'", "makers in france").is_none());
    assert!(run("SELECT * FROM lucy_view WHERE countries_Continent = '2.5'", "makers in france").is_none());
}

#[test]
fn no_columns_no_parse() {
    assert!(rewrite("not sql at all", V, &[], "q", &fold, Dialect::Sqlite).unwrap().is_none());
}
