//! The curated models agree with their sources: dbmodels/acme.json with
//! the data in acme_small.sqlite (every table and column exists, every
//! relationship's join columns match), and the BIRD models with
//! dev_tables.json plus the patterns the Lucy paper describes.

use std::path::{Path, PathBuf};

use lucy::model::import::from_bird_tables;
use lucy::types::{Cardinality, DbModel, Pattern};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn load(rel: &str) -> DbModel {
    lucy::model::load(root().join(rel)).unwrap()
}

fn q(conn: &rusqlite::Connection, sql: &str) -> i64 {
    conn.query_row(sql, [], |r| r.get(0)).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

#[test]
fn acme_model_matches_the_benchmark_database() {
    let m = load("dbmodels/acme.json");
    let db = root().join("../shared/benchmarks/acme/acme_small.sqlite");
    let conn = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let actual = lucy::model::import::from_sqlite(&db).unwrap();
    for t in &m.tables {
        let real = actual.table(&t.name).unwrap_or_else(|| panic!("table {} is not in acme_small.sqlite", t.name));
        for c in &t.columns {
            assert!(real.column(&c.name).is_some(), "{}.{} is not in acme_small.sqlite", t.name, c.name);
            assert!(c.description.is_some(), "{}.{} has no description", t.name, c.name);
        }
        assert!(t.description.is_some(), "{} has no description", t.name);
        // Declared keys hold in the data.
        let pk = t.primary_key.join(", ");
        assert_eq!(
            q(&conn, &format!("SELECT COUNT(*) FROM (SELECT {pk} FROM {} GROUP BY {pk} HAVING COUNT(*) > 1)", t.name)),
            0,
            "primary key ({pk}) of {} has duplicates",
            t.name
        );
    }
    for r in &m.relationships {
        let on: Vec<String> = r.on.iter().map(|[a, b]| format!("f.{a} = t.{b}")).collect();
        let not_null: Vec<String> = r.on.iter().map(|[a, _]| format!("f.{a} IS NOT NULL")).collect();
        // Every non-NULL reference finds exactly one row on the `to` side.
        let orphans = q(
            &conn,
            &format!(
                "SELECT COUNT(*) FROM {} f WHERE {} AND (SELECT COUNT(*) FROM {} t WHERE {}) <> 1",
                r.from,
                not_null.join(" AND "),
                r.to,
                on.join(" AND ")
            ),
        );
        assert_eq!(orphans, 0, "{}: {orphans} rows do not match exactly one {} row", r.id(), r.to);
        if r.cardinality == Cardinality::OneToOne {
            let cols: Vec<&str> = r.on.iter().map(|p| p[0].as_str()).collect();
            let c = cols.join(", ");
            let dup = q(
                &conn,
                &format!(
                    "SELECT COUNT(*) FROM (SELECT {c} FROM {} WHERE {} GROUP BY {c} HAVING COUNT(*) > 1)",
                    r.from,
                    not_null.join(" AND ").replace("f.", "")
                ),
            );
            assert_eq!(dup, 0, "{} is 1:1 but {} repeats", r.id(), r.from);
        }
    }
    // The four claim-amount kinds partition the claim amounts.
    let kinds = "SELECT Claim_Amount_Identifier FROM Loss_Payment UNION ALL SELECT Claim_Amount_Identifier FROM Loss_Reserve \
                 UNION ALL SELECT Claim_Amount_Identifier FROM Expense_Payment UNION ALL SELECT Claim_Amount_Identifier FROM Expense_Reserve";
    assert_eq!(q(&conn, &format!("SELECT COUNT(*) FROM ({kinds})")), q(&conn, "SELECT COUNT(*) FROM Claim_Amount"));
    assert_eq!(
        q(&conn, &format!("SELECT COUNT(DISTINCT Claim_Amount_Identifier) FROM ({kinds})")),
        q(&conn, "SELECT COUNT(*) FROM Claim_Amount")
    );
}

/// Every join condition used by the ACME gold SQL is a relationship of the
/// model (in either direction), so the planner can build each gold join.
#[test]
fn acme_model_covers_every_gold_join() {
    let m = load("dbmodels/acme.json");
    let gold = [
        ("claim", "claim_identifier", "claim_amount", "claim_identifier"),
        ("policy", "policy_identifier", "policy_coverage_detail", "policy_identifier"),
        ("claim", "claim_identifier", "claim_coverage", "claim_identifier"),
        (
            "claim_coverage",
            "policy_coverage_detail_identifier",
            "policy_coverage_detail",
            "policy_coverage_detail_identifier",
        ),
        ("agreement_party_role", "agreement_identifier", "policy", "policy_identifier"),
        ("claim_amount", "claim_amount_identifier", "loss_payment", "claim_amount_identifier"),
        ("claim_amount", "claim_amount_identifier", "loss_reserve", "claim_amount_identifier"),
        ("claim_amount", "claim_amount_identifier", "expense_payment", "claim_amount_identifier"),
        ("claim_amount", "claim_amount_identifier", "expense_reserve", "claim_amount_identifier"),
        ("policy_amount", "policy_amount_identifier", "premium", "policy_amount_identifier"),
        (
            "policy_amount",
            "policy_coverage_detail_identifier",
            "policy_coverage_detail",
            "policy_coverage_detail_identifier",
        ),
        ("catastrophe", "catastrophe_identifier", "claim", "catastrophe_identifier"),
        ("policy", "policy_identifier", "policy_amount", "policy_identifier"),
    ];
    for (a, ac, b, bc) in gold {
        let found = m.relationships.iter().any(|r| {
            let has = |t: &str, x: &str, u: &str, y: &str| {
                r.from.eq_ignore_ascii_case(t)
                    && r.to.eq_ignore_ascii_case(u)
                    && r.on.iter().any(|[p, q]| p.eq_ignore_ascii_case(x) && q.eq_ignore_ascii_case(y))
            };
            has(a, ac, b, bc) || has(b, bc, a, ac)
        });
        assert!(found, "gold join {a}.{ac} = {b}.{bc} has no relationship in acme.json");
    }
    let stars: Vec<&str> = m
        .patterns
        .iter()
        .filter_map(|p| match p {
            Pattern::Star { root, .. } => Some(root.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(stars, ["Claim_Amount", "Policy_Amount"]);
}

fn bird(db: &str) -> DbModel {
    let base = root().join("../shared/benchmarks/bird");
    from_bird_tables(&base.join("dev_tables.json"), db, Some(Path::new(&base.join("database_description").join(db))))
        .unwrap()
}

/// The curated BIRD models keep the imported schema (tables, columns,
/// keys, relationships) and add table descriptions, a few corrected column
/// descriptions, and patterns only.
#[test]
fn bird_models_are_the_import_plus_curation() {
    for (file, db) in [("dbmodels/bird_financial.json", "financial"), ("dbmodels/bird_formula1.json", "formula_1")] {
        let curated = load(file);
        let imported = bird(db);
        assert_eq!(curated.relationships, imported.relationships, "{file}");
        assert_eq!(curated.tables.len(), imported.tables.len(), "{file}");
        for (c, i) in curated.tables.iter().zip(&imported.tables) {
            assert_eq!((&c.name, &c.primary_key), (&i.name, &i.primary_key), "{file}");
            // Column descriptions may be corrected by curation; the rest is the import.
            let shape = |t: &lucy::types::Table| -> Vec<(String, String, bool)> {
                t.columns.iter().map(|k| (k.name.clone(), k.sql_type.clone(), k.nullable)).collect()
            };
            assert_eq!(shape(c), shape(i), "{file}: {}", c.name);
            assert!(c.description.as_deref().is_some_and(|d| !d.is_empty()), "{file}: {} has no description", c.name);
        }
    }
    let fin = load("dbmodels/bird_financial.json");
    assert!(fin.patterns.iter().any(|p| matches!(p,
        Pattern::ManyToMany { junction, sides, .. } if junction == "disp" && sides.contains(&"client".to_string()) && sides.contains(&"account".to_string()))));
    assert!(fin
        .patterns
        .iter()
        .any(|p| matches!(p, Pattern::Lookup { tables, .. } if tables == &["district".to_string()])));
}

/// Where acme.json says a star root's children are `exclusive` (each root
/// row is exactly one kind), the data agrees: every row of the root has a
/// row in exactly one child, joined by the relationship between the two.
#[test]
fn acme_exclusive_kinds_partition_their_root_in_the_data() {
    let m = load("dbmodels/acme.json");
    let db = root().join("../shared/benchmarks/acme/acme_small.sqlite");
    let conn = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut checked = 0;
    for p in &m.patterns {
        let (root, children) = match p {
            Pattern::Star { root, children, exclusive: true, .. }
            | Pattern::Snowflake { root, children, exclusive: true, .. } => (root, children),
            _ => continue,
        };
        let kinds: Vec<String> = children
            .iter()
            .map(|c| {
                let r = m
                    .relationships
                    .iter()
                    .find(|r| {
                        (r.from.eq_ignore_ascii_case(&c.table) && r.to.eq_ignore_ascii_case(root))
                            || (r.to.eq_ignore_ascii_case(&c.table) && r.from.eq_ignore_ascii_case(root))
                    })
                    .unwrap_or_else(|| panic!("no relationship joins {} to {root}", c.table));
                let on: Vec<String> =
                    r.on.iter()
                        .map(|[a, b]| {
                            if r.from.eq_ignore_ascii_case(root) {
                                format!("k.{b} = r.{a}")
                            } else {
                                format!("k.{a} = r.{b}")
                            }
                        })
                        .collect();
                format!("(SELECT COUNT(*) FROM {} k WHERE {})", c.table, on.join(" AND "))
            })
            .collect();
        let rows = q(&conn, &format!("SELECT COUNT(*) FROM {root}"));
        assert!(rows > 0, "{root} is empty: nothing to check");
        let not_one = q(&conn, &format!("SELECT COUNT(*) FROM {root} r WHERE {} <> 1", kinds.join(" + ")));
        assert_eq!(
            not_one, 0,
            "{not_one} of {rows} {root} rows are not exactly one kind, but acme.json marks its children exclusive"
        );
        checked += 1;
    }
    assert_eq!(checked, 1, "acme.json marks one star exclusive (Claim_Amount)");
}
