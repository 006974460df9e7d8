//! dbmodels/ddo.sqlite matches dbmodels/ddo.json and gives the answers of
//! the paper's questions recorded in dbmodels/README.md.

use rusqlite::Connection;

fn db() -> Connection {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
    Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap()
}

fn rows(c: &Connection, sql: &str) -> Vec<Vec<String>> {
    let mut st = c.prepare(sql).unwrap();
    let n = st.column_count();
    st.query_map([], |r| {
        (0..n).map(|i| r.get::<_, rusqlite::types::Value>(i).map(|v| format!("{v:?}"))).collect::<Result<Vec<_>, _>>()
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn schema_matches_the_model() {
    let m = lucy::model::load(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json")).unwrap();
    let c = db();
    for t in &m.tables {
        let cols: Vec<String> = rows(&c, &format!("SELECT name FROM pragma_table_info('{}') ORDER BY cid", t.name))
            .into_iter()
            .map(|r| r[0].trim_start_matches("Text(\"").trim_end_matches("\")").to_string())
            .collect();
        let want: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(cols, want, "{}", t.name);
        let n: i64 = c.query_row(&format!("SELECT COUNT(*) FROM {}", t.name), [], |r| r.get(0)).unwrap();
        assert!(n > 0, "{} is empty", t.name);
    }
    for r in &m.relationships {
        let fk: i64 = c
            .query_row(
                &format!(
                    "SELECT COUNT(*) FROM pragma_foreign_key_list('{}') WHERE \"table\" = '{}' AND \"from\" = '{}'",
                    r.from, r.to, r.on[0][0]
                ),
                [],
                |x| x.get(0),
            )
            .unwrap();
        assert_eq!(fk, 1, "FK {} not declared", r.id());
    }
    assert!(rows(&c, "PRAGMA foreign_key_check").is_empty());
}

const Q1_RIGHT: &str = "SELECT DISTINCT CLIENT.name, DATACENTER.name FROM DATACENTER
    JOIN COMPUTE ON DATACENTER.id = COMPUTE.dc_id
    JOIN RESOURCEPOOL ON COMPUTE.id = RESOURCEPOOL.compute_id
    JOIN RSPOOL2CLIENT ON RESOURCEPOOL.id = RSPOOL2CLIENT.rspool_id
    JOIN CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id
    WHERE DATACENTER.name LIKE 'dev%' ORDER BY 1, 2";

const Q1_WRONG: &str = "SELECT DISTINCT CLIENT.name, DATACENTER.name FROM CLIENT
    JOIN LOCATION ON LOCATION.id = CLIENT.loc_id
    JOIN DATACENTER ON LOCATION.id = DATACENTER.loc_id
    WHERE DATACENTER.name LIKE 'dev%' ORDER BY 1, 2";

#[test]
fn q1_the_mm_join_and_the_location_join_disagree() {
    let c = db();
    let right = rows(&c, Q1_RIGHT);
    let wrong = rows(&c, Q1_WRONG);
    assert_eq!(right.len(), 29);
    assert_eq!(right[0], ["Text(\"Acme Analytics\")", "Text(\"dev-east-1\")"]);
    assert_eq!(wrong.len(), 4);
    assert!(wrong.iter().all(|w| !right.contains(w)), "the wrong join must give a different answer");
}

#[test]
fn q2_some_pools_qualify_and_some_do_not() {
    let c = db();
    let q2 = rows(
        &c,
        "SELECT DISTINCT RESOURCEPOOL.name FROM RESOURCEPOOL
         LEFT JOIN CONFIG ON RESOURCEPOOL.id = CONFIG.rspool_id
         LEFT JOIN CCPU ON CONFIG.id = CCPU.config_id
         LEFT JOIN RUNTIME ON RESOURCEPOOL.id = RUNTIME.rspool_id
         LEFT JOIN RCPU ON RUNTIME.id = RCPU.runtime_id
         WHERE CCPU.overheadlimit > RCPU.overallusage + 100 ORDER BY 1",
    );
    assert_eq!(q2.len(), 20);
    assert_eq!(q2[0], ["Text(\"rp-api-15\")"]);
}

#[test]
fn q3_every_amount_has_exactly_one_type_and_the_tax_total_is_known() {
    let c = db();
    let multi = rows(
        &c,
        "SELECT PAYAMOUNT.id FROM PAYAMOUNT
         WHERE (SELECT COUNT(*) FROM TAX WHERE payamt_id = PAYAMOUNT.id)
             + (SELECT COUNT(*) FROM SUPERCHARGE WHERE payamt_id = PAYAMOUNT.id)
             + (SELECT COUNT(*) FROM INCOME WHERE payamt_id = PAYAMOUNT.id) <> 1",
    );
    assert!(multi.is_empty(), "amounts with zero or several types: {multi:?}");
    let total: f64 = c
        .query_row(
            "SELECT ROUND((SELECT SUM(amount) FROM PAYAMOUNT JOIN TAX ON TAX.payamt_id = PAYAMOUNT.id)
                        + (SELECT SUM(amount) FROM PAYAMOUNT JOIN SUPERCHARGE ON SUPERCHARGE.payamt_id = PAYAMOUNT.id), 2)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(total, 12563.58);
}
