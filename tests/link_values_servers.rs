//! The value index on PostgreSQL and MariaDB (issue 23), in the pattern of
//! tests/db_servers.rs: servers started and loaded by `scripts/db.sh`;
//! with LUCY_DB_TESTS=1 a missing server fails, else it is skipped with a
//! note. DDO's index read from each server holds the same values as the one
//! read from dbmodels/ddo.sqlite, it is cached under the server's identity
//! (never its password), and a second load reads the cache. The bounds of
//! tests/link_values.rs hold on both servers too (a million rows, a 10 MB
//! value, in the `lucy_scratch` database `scripts/db.sh start` creates),
//! and nothing is written.

use std::process::{Command, Output};

use lucy::graph::SchemaGraph;
use lucy::link::values::{self, load_or_build, Provenance, ValueBounds, ValueCache};
use lucy::sql::exec::Database;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn db_sh(args: &[&str]) -> Output {
    Command::new(format!("{ROOT}/scripts/db.sh")).args(args).output().expect("run scripts/db.sh")
}

/// The URL of DDO loaded on `engine`, or None (skip) when the server is down
/// and LUCY_DB_TESTS is not set.
fn url(engine: &str) -> Option<String> {
    if !db_sh(&["status", engine]).status.success() {
        if std::env::var("LUCY_DB_TESTS").is_ok_and(|v| v == "1") {
            panic!("the {engine} server is down: scripts/test.sh starts it with scripts/db.sh start");
        }
        eprintln!("note: {engine} server not running (scripts/db.sh start; scripts/db.sh load ddo): skipped");
        return None;
    }
    let o = db_sh(&["url", engine, "ddo"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8(o.stdout).unwrap().trim().to_string())
}

#[test]
fn the_ddo_index_on_each_server_equals_the_sqlite_one_and_is_cached() {
    let g = SchemaGraph::new(lucy::model::load(format!("{ROOT}/dbmodels/ddo.json")).unwrap()).unwrap();
    let b = ValueBounds::default();
    let sqlite = values::build(&g, &Database::Sqlite(format!("{ROOT}/dbmodels/ddo.sqlite").into()), &b).unwrap();
    let cols = |i: &values::ValueIndex| {
        i.columns.iter().map(|c| (c.table.clone(), c.column.clone(), c.values.clone(), c.complete)).collect::<Vec<_>>()
    };
    for engine in ["postgres", "mysql"] {
        let Some(u) = url(engine) else { continue };
        let db = Database::parse(&u).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cache = ValueCache::new(dir.path());
        let (idx, how) = load_or_build(&g, &db, &b, Some(&cache)).unwrap();
        assert_eq!(how, Provenance::Built);
        assert!(idx.skipped.is_empty(), "{engine}: {:?}", idx.skipped);
        assert_eq!(cols(&idx), cols(&sqlite), "{engine}");
        assert!(!idx.database.contains(":lucy@"), "{engine}: {}", idx.database);
        let (again, how) = load_or_build(&g, &db, &b, Some(&cache)).unwrap();
        assert_eq!(how, Provenance::Cache, "{engine}");
        // serde_json reads a float back to the nearest f64 of its shortest
        // decimal form, not always to the same bits (CI saw 18.831255 come
        // back as 18.831255000000002): the build time to a microsecond,
        // everything else exactly, as tests/link_values.rs does.
        assert!((again.build_ms - idx.build_ms).abs() < 1e-3, "{engine}: {} vs {}", again.build_ms, idx.build_ms);
        let again = values::ValueIndex { build_ms: idx.build_ms, ..again };
        assert_eq!(again, idx, "{engine}");
        for f in std::fs::read_dir(dir.path()).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
            assert!(!text.contains(":lucy@"), "{engine}: the cache file holds the password");
        }
        let m = values::match_question(&g, &idx, "datacenters with names starting with 'dev'");
        assert!(m.iter().any(|x| x.value == "dev-east-1"), "{engine}: {m:?}");
    }
}

