//! The value index (issue 23): its bounds on a large SQLite table (a
//! million rows, a 10 MB value), that the database file is never written,
//! the on-disk cache and its invalidation, codes beside names, and
//! `lucy ask --values on` putting DDO's `dev…` datacenters into the prompts
//! a mock LLM on 127.0.0.1 receives.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use lucy::graph::SchemaGraph;
use lucy::link::values::{self, load_or_build, MatchKind, Provenance, ValueBounds, ValueCache};
use lucy::llm::mock::{MockServer, Reply, Rule, Script};
use lucy::sql::exec::Database;
use sha2::{Digest, Sha256};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

fn sha(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

fn graph(json: &str) -> SchemaGraph {
    SchemaGraph::new(lucy::model::parse(json, None).unwrap()).unwrap()
}

/// `VmRSS` or `VmHWM` of this process, in kB (Linux), else None.
fn proc_kb(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

const BIG_MODEL: &str = r#"{"name": "big", "tables": [{"name": "ITEMS", "primary_key": ["id"], "columns": [
  {"name": "id", "type": "INTEGER"}, {"name": "status_code", "type": "TEXT"}, {"name": "label", "type": "TEXT"},
  {"name": "kind", "type": "varchar(20)"}, {"name": "note", "type": "TEXT"}, {"name": "amount", "type": "REAL"}]}],
  "relationships": []}"#;

/// A million rows: `label` distinct per row, `kind` 7 values, `status_code`
/// 3 values, `note` NULL but for a 10 MB text, a 64- and a 65-character one.
fn big_db(path: &Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(
        "CREATE TABLE ITEMS(id INTEGER PRIMARY KEY, status_code TEXT, label TEXT, kind TEXT, note TEXT, amount REAL);
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
         INSERT INTO ITEMS SELECT i, 'S' || (i % 3), 'label-' || i, 'kind-' || (i % 7), NULL, i * 1.5 FROM n;",
    )
    .unwrap();
    let ten_mb = "x".repeat(10 << 20);
    c.execute("UPDATE ITEMS SET note = ?1 WHERE id = 500000", [&ten_mb]).unwrap();
    c.execute("UPDATE ITEMS SET note = ?1 WHERE id = 7", ["a".repeat(64)]).unwrap();
    c.execute("UPDATE ITEMS SET note = ?1 WHERE id = 8", ["b".repeat(65)]).unwrap();
}

#[test]
fn a_million_rows_and_a_10_mb_value_stay_within_the_bounds_and_the_file_is_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.sqlite");
    big_db(&path);
    let g = graph(BIG_MODEL);
    let before = (sha(&path), files(dir.path()));
    // Peak memory from here on (Linux: writing 5 to clear_refs resets VmHWM).
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let rss0 = proc_kb("VmRSS:");
    let t0 = Instant::now();
    let bounds = ValueBounds::default();
    let idx = values::build(&g, &Database::Sqlite(path.clone()), &bounds).unwrap();
    let took = t0.elapsed();
    let peak = proc_kb("VmHWM:");
    eprintln!(
        "built in {:.2} s: {} values, {} bytes; rss before {rss0:?} kB, peak after {peak:?} kB (reset: {reset})",
        took.as_secs_f64(),
        idx.values,
        idx.bytes
    );
    assert!(took < Duration::from_secs(60), "{took:?}");
    if let (true, Some(a), Some(b)) = (reset, rss0, peak) {
        assert!(b.saturating_sub(a) < 128 * 1024, "peak grew by {} kB", b - a);
    }
    assert_eq!((sha(&path), files(dir.path())), before, "the database file changed or gained a journal");
    let col = |c: &str| idx.columns.iter().find(|x| x.column == c).unwrap_or_else(|| panic!("{c}: {idx:#?}"));
    let label = col("label");
    assert_eq!(label.values.len(), 1000);
    assert!(!label.complete);
    assert_eq!(col("kind").values, (0..7).map(|i| format!("kind-{i}")).collect::<Vec<_>>());
    assert!(col("kind").complete && col("status_code").complete);
    // The 10 MB and the 65-character values are never kept.
    assert_eq!(col("note").values, vec!["a".repeat(64)]);
    assert!(idx.columns.iter().all(|c| c.values.iter().all(|v| v.chars().count() <= 64)));
    assert!(!idx.columns.iter().any(|c| c.column == "amount" || c.column == "id"), "only text columns");
    // status_code/kind are not one to one: no code pairs.
    assert!(idx.codes.is_empty(), "{:?}", idx.codes);
    assert_eq!(idx.values, idx.columns.iter().map(|c| c.values.len()).sum::<usize>());
    assert!(idx.values <= bounds.total_values && idx.bytes <= bounds.total_bytes);

    // A total budget of 500 values: the columns after it are named, not read.
    let small = ValueBounds { total_values: 500, ..ValueBounds::default() };
    let idx = values::build(&g, &Database::Sqlite(path.clone()), &small).unwrap();
    assert_eq!(idx.values, 500);
    assert_eq!(idx.columns.iter().map(|c| c.values.len()).collect::<Vec<_>>(), vec![3, 497]);
    assert_eq!(idx.skipped.len(), 2, "{:?}", idx.skipped);
    assert!(idx.skipped[0].starts_with("ITEMS.kind: not indexed: the index holds its 500 values"), "{:?}", idx.skipped);
    assert_eq!(sha(&path), before.0);
}

