use super::*;

/// A SQLite file built from `sql`, and its directory (kept alive).
fn sqlite_db(sql: &str) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(sql).unwrap();
    drop(conn);
    (dir, Database::Sqlite(path))
}

fn model(v: serde_json::Value) -> DbModel {
    crate::model::parse(&v.to_string(), None).expect("test model parses")
}

/// LOCATION ← DATACENTER.loc_id, PAYMENT / PAYAMOUNT ← INVOICE.pay_id.
fn shop() -> DbModel {
    model(serde_json::json!({
        "name": "shop",
        "tables": [
            {"name": "LOCATION", "primary_key": ["id"], "columns": [{"name": "id", "type": "INTEGER"}]},
            {"name": "DATACENTER", "primary_key": ["id"], "columns": [{"name": "id", "type": "INTEGER"}, {"name": "loc_id", "type": "INTEGER"}]},
            {"name": "PAYMENT", "primary_key": ["id"], "columns": [{"name": "id", "type": "INTEGER"}]},
            {"name": "PAYAMOUNT", "primary_key": ["id"], "columns": [{"name": "id", "type": "INTEGER"}]},
            {"name": "INVOICE", "primary_key": ["id"], "columns": [{"name": "id", "type": "INTEGER"}, {"name": "pay_id", "type": "INTEGER"}]}
        ],
        "relationships": []
    }))
}

const SHOP: &str = "
    CREATE TABLE LOCATION (id INTEGER PRIMARY KEY);
    CREATE TABLE DATACENTER (id INTEGER PRIMARY KEY, loc_id INTEGER);
    CREATE TABLE PAYMENT (id INTEGER PRIMARY KEY);
    CREATE TABLE PAYAMOUNT (id INTEGER PRIMARY KEY);
    CREATE TABLE INVOICE (id INTEGER PRIMARY KEY, pay_id INTEGER);
    INSERT INTO LOCATION VALUES (1), (2), (3);
    INSERT INTO PAYMENT VALUES (1), (2);
    INSERT INTO PAYAMOUNT VALUES (1), (2), (3), (4), (5);
";

#[test]
fn included_values_confirm_and_a_failing_inclusion_falls_to_the_next_name() {
    let (_d, db) = sqlite_db(&format!(
        "{SHOP}
        INSERT INTO DATACENTER VALUES (1, 1), (2, 1), (3, NULL), (4, 3);
        -- pay_id 5 is no PAYMENT: the names' first choice fails, PAYAMOUNT holds every value.
        INSERT INTO INVOICE VALUES (1, 1), (2, 5);"
    ));
    let out = suggest_checked(&shop(), &db, &InclusionBounds::default()).unwrap();
    let got: Vec<(&str, &str, &str)> =
        out.proposals.iter().map(|p| (p.value.from.as_str(), p.value.to.as_str(), p.reason.as_str())).collect();
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(
        got[0],
        (
            "DATACENTER",
            "LOCATION",
            "names: DATACENTER.loc_id ~ LOCATION.id (loc abbreviates LOCATION); values: 3 of 3 non-null loc_id values found in LOCATION.id"
        )
    );
    assert_eq!((got[1].0, got[1].1), ("INVOICE", "PAYAMOUNT"));
    assert_eq!(out.rejected.len(), 1);
    assert_eq!(out.rejected[0].0.to, "PAYMENT");
    assert_eq!(out.rejected[0].1, "values: 1 of 2 non-null pay_id values not found in PAYMENT.id");
    // DATACENTER declares another key: unique values alone do not make it 1:1.
    assert!(out.proposals.iter().all(|p| p.value.cardinality == Cardinality::ManyToOne));
    assert!(out.unchecked.is_empty());
}

#[test]
fn a_failing_inclusion_rejects() {
    let (_d, db) = sqlite_db(&format!(
        "{SHOP}
        INSERT INTO DATACENTER VALUES (1, 1), (2, 9);
        INSERT INTO INVOICE VALUES (1, 6);"
    ));
    let out = suggest_checked(&shop(), &db, &InclusionBounds::default()).unwrap();
    assert!(out.proposals.is_empty(), "{:?}", out.proposals);
    assert_eq!(out.rejected.len(), 3);
}

#[test]
fn an_empty_column_is_no_evidence() {
    let (_d, db) = sqlite_db(&format!(
        "{SHOP}
        INSERT INTO DATACENTER VALUES (1, NULL), (2, NULL);"
    ));
    let out = suggest_checked(&shop(), &db, &InclusionBounds::default()).unwrap();
    let reasons: Vec<&str> = out.proposals.iter().map(|p| p.reason.as_str()).collect();
    assert_eq!(
        reasons,
        [
            "names: DATACENTER.loc_id ~ LOCATION.id (loc abbreviates LOCATION); values: no evidence (loc_id is NULL in all 2 rows of DATACENTER)",
            "names: INVOICE.pay_id ~ PAYMENT.id (pay abbreviates PAYMENT); values: no evidence (INVOICE has no rows)",
        ]
    );
    assert!(out.rejected.is_empty());
}

