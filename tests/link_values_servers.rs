//! The value index on PostgreSQL and MariaDB (issue 23), in the pattern of
//! tests/db_servers.rs: servers started and loaded by `scripts/db.sh`;
//! with LUCY_DB_TESTS=1 a missing server fails, else it is skipped with a
//! note. DDO's index read from each server holds the same values as the one
//! read from dbmodels/ddo.sqlite, it is cached under the server's identity
//! (never its password), and a second load reads the cache.

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