const ROLES_MODEL: &str = r#"{"name": "roles", "tables": [
  {"name": "Party_Role", "primary_key": ["Party_Role_Code"], "columns": [
    {"name": "Party_Role_Code", "type": "varchar(5)"}, {"name": "Party_Role_Name", "type": "varchar(100)"},
    {"name": "Party_Role_Description", "type": "varchar(2000)"}]},
  {"name": "Agreement_Party_Role", "primary_key": ["Agreement_Identifier"], "columns": [
    {"name": "Agreement_Identifier", "type": "int"}, {"name": "Party_Role_Code", "type": "varchar(5)"},
    {"name": "Party_Name", "type": "varchar(100)"}]}],
  "relationships": [{"from": "Agreement_Party_Role", "to": "Party_Role", "cardinality": "M:1",
    "on": [["Party_Role_Code", "Party_Role_Code"]]}]}"#;

fn roles_db(path: &Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(
        "CREATE TABLE Party_Role(Party_Role_Code TEXT PRIMARY KEY, Party_Role_Name TEXT, Party_Role_Description TEXT);
         INSERT INTO Party_Role VALUES ('AG', 'Agent', NULL), ('UW', 'Underwriter', NULL), ('PH', 'PolicyHolder', NULL);
         CREATE TABLE Agreement_Party_Role(Agreement_Identifier INTEGER PRIMARY KEY, Party_Role_Code TEXT, Party_Name TEXT);
         INSERT INTO Agreement_Party_Role VALUES (1, 'AG', 'Société Générale'), (2, 'PH', 'Zoë Müller'), (3, 'AG', 'Bob');",
    )
    .unwrap();
}

#[test]
fn the_cache_is_read_back_and_a_changed_database_invalidates_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("roles.sqlite");
    roles_db(&path);
    let g = graph(ROLES_MODEL);
    let db = Database::Sqlite(path.clone());
    let cache = ValueCache::new(dir.path().join("cache"));
    let b = ValueBounds::default();
    let (first, how) = load_or_build(&g, &db, &b, Some(&cache)).unwrap();
    assert_eq!(how, Provenance::Built);
    assert_eq!(files(cache.dir()).len(), 1, "one cache file");
    let (second, how) = load_or_build(&g, &db, &b, Some(&cache)).unwrap();
    assert_eq!(how, Provenance::Cache);
    // serde_json reads a float back to the nearest f64 of its shortest
    // decimal form, not always to the same bits: compare the build time to
    // a microsecond, everything else exactly.
    assert!((first.build_ms - second.build_ms).abs() < 1e-3, "{} vs {}", first.build_ms, second.build_ms);
    let mut second = second;
    second.build_ms = first.build_ms;
    assert_eq!(first, second);
    // Other bounds are another key.
    let other = ValueBounds { per_column: 10, ..ValueBounds::default() };
    assert_eq!(load_or_build(&g, &db, &other, Some(&cache)).unwrap().1, Provenance::Built);
    // A corrupt cache file is rebuilt, not trusted.
    for f in files(cache.dir()) {
        std::fs::write(cache.dir().join(f), "{not json").unwrap();
    }
    assert_eq!(load_or_build(&g, &db, &b, Some(&cache)).unwrap().1, Provenance::Built);
    // The database changes: the index is built anew and sees the new value.
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute("INSERT INTO Agreement_Party_Role VALUES (4, 'UW', 'Ana Núñez')", [])
        .unwrap();
    let (third, how) = load_or_build(&g, &db, &b, Some(&cache)).unwrap();
    assert_eq!(how, Provenance::Built);
    let names = |i: &values::ValueIndex| {
        i.columns.iter().find(|c| c.column == "Party_Name").map(|c| c.values.clone()).unwrap_or_default()
    };
    assert!(!names(&first).contains(&"Ana Núñez".to_string()));
    assert!(names(&third).contains(&"Ana Núñez".to_string()), "{third:?}");
}

