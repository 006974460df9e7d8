//! `check_sql` on the DDO model: each rule, on SQL a person or the direct
//! baseline would write.

use std::path::Path;

use super::*;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

use crate::graph::fixtures::ddo;

fn kinds(sql: &str) -> Vec<FindingKind> {
    let r = check_sql(&ddo(), sql, Dialect::Sqlite).unwrap();
    r.findings.iter().map(|f| f.kind).collect()
}

fn one(sql: &str) -> Finding {
    let r = check_sql(&ddo(), sql, Dialect::Sqlite).unwrap();
    assert_eq!(r.findings.len(), 1, "{sql}: {:#?}", r.findings);
    r.findings[0].clone()
}

#[test]
fn the_direct_baselines_q1_join_is_undeclared() {
    let f = one(
        "SELECT CLIENT.name, DATACENTER.name FROM CLIENT JOIN DATACENTER ON CLIENT.loc_id = DATACENTER.id WHERE DATACENTER.name LIKE 'dev%'",
    );
    assert_eq!(f.kind, FindingKind::UndeclaredJoin);
    assert_eq!(f.clause, "JOIN DATACENTER ON");
    assert!(f.message.contains("CLIENT.loc_id = DATACENTER.id"), "{}", f.message);
    assert!(f.hint.contains("CLIENT – RSPOOL2CLIENT – RESOURCEPOOL – COMPUTE – DATACENTER"), "{}", f.hint);
}

#[test]
fn declared_joins_in_on_where_and_using_are_clean() {
    for sql in [
        "SELECT c.name FROM CLIENT c JOIN LOCATION l ON l.id = c.loc_id",
        "SELECT CLIENT.name FROM CLIENT, LOCATION WHERE CLIENT.loc_id = LOCATION.id AND LOCATION.city = 'Dublin'",
        "SELECT name FROM CLIENT WHERE loc_id IN (SELECT id FROM LOCATION WHERE country = 'Ireland')",
        "WITH d AS (SELECT id, name FROM DATACENTER) SELECT d.name, COUNT(COMPUTE.id) FROM d JOIN COMPUTE ON COMPUTE.dc_id = d.id GROUP BY d.name",
        "SELECT x.name FROM (SELECT * FROM CLIENT) AS x",
    ] {
        let r = check_sql(&ddo(), sql, Dialect::Sqlite).unwrap();
        assert!(r.is_clean(), "{sql}: {:#?}", r.findings);
    }
}

#[test]
fn a_filter_between_joined_tables_is_not_a_join() {
    // ddo-20: clients and datacenters joined through the m:m path, then
    // compared on their location.
    let sql = "SELECT DISTINCT CLIENT.name, DATACENTER.name FROM DATACENTER JOIN COMPUTE ON COMPUTE.dc_id = DATACENTER.id \
               JOIN RESOURCEPOOL ON RESOURCEPOOL.compute_id = COMPUTE.id JOIN RSPOOL2CLIENT ON RSPOOL2CLIENT.rspool_id = RESOURCEPOOL.id \
               JOIN CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id WHERE CLIENT.loc_id = DATACENTER.loc_id";
    assert!(kinds(sql).is_empty());
}

#[test]
fn a_lookup_does_not_bridge_two_tables() {
    let f = one("SELECT CLIENT.name, DATACENTER.name FROM CLIENT JOIN LOCATION ON CLIENT.loc_id = LOCATION.id JOIN DATACENTER ON DATACENTER.loc_id = LOCATION.id");
    assert_eq!(f.kind, FindingKind::LookupBridge);
    assert!(f.message.contains("C4"), "{}", f.message);
    let f = one("SELECT CLIENT.name, DATACENTER.name FROM CLIENT JOIN DATACENTER ON CLIENT.loc_id = DATACENTER.loc_id");
    assert_eq!(f.kind, FindingKind::LookupBridge);
    assert!(f.message.contains("LOCATION.id"), "{}", f.message);
}

#[test]
fn m_to_m_sides_meet_through_their_junction() {
    let f = one("SELECT CLIENT.name FROM CLIENT JOIN RESOURCEPOOL ON RESOURCEPOOL.id = CLIENT.id");
    assert_eq!(f.kind, FindingKind::JunctionBypass);
    assert!(f.message.contains("RSPOOL2CLIENT") && f.message.contains("C3"), "{}", f.message);
}

