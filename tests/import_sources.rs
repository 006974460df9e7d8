//! SQLite introspection, BIRD tables.json import, and the
//! `lucy model import` command line.

mod support;

use std::path::{Path, PathBuf};

use lucy::model::import::{bird_tables_with_warnings, from_bird_tables, from_sqlite, sqlite_with_warnings};
use lucy::types::{Cardinality, DbModel, Relationship};
use support::run;

fn shared(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared").join(rel)
}

fn rel<'a>(m: &'a DbModel, from: &str, to: &str) -> Vec<&'a Relationship> {
    m.relationships.iter().filter(|r| r.from == from && r.to == to).collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<[String; 2]> {
    v.iter().map(|(a, b)| [a.to_string(), b.to_string()]).collect()
}

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shop.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE customer (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
         CREATE TABLE product (sku TEXT, variant INTEGER, price REAL, PRIMARY KEY (variant, sku));
         CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customer(id), placed DATE);
         CREATE TABLE line (order_id INTEGER NOT NULL REFERENCES orders, sku TEXT, variant INTEGER, qty INTEGER,
                            PRIMARY KEY (order_id, sku, variant),
                            FOREIGN KEY (variant, sku) REFERENCES product (variant, sku));
         CREATE TABLE loyalty (customer_id INTEGER UNIQUE REFERENCES customer(id), points INTEGER);
         CREATE TABLE dangling (x INTEGER REFERENCES nowhere(id));
         CREATE VIEW v AS SELECT * FROM customer;",
    )
    .unwrap();
    (dir, path)
}

#[test]
fn sqlite_introspection_reads_keys_in_order() {
    let (_dir, path) = temp_db();
    let imp = sqlite_with_warnings(&path, None).unwrap();
    let m = &imp.model;
    assert_eq!(m.name, "shop");
    let names: Vec<&str> = m.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["customer", "product", "orders", "line", "loyalty", "dangling"], "views are not tables");
    // PK order is the key order, not the column order.
    assert_eq!(m.table("product").unwrap().primary_key, ["variant", "sku"]);
    assert_eq!(m.table("line").unwrap().primary_key, ["order_id", "sku", "variant"]);
    let cust = m.table("customer").unwrap();
    assert_eq!(cust.column("name").unwrap().sql_type, "TEXT");
    assert!(!cust.column("name").unwrap().nullable);
    assert_eq!(rel(m, "orders", "customer")[0].cardinality, Cardinality::ManyToOne);
    // Composite FK grouped by id; REFERENCES without columns is the PK.
    assert_eq!(rel(m, "line", "product")[0].on, pairs(&[("variant", "variant"), ("sku", "sku")]));
    assert_eq!(rel(m, "line", "orders")[0].on, pairs(&[("order_id", "id")]));
    // A UNIQUE FK column is 1:1.
    assert_eq!(rel(m, "loyalty", "customer")[0].cardinality, Cardinality::OneToOne);
    assert!(imp.warnings.iter().any(|w| w.to_string().contains("nowhere")), "{:#?}", imp.warnings);
    lucy::model::validate::check(m, None).unwrap();
}

#[test]
fn sqlite_is_opened_read_only_and_bad_files_are_errors() {
    let (dir, path) = temp_db();
    let before = std::fs::read(&path).unwrap();
    from_sqlite(&path).unwrap();
    assert_eq!(before, std::fs::read(&path).unwrap());
    let junk = dir.path().join("junk.sqlite");
    std::fs::write(&junk, b"this is not a database at all, just text").unwrap();
    let e = from_sqlite(&junk).unwrap_err().to_string();
    assert!(e.contains("junk.sqlite"), "{e}");
    let e = from_sqlite(&dir.path().join("missing.sqlite")).unwrap_err().to_string();
    assert!(e.contains("missing.sqlite"), "{e}");
}

#[test]
fn acme_sqlite_has_all_29_tables() {
    let m = from_sqlite(&shared("benchmarks/acme/acme_small.sqlite")).unwrap();
    assert_eq!(m.tables.len(), 29);
    assert_eq!(
        m.table("Claim_Coverage").unwrap().primary_key,
        ["Claim_Identifier", "Effective_Date", "Policy_Coverage_Detail_Identifier"]
    );
    // The SQLite build kept the DDL's FKs; those between existing tables resolve.
    assert_eq!(rel(&m, "Claim", "Catastrophe").len(), 1);
    assert_eq!(rel(&m, "Policy", "Agreement")[0].cardinality, Cardinality::OneToOne);
    assert!(m.table("FireClaim").is_some());
}