#[test]
fn agent_finds_its_code_through_the_lookup_and_the_foreign_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("roles.sqlite");
    roles_db(&path);
    let g = graph(ROLES_MODEL);
    let idx = values::build(&g, &Database::Sqlite(path), &ValueBounds::default()).unwrap();
    assert_eq!(idx.codes.len(), 1, "{:?}", idx.codes);
    assert_eq!(idx.codes[0].pairs[0], ["AG".to_string(), "Agent".to_string()]);
    let m = values::match_question(&g, &idx, "Which agents sold policies for Societe Generale?");
    let found = |t: &str, c: &str, v: &str| {
        m.iter()
            .find(|x| g.column_names(x.column) == (t, c) && x.value == v)
            .unwrap_or_else(|| panic!("{t}.{c} {v}: {m:?}"))
    };
    assert_eq!(found("Party_Role", "Party_Role_Name", "Agent").kind, MatchKind::Fuzzy);
    assert_eq!(found("Agreement_Party_Role", "Party_Role_Code", "AG").means.as_deref(), Some("Agent"));
    assert_eq!(found("Agreement_Party_Role", "Party_Name", "Société Générale").kind, MatchKind::Exact);
    let apr = g.table_id("Agreement_Party_Role").unwrap();
    assert_eq!(
        values::table_notes(&g, &m, apr),
        vec!["Party_Name: 'Société Générale'", "Party_Role_Code: 'AG' = Agent"]
    );
}