/// tests/link_values.rs's million-row table, on each server: `label`
/// distinct per row, `kind` 7 values, `status_code` 3, `note` NULL but for a
/// 10 MB text, a 64- and a 65-character one.
const BIG_MODEL: &str = r#"{"name": "big", "tables": [{"name": "ITEMS", "primary_key": ["id"], "columns": [
  {"name": "id", "type": "INTEGER"}, {"name": "status_code", "type": "TEXT"}, {"name": "label", "type": "TEXT"},
  {"name": "kind", "type": "varchar(20)"}, {"name": "note", "type": "TEXT"}, {"name": "amount", "type": "REAL"}]}],
  "relationships": []}"#;

/// The URL of the server's `lucy_scratch` database (created by `scripts/db.sh
/// start` for tests to fill), or None (skip) as [`url`].
fn scratch_url(engine: &str) -> Option<String> {
    url(engine)?;
    let o = db_sh(&["url", engine, "scratch"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8(o.stdout).unwrap().trim().to_string())
}

/// Statements run as the owning role (lucy's own connections are read-only).
fn admin(engine: &str, u: &str, statements: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    if engine == "postgres" {
        let mut c = postgres::Client::connect(u, postgres::NoTls).unwrap();
        for s in statements {
            for row in c.simple_query(s).unwrap() {
                if let postgres::SimpleQueryMessage::Row(r) = row {
                    out.push(
                        (0..r.len()).map(|i| r.get(i).unwrap_or("NULL").to_string()).collect::<Vec<_>>().join("|"),
                    );
                }
            }
        }
    } else {
        use mysql::prelude::Queryable;
        let mut c = mysql::Conn::new(mysql::Opts::from_url(u).unwrap()).unwrap();
        for s in statements {
            let rows: Vec<mysql::Row> = c.query(*s).unwrap();
            for r in rows {
                let cells: Vec<String> = (0..r.len())
                    .map(|i| match r.as_ref(i) {
                        Some(mysql::Value::NULL) | None => "NULL".to_string(),
                        Some(v) => v.as_sql(true).trim_matches('\'').to_string(),
                    })
                    .collect();
                out.push(cells.join("|"));
            }
        }
    }
    out
}

fn load_big(engine: &str, u: &str) {
    if engine == "postgres" {
        admin(
            engine,
            u,
            &[
                r#"DROP TABLE IF EXISTS "ITEMS""#,
                r#"CREATE TABLE "ITEMS"(id INTEGER PRIMARY KEY, status_code TEXT, label TEXT, kind TEXT, note TEXT, amount REAL)"#,
                r#"INSERT INTO "ITEMS" SELECT i, 'S' || (i % 3), 'label-' || i, 'kind-' || (i % 7), NULL, i * 1.5 FROM generate_series(1, 1000000) AS i"#,
                r#"UPDATE "ITEMS" SET note = repeat('x', 10485760) WHERE id = 500000"#,
                r#"UPDATE "ITEMS" SET note = repeat('a', 64) WHERE id = 7"#,
                r#"UPDATE "ITEMS" SET note = repeat('b', 65) WHERE id = 8"#,
            ],
        );
    } else {
        admin(engine, u, &[
            "SET SESSION max_recursive_iterations = 1000001",
            "DROP TABLE IF EXISTS ITEMS",
            "CREATE TABLE ITEMS(id INT PRIMARY KEY, status_code VARCHAR(8), label VARCHAR(32), kind VARCHAR(20), note LONGTEXT, amount DOUBLE)",
            "INSERT INTO ITEMS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000) \
             SELECT i, CONCAT('S', i % 3), CONCAT('label-', i), CONCAT('kind-', i % 7), NULL, i * 1.5 FROM n",
            "UPDATE ITEMS SET note = REPEAT('x', 10485760) WHERE id = 500000",
            "UPDATE ITEMS SET note = REPEAT('a', 64) WHERE id = 7",
            "UPDATE ITEMS SET note = REPEAT('b', 65) WHERE id = 8",
        ]);
    }
}

/// What a write would change: the database's tables and the table's content.
fn fingerprint(engine: &str, u: &str) -> Vec<String> {
    if engine == "postgres" {
        admin(
            engine,
            u,
            &[
                "SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables WHERE schemaname = 'public'",
                r#"SELECT count(*), md5(string_agg(concat_ws('|', id, status_code, label, kind, md5(note), amount), ',' ORDER BY id)) FROM "ITEMS""#,
            ],
        )
    } else {
        admin(engine, u, &[
            // GROUP_CONCAT needs room for a million rows.
            "SET SESSION group_concat_max_len = 268435456",
            "SELECT GROUP_CONCAT(TABLE_NAME ORDER BY TABLE_NAME) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'lucy_scratch'",
            "SELECT COUNT(*), MD5(GROUP_CONCAT(CONCAT_WS('|', id, status_code, label, kind, MD5(note), amount) ORDER BY id SEPARATOR ',')) FROM ITEMS",
        ])
    }
}

/// `VmRSS` or `VmHWM` of this process, in kB (Linux), else None.
fn proc_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The bounds of tests/link_values.rs on PostgreSQL and MariaDB: a million
/// rows and a 10 MB value read within the time and memory bounds, the same
/// values kept as from SQLite, and nothing written (the tables and every
/// row's digest unchanged).
#[test]
fn a_million_rows_and_a_10_mb_value_stay_within_the_bounds_on_each_server() {
    let g = SchemaGraph::new(lucy::model::parse(BIG_MODEL, None).unwrap()).unwrap();
    for engine in ["postgres", "mysql"] {
        let Some(u) = scratch_url(engine) else { continue };
        load_big(engine, &u);
        let before = fingerprint(engine, &u);
        assert!(before[1].starts_with("1000000|"), "{engine}: {before:?}");
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let rss0 = proc_kb("VmRSS:");
        let t0 = std::time::Instant::now();
        let bounds = ValueBounds::default();
        let idx = values::build(&g, &Database::parse(&u).unwrap(), &bounds).unwrap();
        let took = t0.elapsed();
        let peak = proc_kb("VmHWM:");
        eprintln!(
            "{engine}: built in {:.2} s: {} values; rss before {rss0:?} kB, peak {peak:?} kB",
            took.as_secs_f64(),
            idx.values
        );
        assert!(took < std::time::Duration::from_secs(60), "{engine}: {took:?}");
        if let (true, Some(a), Some(b)) = (reset, rss0, peak) {
            assert!(b.saturating_sub(a) < 128 * 1024, "{engine}: peak grew by {} kB", b - a);
        }
        let col =
            |c: &str| idx.columns.iter().find(|x| x.column == c).unwrap_or_else(|| panic!("{engine} {c}: {idx:#?}"));
        assert_eq!(col("label").values.len(), 1000, "{engine}");
        assert!(!col("label").complete, "{engine}");
        assert_eq!(col("kind").values, (0..7).map(|i| format!("kind-{i}")).collect::<Vec<_>>(), "{engine}");
        assert!(col("kind").complete && col("status_code").complete, "{engine}");
        assert_eq!(
            col("note").values,
            vec!["a".repeat(64)],
            "{engine}: the 10 MB and 65-character values are never kept"
        );
        assert!(!idx.columns.iter().any(|c| c.column == "amount" || c.column == "id"), "{engine}: only text columns");
        assert!(idx.values <= bounds.total_values && idx.bytes <= bounds.total_bytes, "{engine}");
        assert_eq!(fingerprint(engine, &u), before, "{engine}: the database was written");
        admin(engine, &u, &[if engine == "postgres" { r#"DROP TABLE "ITEMS""# } else { "DROP TABLE ITEMS" }]);
    }
}