#[test]
fn bird_financial_tables_keys_and_descriptions() {
    let tables = shared("benchmarks/bird/dev_tables.json");
    let desc = shared("benchmarks/bird/database_description/financial");
    let imp = bird_tables_with_warnings(&tables, "financial", Some(&desc)).unwrap();
    let m = &imp.model;
    let names: Vec<&str> = m.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["account", "card", "client", "disp", "district", "loan", "order", "trans"]);
    assert_eq!(m.relationships.len(), 8);
    assert_eq!(rel(m, "disp", "client")[0].on, pairs(&[("client_id", "client_id")]));
    assert_eq!(rel(m, "disp", "account")[0].cardinality, Cardinality::ManyToOne);
    assert_eq!(rel(m, "account", "district").len(), 1);
    assert_eq!(rel(m, "client", "district").len(), 1);
    assert_eq!(rel(m, "card", "disp").len(), 1);
    assert_eq!(m.table("district").unwrap().primary_key, ["district_id"]);
    let gender = m.table("client").unwrap().column("gender").unwrap();
    assert!(gender.description.as_deref().unwrap().contains("female"), "{gender:?}");
    let a2 = m.table("district").unwrap().column("A2").unwrap();
    assert_eq!(a2.description.as_deref(), Some("district_name"));
    assert_eq!(m.table("loan").unwrap().column("amount").unwrap().sql_type, "integer");
    assert!(imp.warnings.is_empty(), "{:#?}", imp.warnings);
}

#[test]
fn bird_formula1_composite_primary_keys() {
    let m = from_bird_tables(&shared("benchmarks/bird/dev_tables.json"), "formula_1", None).unwrap();
    assert_eq!(m.tables.len(), 13);
    assert_eq!(m.table("lapTimes").unwrap().primary_key, ["raceId", "driverId", "lap"]);
    assert_eq!(m.relationships.len(), 19);
    assert_eq!(rel(&m, "results", "status").len(), 1);
}

#[test]
fn bird_unknown_db_id_lists_the_choices() {
    let e = from_bird_tables(&shared("benchmarks/bird/dev_tables.json"), "nope", None).unwrap_err().to_string();
    assert!(e.contains("nope") && e.contains("financial"), "{e}");
}

#[test]
fn cli_imports_ddl_with_warnings_on_stderr() {
    let ddl = shared("benchmarks/acme/upstream_datadotworld/ACME_Insurance/DDL/ACME_small.ddl");
    let out = run(&["model", "import", "--ddl", ddl.to_str().unwrap(), "--dialect", "mysql", "--name", "acme"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let m: DbModel = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(m.name, "acme");
    assert_eq!(m.tables.len(), 13);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("warning:") && err.contains("Claim_Payment"), "{err}");
}

#[test]
fn cli_json_wraps_model_and_warnings_and_out_writes_a_loadable_file() {
    let (dir, db) = temp_db();
    let out = run(&["--json", "model", "import", "--sqlite", db.to_str().unwrap()]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["model"]["tables"].as_array().unwrap().len(), 6);
    assert!(v["warnings"][0]["message"].as_str().unwrap().contains("nowhere"));

    let file = dir.path().join("m.json");
    let out = run(&["model", "import", "--sqlite", db.to_str().unwrap(), "--out", file.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    lucy::model::load(&file).unwrap();
}

#[test]
fn cli_bad_input_exits_2_with_the_reason() {
    let out = run(&["model", "import", "--sqlite", "/nonexistent/db.sqlite"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/db.sqlite"));
    let junk = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(junk.path(), b"not a database, just some text that is long enough").unwrap();
    let out = run(&["model", "import", "--sqlite", junk.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "a file that is not SQLite is bad input");
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a readable SQLite database"));
    let out = run(&["model", "import"]);
    assert_eq!(out.status.code(), Some(2), "no source is a usage error");
    let tables = shared("benchmarks/bird/dev_tables.json");
    let out = run(&["model", "import", "--bird-tables", tables.to_str().unwrap()]);
    assert_ne!(out.status.code(), Some(0), "--db-id is required");
}

mod bird_fuzz {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    fn index() -> impl Strategy<Value = Value> {
        prop_oneof![(-3i64..12).prop_map(Value::from), Just(json!("x")), Just(Value::Null), Just(json!([1, 99]))]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

        /// Malformed tables.json entries (bad indexes, wrong types, missing
        /// fields) give a model or an error, never a panic.
        #[test]
        fn malformed_tables_json_never_panics(
            tables in prop::collection::vec("[a-c]{0,2}", 0..4),
            cols in prop::collection::vec((index(), "[a-d]{0,2}"), 0..10),
            pks in prop::collection::vec(prop_oneof![index(), prop::collection::vec(index(), 0..3).prop_map(Value::from)], 0..4),
            fks in prop::collection::vec(prop::collection::vec(index(), 0..3), 0..5),
            drop_field in 0usize..8,
        ) {
            let mut db = json!({
                "db_id": "d",
                "table_names_original": tables,
                "column_names_original": cols.iter().map(|(i, n)| json!([i, n])).collect::<Vec<_>>(),
                "column_types": ["text", 3, null],
                "primary_keys": pks,
                "foreign_keys": fks,
            });
            let fields = ["table_names_original", "column_names_original", "column_types", "primary_keys", "foreign_keys"];
            if let Some(f) = fields.get(drop_field) {
                db.as_object_mut().unwrap().remove(*f);
            }
            let file = tempfile::NamedTempFile::new().unwrap();
            std::fs::write(file.path(), serde_json::to_vec(&json!([db])).unwrap()).unwrap();
            if let Ok(m) = lucy::model::import::from_bird_tables(file.path(), "d", None) {
                prop_assert!(lucy::model::validate::check(&m, None).is_ok());
            }
        }
    }
}