/// The JSON request bodies' first message, per prompt phase.
fn prompts_of(server: &MockServer) -> Vec<String> {
    server
        .chat_requests()
        .iter()
        .filter_map(|r| r.json())
        .map(|j| j["messages"][0]["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn ask(url: &str, cache: &Path, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(["--json", "ask", "--model", &format!("{ROOT}/dbmodels/ddo.json"), Q1])
        .args(["--execute", &format!("{ROOT}/dbmodels/ddo.sqlite")])
        .args(["--min-votes", "2"])
        // The values block is to be the only difference between on and
        // off: the name hints (on by default) would be a second block.
        .args(["--name-hints", "off"])
        .args(extra)
        .args(["--llm-url", url, "--llm-model", "mock-model", "--llm-retries", "0"])
        .env("LUCY_CACHE", cache)
        .env("LUCY_API_KEY", "sk-test")
        // The scripted mock answers QueryView's SQL prompt, not a plan:
        // the `sql` form (the default is `auto` since session 30).
        .env("LUCY_SET", "query.form=sql")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_URL")
        .output()
        .unwrap()
}

#[test]
fn values_on_puts_ddo_dev_datacenters_into_the_prompts_and_off_leaves_them_out() {
    let script = format!("{ROOT}/tests/fixtures/mock/ddo-q1.json");
    let cache = tempfile::tempdir().unwrap();
    let db = format!("{ROOT}/dbmodels/ddo.sqlite");
    let before = sha(Path::new(&db));
    let qv = |ps: &[String]| ps.iter().find(|p| p.contains("I created a view table")).cloned().unwrap();
    let attrs = |ps: &[String]| ps.iter().find(|p| p.contains("JSON schema of the table DATACENTER")).cloned().unwrap();

    // The paper's view, whose attribute prompts show the values too (the
    // default view, of every column, asks no attribute prompt).
    let paper_view = ["--view-columns", "selected"];
    let on = MockServer::start(Script::from_file(&script).unwrap());
    let out = ask(&on.url(), cache.path(), &["--values", "on", paper_view[0], paper_view[1]]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rows"]["rows"].as_array().unwrap().len(), 29);
    let ps = prompts_of(&on);
    let q = qv(&ps);
    let line = "- DATACENTER_name: e.g. 'dev-apac-2', 'dev-east-1', 'dev-eu-central' (values starting with 'dev')\n";
    assert!(q.contains(line), "{q}");
    assert!(q.contains("Values stored in the database that match words of the question"), "{q}");
    assert!(q.find(line) < q.find("The question:"), "the values come before the question: {q}");
    let a = attrs(&ps);
    assert!(
        a.contains("- name: e.g. 'dev-apac-2', 'dev-east-1', 'dev-eu-central' (values starting with 'dev')"),
        "{a}"
    );
    // CLIENT holds no `dev…` value: its attribute prompt shows none.
    let client = ps.iter().find(|p| p.contains("JSON schema of the table CLIENT")).unwrap();
    assert!(!client.contains("Values stored"), "{client}");
    assert_eq!(files(&cache.path().join("values")).len(), 1, "the index is cached");

    let off = MockServer::start(Script::from_file(&script).unwrap());
    let out = ask(&off.url(), cache.path(), &paper_view);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ps_off = prompts_of(&off);
    assert!(ps_off.iter().all(|p| !p.contains("Values stored")));
    // Off, the prompts are those of `on` without the values block.
    let strip = |p: &str| match (p.find("Values stored"), p.find("The question:"), p.find("The user has a question")) {
        (Some(s), Some(e), _) | (Some(s), None, Some(e)) => format!("{}{}", &p[..s], &p[e..]),
        _ => p.to_string(),
    };
    let mut a: Vec<String> = ps.iter().map(|p| strip(p)).collect();
    let mut b = ps_off.clone();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    assert_eq!(sha(Path::new(&db)), before, "dbmodels/ddo.sqlite was written");

    // --values on needs a database.
    let o = Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(["ask", "--model", &format!("{ROOT}/dbmodels/ddo.json"), Q1, "--values", "on"])
        .env("LUCY_CACHE", cache.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("--values on reads the values of the database given with --execute"));
}

/// The lever changes the answer (issue 23's per-lever test): a model that
/// spells a name filter as the question words it (`= 'dev'`, no row) unless
/// the prompt shows the stored values (`'dev-east-1'`, … "values starting
/// with 'dev'"), when it writes the prefix match. With `--values on` the
/// answer is Q1's 29 gold rows; off, it is empty. `--value-literals off`
/// keeps the other lever that mends such filters out of it.
#[test]
fn values_on_turns_a_literal_guess_into_the_gold_rows() {
    let cache = tempfile::tempdir().unwrap();
    let script = || {
        let mut s = Script::from_file(format!("{ROOT}/tests/fixtures/mock/ddo-q1.json")).unwrap();
        let view = "I created a view table lucy_view";
        s.rules.insert(
            0,
            Rule::when_contains([view, "(values starting with 'dev')"]).reply(Reply::ok([
                "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```",
            ])),
        );
        s.rules.insert(
            1,
            Rule::when_contains([view]).reply(Reply::ok([
                "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name = 'dev'\n```",
            ])),
        );
        MockServer::start(s)
    };
    let rows = |extra: &[&str]| -> usize {
        let m = script();
        let mut args = vec!["--value-literals", "off"];
        args.extend_from_slice(extra);
        let out = ask(&m.url(), cache.path(), &args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["rows"]["rows"].as_array().unwrap().len()
    };
    assert_eq!(rows(&["--values", "on"]), 29, "the gold rows with the values in the prompt");
    assert_eq!(rows(&[]), 0, "without them the guess finds nothing");
}
