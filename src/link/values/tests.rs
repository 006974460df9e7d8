//! Matching and prompt lines over a hand-made index (no database).

use super::matching::{literals, words};
use super::*;

const MODEL: &str = r#"{
  "name": "t",
  "tables": [
    {"name": "Party_Role", "primary_key": ["Party_Role_Code"], "columns": [
      {"name": "Party_Role_Code", "type": "varchar(5)"},
      {"name": "Party_Role_Name", "type": "varchar(100)"}]},
    {"name": "Agreement_Party_Role", "primary_key": ["Agreement_Identifier"], "columns": [
      {"name": "Agreement_Identifier", "type": "int"},
      {"name": "Party_Role_Code", "type": "varchar(5)"}]},
    {"name": "DATACENTER", "primary_key": ["id"], "columns": [
      {"name": "id", "type": "INTEGER"},
      {"name": "name", "type": "TEXT"},
      {"name": "city", "type": "TEXT"}]}
  ],
  "relationships": [
    {"from": "Agreement_Party_Role", "to": "Party_Role", "cardinality": "M:1",
     "on": [["Party_Role_Code", "Party_Role_Code"]]}
  ]
}"#;

fn graph() -> SchemaGraph {
    SchemaGraph::new(crate::model::parse(MODEL, None).unwrap()).unwrap()
}

fn col(table: &str, column: &str, values: &[&str]) -> ColumnValues {
    ColumnValues {
        table: table.into(),
        column: column.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
        complete: true,
    }
}

fn index() -> ValueIndex {
    ValueIndex {
        database: "test".into(),
        columns: vec![
            col("Party_Role", "Party_Role_Code", &["AG", "PH", "UW"]),
            col("Party_Role", "Party_Role_Name", &["Agent", "PolicyHolder", "Underwriter"]),
            col("Agreement_Party_Role", "Party_Role_Code", &["AG", "PH"]),
            col(
                "DATACENTER",
                "name",
                &["dev-apac-2", "dev-east-1", "dev-eu-central", "prod-east-1", "staging-apac", "development"],
            ),
            col("DATACENTER", "city", &["Zürich", "São Paulo", "Montréal", "Paris"]),
        ],
        codes: vec![CodePairs {
            table: "Party_Role".into(),
            code: "Party_Role_Code".into(),
            name: "Party_Role_Name".into(),
            pairs: vec![
                ["AG".into(), "Agent".into()],
                ["PH".into(), "PolicyHolder".into()],
                ["UW".into(), "Underwriter".into()],
            ],
        }],
        ..ValueIndex::default()
    }
}

/// `(table.column, value, kind, means)` of every match.
fn hits(q: &str) -> Vec<(String, String, MatchKind, Option<String>)> {
    let g = graph();
    match_question(&g, &index(), q)
        .into_iter()
        .map(|m| {
            let (t, c) = g.column_names(m.column);
            (format!("{t}.{c}"), m.value, m.kind, m.means)
        })
        .collect()
}

fn has(h: &[(String, String, MatchKind, Option<String>)], column: &str, value: &str, kind: MatchKind) -> bool {
    h.iter().any(|(c, v, k, _)| c == column && v == value && *k == kind)
}

#[test]
fn folding_and_words() {
    assert_eq!(fold("Société GÉNÉRALE Zürich Ærø straße"), "societe generale zurich aero strasse");
    // Decomposed accents (e + combining acute) fold the same way.
    assert_eq!(fold("Montre\u{301}al"), "montreal");
    assert_eq!(words("PolicyHolder"), vec!["policy", "holder"]);
    assert_eq!(words("dev-eu-central_2"), vec!["dev", "eu", "central", "2"]);
    assert_eq!(words("Montre\u{301}al"), vec!["montreal"]);
    assert_eq!(literals("names starting with 'dev'. Output the client's \"São Paulo\" rows"), vec!["dev", "sao paulo"]);
    assert!(literals("the client's and the agent's pools").is_empty());
}

