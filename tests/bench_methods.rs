//! The seed methods' benchmark plumbing (issue 24): example pools without
//! leakage (cross-database on Spider dev, in-database from DDO's and ACME's
//! values), the seeded question sample, and the `fewshot` method (DynVS) on
//! the scripted mock LLM (127.0.0.1): one `fewshot_sql` call per question
//! with the retrieved pool examples in its prompt, and a malformed answer
//! as a per-question failure.

use std::path::Path;
use std::process::{Command, Output};

use lucy::bench::methods::{build_pool, suite_items};
use lucy::bench::Suite;
use lucy::examples::file::normalize_text;
use lucy::examples::pool::{leaks, normalize_sql, Pool, PoolKind};
use lucy::llm::mock::{MockServer, Reply, Rule, Script};
use serde_json::{json, Value};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn suite(name: &str) -> Option<Suite> {
    let path = Path::new(ROOT).join(format!("benchmarks/suites/{name}.json"));
    match Suite::load(&path) {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!("SKIPPED {name}: {e} (the external data lives in ../shared/benchmarks)");
            None
        }
    }
}

/// The leakage test: no question sees its own database's entries, its own
/// question or its gold SQL (cross-database); no in-database entry equals
/// any question or gold SQL of the suite.
#[test]
fn pools_do_not_leak_into_their_suites() {
    if let Some(s) = suite("spider-dev") {
        let pool = build_pool(&s, PoolKind::CrossDatabase, 0).unwrap();
        assert_eq!(pool.entries.len(), s.questions.len());
        assert_eq!(leaks(&pool, &suite_items(&s)), Vec::<(String, String)>::new());
        // The paraphrase twins of the issue: 584 never reaches 583.
        let q583 = s.questions.iter().find(|q| q.id == "583").unwrap();
        let seen = pool.candidates(q583.db_id.as_deref().unwrap(), &q583.question, &q583.gold_sql);
        assert!(seen.iter().all(|e| e.database.as_deref() != Some("student_transcripts_tracking")));
        assert!(seen.iter().all(|e| normalize_sql(&e.sql) != normalize_sql(&q583.gold_sql)));
        assert!(seen.len() > 900, "{}", seen.len());
    }
    for name in ["ddo", "acme"] {
        let Some(s) = suite(name) else { continue };
        let pool = build_pool(&s, PoolKind::InDatabase, 20).unwrap();
        assert!(pool.entries.len() > 20, "{name}: {}", pool.entries.len());
        assert_eq!(leaks(&pool, &suite_items(&s)), Vec::<(String, String)>::new(), "{name}");
        // Directly too: no entry equals any question or gold SQL of the suite.
        for e in &pool.entries {
            for q in &s.questions {
                assert_ne!(normalize_text(&e.question), normalize_text(&q.question));
                assert_ne!(normalize_sql(&e.sql), normalize_sql(&q.gold_sql));
            }
        }
        // The suite's own questions as an "in-database" pool would leak, and the check says so.
        let bad =
            Pool { kind: PoolKind::InDatabase, entries: build_pool(&s, PoolKind::CrossDatabase, 0).unwrap().entries };
        assert!(!leaks(&bad, &suite_items(&s)).is_empty(), "{name}");
    }
}

fn lucy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(args)
        .current_dir(ROOT)
        .env_remove("OPENAI_API_KEY")
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_URL")
        .env("LUCY_LLM_GGUF", "off")
        .output()
        .expect("run lucy")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn results(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}