#[test]
fn unknown_names_get_the_closest_match() {
    let f = one("SELECT name FROM CLIENTS");
    assert_eq!(f.kind, FindingKind::UnknownTable);
    assert!(f.hint.contains("CLIENT"), "{}", f.hint);
    let f = one("SELECT c.nmae FROM CLIENT c");
    assert_eq!((f.kind, f.clause.as_str()), (FindingKind::UnknownColumn, "SELECT"));
    assert!(f.hint.contains("c.name"), "{}", f.hint);
    let f = one("SELECT name FROM CLIENT WHERE gendr = 'F'");
    assert_eq!((f.kind, f.clause.as_str()), (FindingKind::UnknownColumn, "WHERE"));
    assert!(f.hint.contains("gender"), "{}", f.hint);
    // SQLite reads "F" as a string when no column has that name; in
    // PostgreSQL it is a column.
    assert!(kinds("SELECT name FROM CLIENT WHERE gender = \"F\"").is_empty());
    let r = check_sql(&ddo(), "SELECT name FROM CLIENT WHERE gender = \"F\"", Dialect::Postgres).unwrap();
    assert!(r.findings[0].hint.contains("single quotes"), "{:?}", r.findings);
    // Select-list aliases are names too.
    assert!(kinds("SELECT name AS n FROM CLIENT ORDER BY n").is_empty());
}

#[test]
fn cross_joins_are_reported() {
    let f = one("SELECT CLIENT.name, DATACENTER.name FROM CLIENT, DATACENTER");
    assert_eq!(f.kind, FindingKind::CrossJoin);
    // Any condition over both relations links them.
    assert!(kinds(
        "SELECT CLIENT.name FROM CLIENT JOIN LOCATION ON LOCATION.id = CLIENT.loc_id OR LOCATION.id = CLIENT.id"
    )
    .is_empty());
}

#[test]
fn a_join_on_part_of_a_composite_relationship_is_reported() {
    let mut m = crate::model::load(Path::new(MODEL)).unwrap();
    // PAYMENT -> CLIENT on (client_id, date) = (id, name), for the test.
    let r = m.relationships.iter_mut().find(|r| r.from == "PAYMENT" && r.to == "CLIENT").unwrap();
    r.on.push(["date".into(), "name".into()]);
    let g = SchemaGraph::new(m).unwrap();
    let r = check_sql(&g, "SELECT p.id FROM PAYMENT p JOIN CLIENT c ON c.id = p.client_id", Dialect::Sqlite).unwrap();
    assert_eq!(r.findings.len(), 1, "{:#?}", r.findings);
    assert_eq!(r.findings[0].kind, FindingKind::PartialJoin);
    assert_eq!(r.findings[0].hint, "add c.name = p.date");
    let ok = check_sql(
        &g,
        "SELECT p.id FROM PAYMENT p JOIN CLIENT c ON c.id = p.client_id AND p.date = c.name",
        Dialect::Sqlite,
    )
    .unwrap();
    assert!(ok.is_clean(), "{:#?}", ok.findings);
}

#[test]
fn aggregates_over_repeated_rows_are_reported() {
    let sql = "SELECT CLIENT.name, SUM(PAYAMOUNT.amount), COUNT(RETENTION.id) FROM CLIENT \
               JOIN PAYMENT ON PAYMENT.client_id = CLIENT.id JOIN PAYAMOUNT ON PAYAMOUNT.pay_id = PAYMENT.id \
               JOIN RETENTION ON RETENTION.client_id = CLIENT.id GROUP BY CLIENT.id, CLIENT.name";
    let r = check_sql(&ddo(), sql, Dialect::Sqlite).unwrap();
    assert_eq!(r.findings.len(), 2, "{:#?}", r.findings);
    assert!(r.findings.iter().all(|f| f.kind == FindingKind::Fanout && f.clause == "SELECT"));
    assert!(r.findings[0].message.contains("RETENTION"), "{}", r.findings[0].message);
    // Without the second branch nothing repeats per client.
    let ok = "SELECT CLIENT.name, SUM(PAYAMOUNT.amount), COUNT(DISTINCT PAYMENT.id), MAX(PAYMENT.date) FROM CLIENT \
              JOIN PAYMENT ON PAYMENT.client_id = CLIENT.id JOIN PAYAMOUNT ON PAYAMOUNT.pay_id = PAYMENT.id GROUP BY CLIENT.id, CLIENT.name";
    assert!(kinds(ok).is_empty());
    // A parent's column counted after joining its children: a fan trap.
    assert_eq!(
        kinds("SELECT COUNT(PAYMENT.date) FROM PAYMENT JOIN PAYAMOUNT ON PAYAMOUNT.pay_id = PAYMENT.id"),
        [FindingKind::Fanout]
    );
}