#[test]
fn an_inferred_key_must_be_unique_and_unique_values_make_a_subtype_one_to_one() {
    let m = model(serde_json::json!({
        "name": "t",
        "tables": [
            {"name": "Party", "columns": [{"name": "Party_Identifier", "type": "INTEGER"}]},
            // No key of its own: a subtype keyed by Party's key.
            {"name": "Person", "columns": [{"name": "Party_Identifier", "type": "INTEGER"}, {"name": "Nickname", "type": "TEXT"}]},
            // Its own key: unique Party_Identifier values are a coincidence of the rows at hand.
            {"name": "Visit", "columns": [{"name": "Visit_Identifier", "type": "INTEGER"}, {"name": "Party_Identifier", "type": "INTEGER"}]},
            {"name": "Detail", "columns": [{"name": "Detail_Identifier", "type": "INTEGER"}]},
            {"name": "Amount", "columns": [{"name": "Detail_Identifier", "type": "INTEGER"}]}
        ],
        "relationships": []
    }));
    let (_d, db) = sqlite_db(
        "
        CREATE TABLE Party (Party_Identifier INTEGER);
        CREATE TABLE Person (Party_Identifier INTEGER, Nickname TEXT);
        CREATE TABLE Visit (Visit_Identifier INTEGER, Party_Identifier INTEGER);
        CREATE TABLE Detail (Detail_Identifier INTEGER);
        CREATE TABLE Amount (Detail_Identifier INTEGER);
        INSERT INTO Party VALUES (1), (2), (3);
        INSERT INTO Person VALUES (1, 'a'), (3, 'b');
        INSERT INTO Visit VALUES (10, 1), (11, 2);
        -- two versions of detail 1: Detail_Identifier alone is no key
        INSERT INTO Detail VALUES (1), (1), (2);
        INSERT INTO Amount VALUES (1), (2);",
    );
    let out = suggest_checked(&m, &db, &InclusionBounds::default()).unwrap();
    let got: Vec<(&str, &str, Cardinality)> =
        out.proposals.iter().map(|p| (p.value.from.as_str(), p.value.to.as_str(), p.value.cardinality)).collect();
    assert_eq!(got, [("Person", "Party", Cardinality::OneToOne), ("Visit", "Party", Cardinality::ManyToOne)]);
    assert_eq!(
        out.proposals[0].reason,
        "names: Person.Party_Identifier ~ Party.Party_Identifier (the key's name; key inferred from its name); values: 2 of 2 non-null Party_Identifier values found in Party.Party_Identifier; Party.Party_Identifier unique (3 rows); 1:1: its values are unique in Person, which has no key of its own"
    );
    assert_eq!(out.rejected.len(), 1);
    assert_eq!(out.rejected[0].1, "values: Detail.Detail_Identifier is no key: 2 distinct non-null values in 3 rows");
}

#[test]
fn a_spent_budget_or_a_missing_table_leaves_candidates_unchecked() {
    let (_d, db) = sqlite_db("CREATE TABLE LOCATION (id INTEGER PRIMARY KEY);");
    let out = suggest_checked(&shop(), &db, &InclusionBounds::default()).unwrap();
    assert_eq!(out.proposals.len(), 2);
    assert!(
        out.proposals[0].reason.contains("values: not checked (") && out.proposals[0].reason.contains("DATACENTER")
    );
    assert_eq!(out.unchecked.len(), 2);

    let (_d, db) = sqlite_db(SHOP);
    let none = InclusionBounds { query_timeout: Duration::from_secs(1), budget: Duration::ZERO };
    let out = suggest_checked(&shop(), &db, &none).unwrap();
    assert_eq!(out.queries, 0);
    assert!(out.proposals.iter().all(|p| p.reason.ends_with("values: not checked (the budget of 0 s is spent)")));

    // A missing database file is an error, before any query.
    let gone = Database::Sqlite("/nonexistent/x.sqlite".into());
    let e = suggest_checked(&shop(), &gone, &InclusionBounds::default()).unwrap_err();
    assert!(e.to_string().contains("no such SQLite database file"), "{e}");
}

#[test]
fn counts_from_every_engine() {
    assert_eq!(count_of(&SqlValue::Integer(4)), Some(4));
    assert_eq!(count_of(&SqlValue::Text("12".into())), Some(12));
    assert_eq!(count_of(&SqlValue::Text("12.0".into())), Some(12));
    assert_eq!(count_of(&SqlValue::Null), Some(0));
    assert_eq!(count_of(&SqlValue::Real(3.0)), Some(3));
    assert_eq!(count_of(&SqlValue::Text("x".into())), None);
}