#[test]
fn sample_is_seeded_and_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let run = |seed: &str, out: &str| {
        let out = dir.path().join(out);
        let o = lucy(&[
            "bench",
            "ddo",
            "--oracle",
            "tables",
            "--sample",
            "5",
            "--seed",
            seed,
            "--no-progress",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
        let r = results(&out);
        assert_eq!(r["sample"], format!("5@{seed}"));
        r["questions"].as_array().unwrap().iter().map(|q| q["id"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let a = run("7", "a");
    assert_eq!(a.len(), 5);
    assert_eq!(a, run("7", "b"));
    assert_ne!(a, run("8", "c"));
}

#[test]
fn pool_cli_writes_a_labelled_pool() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ddo-values.jsonl");
    let o = lucy(&[
        "examples",
        "pool",
        "--suite",
        "ddo",
        "--kind",
        "in-database",
        "--per-column",
        "5",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let pool = Pool::load(&out).unwrap();
    assert_eq!(pool.kind, PoolKind::InDatabase);
    assert!(pool.entries.iter().all(|e| e.database.as_deref() == Some("ddo")));
    // Each templated query runs on the database.
    let c = rusqlite::Connection::open(Path::new(ROOT).join("dbmodels/ddo.sqlite")).unwrap();
    for e in &pool.entries {
        c.prepare(&e.sql).unwrap_or_else(|err| panic!("{}: {err}", e.sql));
    }
    // A pool file without its header is refused, naming the line.
    std::fs::write(&out, "{\"question\":\"q\",\"sql\":\"SELECT 1\",\"database\":\"ddo\"}\n").unwrap();
    let e = Pool::load(&out).unwrap_err().to_string();
    assert!(e.contains("ddo-values.jsonl:1: a pool starts with"), "{e}");
}

fn prompts_of(mock: &MockServer) -> Vec<(String, String)> {
    mock.chat_requests()
        .iter()
        .filter_map(|r| r.json())
        .map(|j| {
            let m = j["messages"].as_array().unwrap();
            let last = m.last().unwrap()["content"].as_str().unwrap_or_default().to_string();
            (m[0]["content"].as_str().unwrap_or_default().to_string(), last)
        })
        .collect()
}

#[test]
fn fewshot_sends_the_pool_examples_in_one_call_and_fails_cleanly_on_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let pool = dir.path().join("pool.jsonl");
    let o = lucy(&[
        "examples",
        "pool",
        "--suite",
        "ddo",
        "--kind",
        "in-database",
        "--per-column",
        "3",
        "--out",
        pool.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    // ddo-01's gold answers it; every other question gets prose (no SQL).
    let script = Script::new()
        .rule(
            Rule::when_contains(["Here are questions similar", "ddo-never"])
                .reply(Reply::ok(["```sql\nSELECT 1\n```"])),
        )
        .default_reply(Reply::ok(["I would need more information to answer that."]));
    let mock = MockServer::start(script);
    let out = dir.path().join("out");
    let o = lucy(&[
        "bench",
        "ddo",
        "--method",
        "fewshot",
        "--examples",
        pool.to_str().unwrap(),
        "--embedder",
        "hash",
        "--examples-k",
        "4",
        "--limit",
        "2",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
        "--llm-url",
        &mock.url(),
        "--llm-model",
        "mock-model",
        "--llm-retries",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = results(&out);
    assert_eq!(r["method"], "fewshot");
    assert!(r["examples"].as_str().unwrap().starts_with("in-database:"), "{}", r["examples"]);
    let calls = prompts_of(&mock);
    // Per question: the fewshot_sql call, then the one repair round (the answer had no SQL).
    assert_eq!(calls.len(), 4, "{calls:?}");
    for (first, _) in &calls {
        assert!(first.starts_with("Given the database described by the following DDL:"), "{first}");
        assert_eq!(first.matches("\nQuestion: ").count(), 4, "k = 4 examples: {first}");
        assert!(first.contains("SQL: SELECT "), "{first}");
    }
    assert!(calls[1].1.contains("contains no SQL query"), "{}", calls[1].1);
    assert_eq!(r["questions"].as_array().unwrap().len(), 2);
    for q in r["questions"].as_array().unwrap() {
        assert!(q["prediction"]["sql"].is_null(), "{q}");
    }
    // Each trace: a per-question failure naming the missing SQL, and the examples used.
    let traces: Vec<_> = std::fs::read_dir(out.join("traces")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(traces.len(), 2);
    for p in traces {
        let t: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        assert_eq!(t["method"], "fewshot");
        assert_eq!(t["failure"]["phase"], "direct_sql", "{t}");
        assert!(t["failure"]["message"].as_str().unwrap().contains("no SQL query"), "{}", t["failure"]);
        assert_eq!(t["examples"]["used"].as_array().unwrap().len(), 4);
    }
    // Without a pool, fewshot is refused before any call.
    let o =
        lucy(&["bench", "ddo", "--method", "fewshot", "--limit", "1", "--llm-url", &mock.url(), "--llm-model", "m"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("needs an example pool"), "{}", text(&o));
    // A pool made by hand is checked for leakage as `lucy examples pool`
    // checks its own: an in-database entry holding a DDO question's gold
    // SQL is refused before any call, naming the file.
    let gold: Value = serde_json::from_str(
        std::fs::read_to_string(format!("{ROOT}/benchmarks/questions/ddo.jsonl")).unwrap().lines().nth(1).unwrap(),
    )
    .unwrap();
    let leaky = dir.path().join("leaky.jsonl");
    let entry = json!({"question": "Anything at all?", "sql": gold["gold_sql"], "database": "ddo"});
    std::fs::write(&leaky, format!("{{\"pool\": \"in-database\"}}\n{entry}\n")).unwrap();
    let before = mock.chat_requests().len();
    let o = lucy(&[
        "bench",
        "ddo",
        "--method",
        "fewshot",
        "--examples",
        leaky.to_str().unwrap(),
        "--limit",
        "1",
        "--llm-url",
        &mock.url(),
        "--llm-model",
        "m",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("leaky.jsonl: the in-database pool leaks 23 answer(s) of suite ddo"), "{}", text(&o));
    assert_eq!(mock.chat_requests().len(), before, "no call before the check");
}

#[test]
fn crush_hallucinates_selects_then_writes_sql_over_the_chosen_tables() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script::new()
        .rule(
            Rule::when_contains(["Hallucinate a minimal schema", "List customers who use datacenters"])
                .reply(Reply::ok(["Client(name); Datacenter(name)"])),
        )
        .rule(Rule::when_contains(["Hallucinate a minimal schema"]).reply(Reply::ok(["   "])))
        .rule(
            Rule::when_contains(["Given the database described by the following DDL"])
                .reply(Reply::ok(["```sql\nSELECT name FROM CLIENT\n```"])),
        );
    let mock = MockServer::start(script);
    let out = dir.path().join("out");
    let o = lucy(&[
        "bench",
        "ddo",
        "--method",
        "crush",
        "--embedder",
        "hash",
        "--budget",
        "4",
        "--limit",
        "2",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
        "--llm-url",
        &mock.url(),
        "--llm-model",
        "mock-model",
        "--llm-retries",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = results(&out);
    assert_eq!(r["method"], "crush");
    // The answered question's results name the tables CRUSH linked.
    let linked = &r["questions"][0]["prediction"]["tables"];
    assert!(!linked.as_array().unwrap().is_empty(), "{linked}");
    let calls = prompts_of(&mock);
    let phases: Vec<&str> = calls
        .iter()
        .map(|(first, _)| if first.starts_with("Hallucinate") { "crush_hallucinate" } else { "sql" })
        .collect();
    // Q1 (ddo-q1): hallucination then SQL; the next question's hallucination is blank: no SQL call.
    assert_eq!(phases, vec!["crush_hallucinate", "sql", "crush_hallucinate"], "{calls:?}");
    let sql_prompt = &calls[1].0;
    let creates = sql_prompt.matches("CREATE TABLE").count();
    assert!((1..20).contains(&creates), "only the chosen tables' DDL: {creates}\n{sql_prompt}");
    let mut traces: Vec<_> = std::fs::read_dir(out.join("traces")).unwrap().map(|e| e.unwrap().path()).collect();
    traces.sort();
    let ts: Vec<Value> =
        traces.iter().map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()).collect();
    let ok = ts.iter().find(|t| t["failure"].is_null()).expect("one question answered");
    assert!(ok["match_tables"]["source"].as_str().unwrap().starts_with("crush"), "{}", ok["match_tables"]);
    assert!(!ok["match_tables"]["tables"].as_array().unwrap().is_empty());
    let bad = ts.iter().find(|t| !t["failure"].is_null()).expect("one question failed");
    assert_eq!(bad["failure"]["phase"], "match_tables", "{}", bad["failure"]);
}

/// The seeded Spider dev sample the accuracy work and the comparison table
/// share: `lucy bench spider-dev --sample 100 --seed 1` draws exactly the ids
/// of benchmarks/samples/spider-dev-100-seed1.txt (regenerate with
/// `LUCY_UPDATE_SAMPLES=1 cargo test --test bench_methods`).
#[test]
fn spider_dev_sample_matches_the_committed_ids() {
    let Some(s) = suite("spider-dev") else { return };
    let ids: Vec<String> = lucy::bench::methods::sample(&s.questions, 100, 1).into_iter().map(|q| q.id).collect();
    assert_eq!(ids.len(), 100);
    let file = Path::new(ROOT).join("benchmarks/samples/spider-dev-100-seed1.txt");
    let text = ids.join("\n") + "\n";
    if std::env::var_os("LUCY_UPDATE_SAMPLES").is_some() {
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &text).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&file).unwrap();
    assert_eq!(committed, text, "the sample changed: regenerate with LUCY_UPDATE_SAMPLES=1 and say why");
}

#[test]
fn rasl_extracts_keywords_ranks_tables_then_writes_sql_over_them() {
    let dir = tempfile::tempdir().unwrap();
    let script =
        Script::new()
            .rule(
                Rule::when_contains(["Only output the json list", "List customers who use datacenters"])
                    .reply(Reply::ok(["```json\n[\"customers\", \"datacenters\", \"datacenter names\"]\n```"])),
            )
            .rule(Rule::when_contains(["Only output the json list"]).reply(Reply::ok(["customers and things"])))
            .rule(Rule::when_contains(["rank tables in strict order of relevance"]).reply(Reply::ok([
                "<thinking>clients and datacenters</thinking><relevant_tables><database name=\"ddo\">\
             <table rank=\"2\">DATACENTER</table><table rank=\"1\">CLIENT</table></database></relevant_tables>",
            ])))
            .rule(
                Rule::when_contains(["Given the database described by the following DDL"])
                    .reply(Reply::ok(["```sql\nSELECT name FROM CLIENT\n```"])),
            );
    let mock = MockServer::start(script);
    let out = dir.path().join("out");
    let url = mock.url();
    let args = [
        "bench",
        "ddo",
        "--method",
        "rasl",
        "--embedder",
        "hash",
        "--limit",
        "2",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
        "--llm-url",
        &url,
        "--llm-model",
        "mock-model",
        "--llm-retries",
        "0",
    ];
    let o = lucy(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = results(&out);
    assert_eq!(r["method"], "rasl");
    assert_eq!(r["questions"][0]["prediction"]["tables"], serde_json::json!(["CLIENT", "DATACENTER"]));
    let calls = prompts_of(&mock);
    let kind = |p: &str| {
        if p.contains("Only output the json list") {
            "keywords"
        } else if p.contains("rank tables in strict order") {
            "tables"
        } else {
            "sql"
        }
    };
    let phases: Vec<&str> = calls.iter().map(|(p, _)| kind(p)).collect();
    assert_eq!(phases, vec!["keywords", "tables", "sql", "keywords"], "{calls:?}");
    // The paper's fifth keyword example (Spider dev 584) is not in the prompt.
    assert!(!calls[0].0.contains("Haiti") && !calls[0].0.contains("09700166582"));
    // DDO's 20 tables are fewer than N = 50: the ranking call sees all of them.
    assert_eq!(calls[1].0.matches("CREATE TABLE").count(), 20);
    assert_eq!(calls[2].0.matches("CREATE TABLE").count(), 2, "{}", calls[2].0);
    let mut traces: Vec<_> = std::fs::read_dir(out.join("traces")).unwrap().map(|e| e.unwrap().path()).collect();
    traces.sort();
    let ts: Vec<Value> =
        traces.iter().map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()).collect();
    let bad = ts.iter().find(|t| !t["failure"].is_null()).expect("the second question fails");
    assert_eq!(bad["failure"]["phase"], "match_tables");
    assert!(bad["failure"]["message"].as_str().unwrap().contains("not a JSON list"), "{}", bad["failure"]);
}

#[test]
fn rasl_follows_up_on_an_empty_result_at_most_twice() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script::new()
        .rule(Rule::when_contains(["Only output the json list"]).reply(Reply::ok(["[\"customers\"]"])))
        .rule(Rule::when_contains(["rank tables in strict order of relevance"]).reply(Reply::ok([
            "<relevant_tables><database name=\"ddo\"><table rank=\"1\">CLIENT</table></database></relevant_tables>",
        ])))
        // Each follow-up says the result was empty; the second one is answered with rows.
        .rule(
            Rule::when_contains(["returned no rows"])
                .reply(Reply::ok(["```sql\nSELECT name FROM CLIENT WHERE name = 'nobody either'\n```"]))
                .reply(Reply::ok(["```sql\nSELECT name FROM CLIENT\n```"])),
        )
        .rule(
            Rule::when_contains(["Given the database described by the following DDL"])
                .reply(Reply::ok(["```sql\nSELECT name FROM CLIENT WHERE name = 'nobody'\n```"])),
        );
    let mock = MockServer::start(script);
    let out = dir.path().join("out");
    let url = mock.url();
    let args = [
        "bench",
        "ddo",
        "--method",
        "rasl",
        "--embedder",
        "hash",
        "--limit",
        "1",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
        "--llm-url",
        &url,
        "--llm-model",
        "mock-model",
        "--llm-retries",
        "0",
    ];
    let o = lucy(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = results(&out);
    let q = &r["questions"][0]["prediction"];
    assert_eq!(q["sql"], "SELECT name FROM CLIENT", "{q}");
    let calls = prompts_of(&mock);
    assert_eq!(calls.len(), 5, "keywords, ranking, SQL and two follow-ups: {calls:?}");
    assert!(calls[3].1.contains("returned no rows") && calls[4].1.contains("returned no rows"));
}

#[test]
fn ta_sql_links_with_a_dummy_sql_then_writes_an_sr_then_sql() {
    let dir = tempfile::tempdir().unwrap();
    let script = Script::new()
        .rule(Rule::when_contains(["def question_to_SQL", "List customers who use datacenters"]).reply(Reply::ok([
            " CLIENT.name, DATACENTER.name FROM CLIENT JOIN RSPOOL2CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id \
             JOIN DATACENTER WHERE DATACENTER.name LIKE 'dev%'\"",
        ])))
        .rule(Rule::when_contains(["def question_to_SQL"]).reply(Reply::ok(["Sorry, I cannot."])))
        .rule(Rule::when_contains(["SR is a piece of pandas-like code"]).reply(Reply::ok([
            "SR = \"df1 = df.where(element = DATACENTER.name, filter = 'LIKE dev%')\n  res = df1.select(CLIENT.name)\"",
        ])))
        .rule(Rule::when_contains(["Convert SR into one"]).reply(Reply::ok(["```sql\nSELECT name FROM CLIENT\n```"])));
    let mock = MockServer::start(script);
    let out = dir.path().join("out");
    let url = mock.url();
    let args = [
        "bench",
        "ddo",
        "--method",
        "ta-sql",
        "--limit",
        "2",
        "--no-progress",
        "--out",
        out.to_str().unwrap(),
        "--llm-url",
        &url,
        "--llm-model",
        "mock-model",
        "--llm-retries",
        "0",
    ];
    let o = lucy(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let r = results(&out);
    assert_eq!(r["method"], "ta-sql");
    let q0 = &r["questions"][0]["prediction"];
    assert_eq!(q0["tables"], serde_json::json!(["CLIENT", "DATACENTER", "RSPOOL2CLIENT"]), "{q0}");
    assert_eq!(q0["sql"], "SELECT name FROM CLIENT");
    let calls = prompts_of(&mock);
    let kind = |p: &str| {
        if p.contains("def question_to_SQL") {
            "tasl"
        } else if p.contains("SR is a piece of pandas-like code") {
            "talog"
        } else {
            "sql"
        }
    };
    // DDO describes every column: no description call. The second question's
    // dummy SQL names no table: it stops in phase 1.
    let phases: Vec<&str> = calls.iter().map(|(p, _)| kind(p)).collect();
    assert_eq!(phases, vec!["tasl", "talog", "sql", "tasl"], "{calls:?}");
    // TASL sees the whole schema as a Python dict; the SQL call only the linked tables.
    assert!(calls[0].0.contains("database_schema = {\"") && calls[0].0.contains("\"LOCATION\": {"));
    assert!(calls[0].0.trim_end().ends_with("SQL = \"SELECT"));
    assert!(
        calls[1].0.contains("schema = [CLIENT.name, DATACENTER.name, CLIENT.id, RSPOOL2CLIENT.client_id]"),
        "{}",
        calls[1].0
    );
    assert!(!calls[2].0.contains("\"LOCATION\": {") && calls[2].0.contains("\"RSPOOL2CLIENT\": {"));
    let mut traces: Vec<_> = std::fs::read_dir(out.join("traces")).unwrap().map(|e| e.unwrap().path()).collect();
    traces.sort();
    let ts: Vec<Value> =
        traces.iter().map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()).collect();
    let bad = ts.iter().find(|t| !t["failure"].is_null()).expect("the second question fails");
    assert_eq!(bad["failure"]["phase"], "match_tables");
    assert!(bad["failure"]["message"].as_str().unwrap().contains("names no table"), "{}", bad["failure"]);
}