#[test]
fn forbidden_tables_and_relationships_are_reported() {
    let mut m = crate::model::load(Path::new(MODEL)).unwrap();
    m.constraints.forbid_tables = vec!["RETENTION".into()];
    m.constraints.forbid_relationships = vec!["CLIENT-LOCATION".into()];
    let g = SchemaGraph::new(m).unwrap();
    let r = check_sql(&g, "SELECT CLIENT.name FROM CLIENT JOIN LOCATION ON LOCATION.id = CLIENT.loc_id JOIN RETENTION ON RETENTION.client_id = CLIENT.id", Dialect::Sqlite).unwrap();
    let k: Vec<FindingKind> = r.findings.iter().map(|f| f.kind).collect();
    assert!(k.contains(&FindingKind::ForbiddenTable) && k.contains(&FindingKind::ForbiddenRelationship), "{k:?}");
}

#[test]
fn unparsable_input_is_an_error() {
    assert!(matches!(check_sql(&ddo(), "SELEC name FROM CLIENT", Dialect::Sqlite), Err(Error::Sql(_))));
    assert!(matches!(check_sql(&ddo(), "DELETE FROM CLIENT", Dialect::Sqlite), Err(Error::Sql(_))));
    assert!(matches!(check_sql(&ddo(), "  ", Dialect::Sqlite), Err(Error::Sql(_))));
}

#[test]
fn every_ddo_gold_query_is_clean() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/questions/ddo.jsonl")).unwrap();
    let g = ddo();
    let mut dirty = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let q: serde_json::Value = serde_json::from_str(line).unwrap();
        let r = check_sql(&g, q["gold_sql"].as_str().unwrap(), Dialect::Sqlite).unwrap();
        if !r.is_clean() {
            dirty.push(format!("{}: {}", q["id"], r.message()));
        }
    }
    assert!(dirty.is_empty(), "{}", dirty.join("\n"));
}

#[test]
fn natural_joins_and_derived_columns_are_joins_not_cross_joins() {
    // NATURAL JOIN pairs the shared column names (here `id`): a join the
    // model does not declare, not a cross join.
    let f = one("SELECT CLIENT.name FROM CLIENT NATURAL JOIN LOCATION");
    assert_eq!((f.kind, f.clause.as_str()), (FindingKind::UndeclaredJoin, "NATURAL JOIN LOCATION"));
    assert!(f.message.contains("USING (id)"), "{}", f.message);
    // An unqualified column of a derived table relates it to the others.
    let sql = "SELECT CLIENT.name FROM CLIENT, DATACENTER, (SELECT id AS lid FROM LOCATION) AS l \
               WHERE CLIENT.loc_id = lid AND DATACENTER.loc_id = lid";
    assert!(kinds(sql).is_empty(), "{:?}", kinds(sql));
}

#[test]
fn a_name_no_relation_of_a_cte_query_has_is_reported() {
    let sql = "WITH d AS (SELECT id, name FROM DATACENTER) SELECT d.name FROM d JOIN COMPUTE ON COMPUTE.dc_id = d.id WHERE nmae = 'x'";
    let f = one(sql);
    assert_eq!((f.kind, f.clause.as_str()), (FindingKind::UnknownColumn, "WHERE"));
    assert!(f.hint.contains("name"), "{}", f.hint);
    // A column of the CTE is found.
    assert!(kinds("WITH d AS (SELECT id, name FROM DATACENTER) SELECT name FROM d").is_empty());
}