#[test]
fn case_accents_and_plurals_match_exactly_or_closely() {
    // "agent" finds Agent, and the code beside it on both code columns.
    let h = hits("Which agent sold the most policies?");
    assert!(has(&h, "Party_Role.Party_Role_Name", "Agent", MatchKind::Exact), "{h:?}");
    for c in ["Party_Role.Party_Role_Code", "Agreement_Party_Role.Party_Role_Code"] {
        assert!(h.iter().any(|(x, v, _, m)| x == c && v == "AG" && m.as_deref() == Some("Agent")), "{c}: {h:?}");
    }
    // Plural, case, and a value written in camel case as two words.
    let h = hits("List the AGENTS and the policy holders");
    assert!(has(&h, "Party_Role.Party_Role_Name", "Agent", MatchKind::Fuzzy), "{h:?}");
    assert!(has(&h, "Party_Role.Party_Role_Name", "PolicyHolder", MatchKind::Fuzzy), "{h:?}");
    let h = hits("every policyholder");
    assert!(has(&h, "Party_Role.Party_Role_Name", "PolicyHolder", MatchKind::Exact), "{h:?}");
    // Accents on either side.
    let h = hits("datacenters in Zurich or in sao paulo or in MONTREAL");
    for v in ["Zürich", "São Paulo", "Montréal"] {
        assert!(has(&h, "DATACENTER.city", v, MatchKind::Exact), "{v}: {h:?}");
    }
    assert!(!h.iter().any(|(_, v, _, _)| v == "Paris"), "{h:?}");
    // A value that only starts with a question word is a prefix match and
    // brings no code.
    let h = hits("the loss ratio of each policy and agent");
    assert!(has(&h, "Party_Role.Party_Role_Name", "PolicyHolder", MatchKind::Prefix), "{h:?}");
    assert!(!h.iter().any(|(_, v, _, m)| v == "PH" && m.is_some()), "{h:?}");
    assert!(h.iter().any(|(_, v, _, m)| v == "AG" && m.as_deref() == Some("Agent")), "{h:?}");
    // A one-letter typo of a long word.
    let h = hits("claims of the underwritter");
    assert!(has(&h, "Party_Role.Party_Role_Name", "Underwriter", MatchKind::Fuzzy), "{h:?}");
}

#[test]
fn prefixes_of_literals_and_words() {
    let h = hits(
        "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.",
    );
    for v in ["dev-apac-2", "dev-east-1", "dev-eu-central", "development"] {
        assert!(has(&h, "DATACENTER.name", v, MatchKind::Prefix), "{v}: {h:?}");
    }
    assert!(!h.iter().any(|(_, v, _, _)| v.starts_with("prod") || v.starts_with("staging")), "{h:?}");
    // Unquoted, a prefix must end at a word boundary of the value.
    let h = hits("pools in dev datacenters");
    assert!(has(&h, "DATACENTER.name", "dev-east-1", MatchKind::Prefix), "{h:?}");
    assert!(!h.iter().any(|(_, v, _, _)| v == "development"), "{h:?}");
    // A literal equal to a value is exact; to a code, it brings the name.
    let h = hits("agreements with role 'PH' in 'prod-east-1'");
    assert!(has(&h, "DATACENTER.name", "prod-east-1", MatchKind::Exact), "{h:?}");
    assert!(h.iter().any(|(c, v, k, m)| c == "Agreement_Party_Role.Party_Role_Code"
        && v == "PH"
        && *k == MatchKind::Exact
        && m.as_deref() == Some("PolicyHolder")));
}

#[test]
fn short_and_common_words_do_not_match() {
    let mut idx = index();
    idx.columns.push(col("DATACENTER", "city", &["list", "the", "ag", "100", "Names"]));
    let g = graph();
    let m = match_question(&g, &idx, "List the names of the 100 datacenters ag");
    assert!(m.is_empty(), "{m:?}");
}

#[test]
fn prompt_lines() {
    let g = graph();
    let q = "Which agent works in datacenters starting with 'dev'?";
    let m = match_question(&g, &index(), q);
    let pr = g.table_id("Party_Role").unwrap();
    assert_eq!(table_notes(&g, &m, pr), vec!["Party_Role_Code: 'AG' = Agent", "Party_Role_Name: 'Agent'"]);
    let dc = g.table_id("DATACENTER").unwrap();
    assert_eq!(
        table_notes(&g, &m, dc),
        vec!["name: e.g. 'dev-apac-2', 'dev-east-1', 'development' (values starting with 'dev')"]
    );
    let view = [
        ViewColumn {
            alias: "DATACENTER_name".into(),
            table: "DATACENTER".into(),
            column: "name".into(),
            description: None,
            note: None,
        },
        ViewColumn {
            alias: "Agreement_Party_Role_Party_Role_Code".into(),
            table: "Agreement_Party_Role".into(),
            column: "Party_Role_Code".into(),
            description: None,
            note: None,
        },
    ];
    let lines = view_notes(&g, &m, &view);
    assert_eq!(
        lines,
        vec![
            "Agreement_Party_Role_Party_Role_Code: 'AG' = Agent",
            "DATACENTER_name: e.g. 'dev-apac-2', 'dev-east-1', 'development' (values starting with 'dev')"
        ]
    );
    // Nothing matched: no lines.
    assert!(view_notes(&g, &match_question(&g, &index(), "How many pools?"), &view).is_empty());
    assert_eq!(quoted("it's"), "'it''s'");
}

#[test]
fn text_types_and_code_names() {
    for t in ["TEXT", "varchar(100)", "CHARACTER VARYING", "char(1)", "nvarchar", "", "enum('a','b')", "citext"] {
        assert!(is_text_type(t), "{t}");
    }
    for t in ["INTEGER", "decimal(15,2)", "datetime", "BLOB", "varbinary(10)", "bytea", "DATE"] {
        assert!(!is_text_type(t), "{t}");
    }
    assert!(is_code_name("Party_Role_Code") && is_code_name("state_cd") && !is_code_name("name"));
}
