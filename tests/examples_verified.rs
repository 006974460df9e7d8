//! Verified queries (issue 24): the examples file (validation with file and
//! line), `lucy examples add|list|check`, retrieval, the rewrite over the
//! view, `lucy ask` with examples on the mock LLM (127.0.0.1: the example's
//! SQL over the view appears in the QueryView prompt; the trace and `lucy
//! explain` name it), and the serve endpoints.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use lucy::examples::validate::Usable;
use lucy::examples::{load_for_model, retrieve, rewrite_over_view, Entry, Example};
use lucy::graph::SchemaGraph;
use lucy::llm::mock::{MockServer, Script};
use lucy::types::{ColumnRef, Dialect, ViewRequest};
use serde_json::{json, Value};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

/// An example over the view of Q1 (CLIENT … DATACENTER), one over a column
/// the view lacks, one over a table it lacks.
const PROD: &str = "SELECT DISTINCT c.name FROM CLIENT c JOIN RSPOOL2CLIENT r ON c.id = r.client_id \
    JOIN RESOURCEPOOL p ON r.rspool_id = p.id JOIN COMPUTE m ON p.compute_id = m.id \
    JOIN DATACENTER d ON m.dc_id = d.id WHERE d.name = 'prod1'";
const GENDER: &str = "SELECT name, gender FROM CLIENT";
const CITY: &str = "SELECT c.name FROM CLIENT c JOIN LOCATION l ON c.loc_id = l.id WHERE l.city = 'Paris'";

fn graph() -> SchemaGraph {
    SchemaGraph::new(lucy::model::load(MODEL).unwrap()).unwrap()
}

fn q1_view(g: &SchemaGraph) -> lucy::types::ViewResult {
    let req = ViewRequest {
        attributes: vec![ColumnRef::new("CLIENT", "name"), ColumnRef::new("DATACENTER", "name")],
        ..ViewRequest::new(vec!["CLIENT".into(), "DATACENTER".into()])
    };
    lucy::solve::generate_view(g, &req).unwrap()
}

fn line(q: &str, sql: &str) -> String {
    serde_json::to_string(&json!({"question": q, "sql": sql})).unwrap()
}

/// A temp dir holding a copy of the DDO model (so `ddo.examples.jsonl`
/// beside it is this test's) and, when given, its examples file.
fn model_dir(examples: Option<&str>) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("ddo.json");
    std::fs::copy(MODEL, &model).unwrap();
    if let Some(text) = examples {
        std::fs::write(dir.path().join("ddo.examples.jsonl"), text).unwrap();
    }
    (dir, model)
}

fn lucy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(args)
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

#[test]
fn rewrite_over_the_view_uses_its_aliases_or_says_why_not() {
    let g = graph();
    let v = q1_view(&g);
    let sql = rewrite_over_view(&g, PROD, &v, Dialect::Sqlite).unwrap();
    assert_eq!(sql, "SELECT DISTINCT CLIENT_name FROM lucy_view WHERE DATACENTER_name = 'prod1'");
    // Unqualified columns, ORDER BY an output alias, COUNT(*).
    let sql =
        rewrite_over_view(&g, "SELECT name AS n, COUNT(*) FROM CLIENT GROUP BY name ORDER BY n;", &v, Dialect::Sqlite)
            .unwrap();
    assert_eq!(sql, "SELECT CLIENT_name AS n, COUNT(*) FROM lucy_view GROUP BY CLIENT_name ORDER BY n");
    let why = |sql: &str| rewrite_over_view(&g, sql, &v, Dialect::Sqlite).unwrap_err();
    assert!(why(GENDER).contains("client.gender, which is not a column of the view"), "{}", why(GENDER));
    assert!(why(CITY).contains("location, which is not in the view"), "{}", why(CITY));
    assert!(why("SELECT * FROM CLIENT").contains("selects *"));
    assert!(why("SELECT name FROM CLIENT WHERE id IN (SELECT client_id FROM RSPOOL2CLIENT)").contains("subquery"));
    // A join the view does not make (CLIENT and DATACENTER through LOCATION's key).
    let w = why("SELECT c.name FROM CLIENT c JOIN DATACENTER d ON c.id = d.id");
    assert!(w.contains("which the view does not"), "{w}");
    assert!(why("SELEC name").contains("does not parse"));
}

#[test]
fn load_for_model_names_the_line_of_a_stale_example() {
    let g = graph();
    let (dir, _) = model_dir(None);
    let p = dir.path().join("x.examples.jsonl");
    std::fs::write(&p, format!("{}\n{}\n", line("a", PROD), line("b", "SELECT name FROM CUSTOMER"))).unwrap();
    let e = load_for_model(&p, &g, Dialect::Sqlite).unwrap_err().to_string();
    assert!(e.contains("x.examples.jsonl:2: [unknown_table]") && e.contains("lucy examples check"), "{e}");
    std::fs::write(&p, format!("{}\n{}\n", line("a", PROD), line("b", "SELECT nme FROM CLIENT"))).unwrap();
    let e = load_for_model(&p, &g, Dialect::Sqlite).unwrap_err().to_string();
    assert!(e.contains("x.examples.jsonl:2: [unknown_column]"), "{e}");
    std::fs::write(&p, format!("{}\n{}\n", line("a", PROD), line("b", "DELETE FROM CLIENT"))).unwrap();
    let e = load_for_model(&p, &g, Dialect::Sqlite).unwrap_err().to_string();
    assert!(e.contains("x.examples.jsonl:2: the SQL does not parse"), "{e}");
    std::fs::write(&p, format!("{}\nnot json\n", line("a", PROD))).unwrap();
    let e = load_for_model(&p, &g, Dialect::Sqlite).unwrap_err().to_string();
    assert!(e.contains("x.examples.jsonl:2: not an example object"), "{e}");
    std::fs::write(&p, format!("{}\n\n{}\n", line("a", PROD), line("b", GENDER))).unwrap();
    let ok = load_for_model(&p, &g, Dialect::Sqlite).unwrap();
    assert_eq!(ok.iter().map(|u| u.entry.line).collect::<Vec<_>>(), vec![1, 3]);
    assert_eq!(ok[1].tables, vec!["CLIENT".to_string()]);
}

/// Ranking with the real MiniLM (skipped, saying so, when its files are absent).
#[test]
fn minilm_ranks_the_paraphrase_first() {
    let dir = lucy::crush::embed::MiniLm::default_dir();
    if !lucy::crush::embed::MiniLm::available(&dir) {
        eprintln!("SKIPPED: MiniLM files absent in {} (run scripts/fetch-minilm.sh)", dir.display());
        return;
    }
    let e = lucy::crush::embed::MiniLm::load(&dir).unwrap();
    let ex = |line: usize, q: &str| Usable {
        entry: Entry { line, example: Example { question: q.into(), sql: "SELECT 1".into(), database: None } },
        tables: vec![],
    };
    let pool = vec![
        ex(1, "What is the total amount of payments per client?"),
        ex(2, "Which clients use the datacenter named prod1?"),
        ex(3, "List the tax rate of every payment amount."),
        ex(4, "How many resource pools does each compute host have?"),
    ];
    let r = retrieve(&e, "Which customers are served by datacenters called dev?", &pool, 2).unwrap();
    assert_eq!(r[0].line, 2, "{r:?}");
    assert!(r[0].score > r[1].score);
    let again = retrieve(&e, "Which customers are served by datacenters called dev?", &pool, 2).unwrap();
    assert_eq!(r, again, "retrieval is deterministic");
}

#[test]
fn examples_cli_add_list_check() {
    let (dir, model) = model_dir(None);
    let m = model.to_str().unwrap();
    let file = dir.path().join("ddo.examples.jsonl");
    // add: checked, run, appended to MODEL.examples.jsonl.
    let o = lucy(&["examples", "add", "--model", m, "--question", "Clients of prod1?", "--sql", PROD, "--execute", DB]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("ddo.examples.jsonl:1 (reads"), "{}", text(&o));
    // add refuses a query lucy check rejects, and writes nothing.
    let bypass = "SELECT c.name FROM CLIENT c JOIN RESOURCEPOOL p ON c.id = p.id";
    let o = lucy(&["examples", "add", "--model", m, "--question", "Bad", "--sql", bypass]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("not added") && text(&o).contains("the new example: ["), "{}", text(&o));
    // … and a duplicate question.
    let o = lucy(&["examples", "add", "--model", m, "--question", "clients of prod1", "--sql", GENDER]);
    assert!(text(&o).contains("ddo.examples.jsonl:1: already has this question"), "{}", text(&o));
    let o = lucy(&["examples", "add", "--model", m, "--question", "Genders", "--sql", GENDER]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let o = lucy(&["--json", "examples", "list", "--model", m]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["examples"].as_array().unwrap().len(), 2);
    assert_eq!(v["examples"][1]["line"], 2);
    assert_eq!(v["examples"][1]["sql"], GENDER);
    // check: all fine, then a schema change (gender renamed) breaks line 2.
    let o = lucy(&["examples", "check", "--model", m, "--execute", DB]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let changed = std::fs::read_to_string(&model).unwrap().replace("\"gender\"", "\"sex\"");
    let model2 = dir.path().join("ddo2.json");
    std::fs::write(&model2, changed).unwrap();
    let f = file.to_str().unwrap();
    let o = lucy(&["--json", "examples", "check", "--model", model2.to_str().unwrap(), "--examples", f]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((v["checked"].as_u64(), v["failed"].as_u64()), (Some(2), Some(1)));
    assert_eq!(v["results"][1]["line"], 2);
    assert_eq!(v["results"][1]["findings"][0]["kind"], "unknown_column");
    // … and the database (still with `gender`) no longer runs SQL written for the new schema.
    std::fs::write(&file, format!("{}\n", line("Sexes", "SELECT name, sex FROM CLIENT"))).unwrap();
    let o = lucy(&["examples", "check", "--model", model2.to_str().unwrap(), "--examples", f, "--execute", DB]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("ddo.examples.jsonl:1: the SQL no longer runs"), "{}", text(&o));
    // A bad line is an error naming the file and line.
    std::fs::write(&file, "{\"question\": \"x\"}\n").unwrap();
    let o = lucy(&["examples", "list", "--model", m]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("ddo.examples.jsonl:1: not an example object"), "{}", text(&o));
}

/// The mock LLM: MatchTables picks CLIENT and DATACENTER with their names
/// (the view of Q1); QueryView answers with the view query.
fn q1_mock() -> MockServer {
    let script = Script::from_file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mock/ddo-q1.json")).unwrap();
    MockServer::start(script)
}

fn query_view_prompts(mock: &MockServer) -> Vec<String> {
    mock.chat_requests()
        .iter()
        .filter_map(|r| r.json())
        .map(|j| j["messages"][0]["content"].as_str().unwrap_or_default().to_string())
        .filter(|p| p.starts_with("I created a view table"))
        .collect()
}

#[test]
fn ask_shows_the_examples_sql_over_the_view_and_traces_it() {
    let examples = format!(
        "{}\n{}\n{}\n",
        line("Which clients use the datacenter named prod1?", PROD),
        line("Which clients have location 3?", "SELECT name FROM CLIENT WHERE loc_id = 3"),
        line("Which clients live in Paris?", CITY)
    );
    let (dir, model) = model_dir(Some(&examples));
    let m = model.to_str().unwrap();
    let trace = dir.path().join("t.json");
    let t = trace.to_str().unwrap();
    // A fresh mock per run: each run sees the script from its start.
    let run = |extra: &[&str]| {
        let mock = q1_mock();
        let url = mock.url();
        let mut args = vec!["ask", "--model", m, Q1, "--execute", DB, "--trace", t, "--examples-embedder", "hash"];
        // LOCATION gets 1 of 5 votes: below 2 (as in tests/ask_ddo.rs).
        args.extend_from_slice(&["--min-votes", "2"]);
        // The paper's view: CLIENT.loc_id is not in it, so the example
        // that reads it is left out (every column would keep it in).
        args.extend_from_slice(&["--view-columns", "selected"]);
        // The examples block is to be the only difference with and
        // without: the name hints (on by default) would be a second block.
        args.extend_from_slice(&["--name-hints", "off"]);
        // Without examples `auto` (the default) would ask for a plan: the
        // SQL prompt is compared in the sql form.
        args.extend_from_slice(&["--set", "query.form=sql"]);
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--llm-url", url.as_str(), "--llm-model", "mock-model", "--llm-retries", "0"]);
        let o = lucy(&args);
        (o, query_view_prompts(&mock))
    };
    let (o, with) = run(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(with.len(), 1);
    assert!(
        with[0].contains("Question: Which clients use the datacenter named prod1?\n```sql\nSELECT DISTINCT CLIENT_name FROM lucy_view WHERE DATACENTER_name = 'prod1'\n```\n"),
        "{}",
        with[0]
    );
    assert!(!with[0].contains("loc_id") && !with[0].contains("Paris"), "left-out examples stay out: {}", with[0]);
    let tr: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let used = tr["examples"]["used"].as_array().unwrap();
    assert_eq!(used.len(), 3);
    assert_eq!(tr["examples"]["tables_mode"], "offer");
    let prod = used.iter().find(|u| u["line"] == 1).unwrap();
    assert!(prod["in_prompt"].as_str().unwrap().contains("FROM lucy_view"));
    let loc = used.iter().find(|u| u["line"] == 2).unwrap();
    assert!(loc["left_out"].as_str().unwrap().contains("client.loc_id, which is not a column of the view"), "{loc}");
    let ex = lucy(&["explain", t]);
    let ex = text(&ex);
    assert!(ex.contains("== Verified examples (3 of 3 asked for"), "{ex}");
    assert!(ex.contains("left out of the QueryView prompt: its SQL reads location"), "{ex}");
    // --no-examples: the prompt is the one without examples, no trace section.
    let (o, all) = run(&["--no-examples"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let without = &all[0];
    assert!(!without.contains("Verified examples"), "{without}");
    let tr: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert!(tr.get("examples").is_none());
    // The block is the only difference.
    let start = with[0].find("Verified examples").unwrap();
    let end = with[0].find("The question:").unwrap();
    assert_eq!(format!("{}{}", &with[0][..start], &with[0][end..]), *without);
    // --examples-k 1 --example-tables add: only the nearest example, its tables added.
    let (o, _) = run(&["--examples-k", "1", "--example-tables", "add"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let tr: Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert_eq!(tr["examples"]["used"].as_array().unwrap().len(), 1);
    assert_eq!(tr["examples"]["tables_mode"], "add");
    // A stale examples file stops the ask with the line.
    std::fs::write(dir.path().join("ddo.examples.jsonl"), line("x", "SELECT nope FROM CLIENT") + "\n").unwrap();
    let (o, _) = run(&[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("ddo.examples.jsonl:1: [unknown_column]"), "{}", text(&o));
}

struct Server {
    child: std::process::Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(models: &Path) -> Server {
    serve_with(models, &[])
}

fn serve_with(models: &Path, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(["serve", "--models", models.to_str().unwrap(), "--addr", "127.0.0.1:0"])
        .args(extra)
        .env_remove("LUCY_SERVE_TOKEN")
        .env_remove("LUCY_LLM_URL")
        .env("LUCY_LLM_GGUF", "off")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut l = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut l).unwrap();
    let Some(base) = l.trim().strip_prefix("listening on ") else {
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!("lucy serve did not start: {l} {err}");
    };
    Server { base: base.to_string(), child }
}

#[test]
fn serve_lists_and_adds_examples() {
    let (dir, model) = model_dir(None);
    std::fs::copy(DB, dir.path().join("ddo.sqlite")).unwrap();
    let s = serve(&model);
    lucy::llm::tls::install_provider(); // reqwest is built without a default rustls provider
    let c = reqwest::blocking::Client::new();
    let url = format!("{}/v1/models/ddo/examples", s.base);
    let v: Value = c.get(&url).send().unwrap().json().unwrap();
    assert_eq!(v, json!({"file": "ddo.examples.jsonl", "exists": false, "examples": []}));
    let r = c.post(&url).json(&json!({"question": "Clients of prod1?", "sql": PROD, "execute": true})).send().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let v: Value = r.json().unwrap();
    assert_eq!((v["line"].as_u64(), v["check"]["ok"].as_bool()), (Some(1), Some(true)));
    let r = c.post(&url).json(&json!({"question": "Bad", "sql": "SELECT nope FROM CLIENT"})).send().unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let v: Value = r.json().unwrap();
    assert!(v["error"].as_str().unwrap().contains("unknown_column"), "{v}");
    let r = c.post(&url).json(&json!({"question": "clients of prod1", "sql": GENDER})).send().unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let v: Value = r.json().unwrap();
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains("ddo.examples.jsonl:1: already has this question"), "{msg}");
    assert!(!msg.contains(dir.path().to_str().unwrap()), "no server paths in answers: {msg}");
    let v: Value = c.get(&url).send().unwrap().json().unwrap();
    assert_eq!(v["examples"].as_array().unwrap().len(), 1);
    assert_eq!(v["examples"][0]["question"], "Clients of prod1?");
    let r = c.get(format!("{}/v1/models/nope/examples", s.base)).send().unwrap();
    assert_eq!(r.status().as_u16(), 404);
    let doc: Value = c.get(format!("{}/openapi.json", s.base)).send().unwrap().json().unwrap();
    let p = &doc["paths"]["/v1/models/{name}/examples"];
    assert!(p["get"].is_object() && p["post"]["requestBody"].is_object(), "{p}");
}

/// `POST /v1/ask` retrieves from the model's examples file as `lucy ask`
/// does: the nearest example's SQL over the view reaches the QueryView
/// prompt, the trace (and the streamed `query_view` event) lists it by file
/// name, and `"examples": false` leaves it out.
#[test]
fn serve_asks_use_the_model_s_examples() {
    let examples = format!("{}\n", line("Which clients use the datacenter named prod1?", PROD));
    let (dir, model) = model_dir(Some(&examples));
    let mock = q1_mock();
    let url = mock.url();
    let s = serve_with(
        &model,
        &["--examples-embedder", "hash", "--llm-url", &url, "--llm-model", "mock-model", "--llm-retries", "0"],
    );
    lucy::llm::tls::install_provider();
    let c = reqwest::blocking::Client::new();
    let ask = |body: Value| -> Value {
        let r = c.post(format!("{}/v1/ask", s.base)).json(&body).send().unwrap();
        assert_eq!(r.status().as_u16(), 200);
        r.json().unwrap()
    };
    let a = ask(json!({"model": "ddo", "question": Q1, "min_votes": 2}));
    assert!(a["failure"].is_null(), "{a}");
    let prompts = query_view_prompts(&mock);
    assert_eq!(prompts.len(), 1, "{prompts:?}");
    assert!(prompts[0].contains("Question: Which clients use the datacenter named prod1?"), "{}", prompts[0]);
    assert!(prompts[0].contains("FROM lucy_view WHERE DATACENTER_name = 'prod1'"), "{}", prompts[0]);
    let t: Value =
        c.get(format!("{}/v1/traces/{}", s.base, a["trace_id"].as_str().unwrap())).send().unwrap().json().unwrap();
    assert_eq!(t["examples"]["file"], "ddo.examples.jsonl", "named without the server's directory");
    assert_eq!(t["examples"]["used"][0]["line"], 1);
    assert!(t["examples"]["used"][0]["in_prompt"].is_string(), "{}", t["examples"]);
    assert!(!t.to_string().contains(dir.path().to_str().unwrap()), "no server paths in the trace");
    // Streamed: the query_view event carries the examples for the page.
    let r = c
        .post(format!("{}/v1/ask", s.base))
        .header("accept", "text/event-stream")
        .json(&json!({"model": "ddo", "question": Q1, "min_votes": 2}))
        .send()
        .unwrap();
    let text = r.text().unwrap();
    let qv = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .find(|d| d["trace"]["prompt"].as_str().is_some_and(|p| p.starts_with("query_view")))
        .expect("a query_view event");
    assert_eq!(qv["examples"]["used"][0]["line"], 1, "{qv}");
    // "examples": false: no examples block, no trace section.
    let before = query_view_prompts(&mock).len();
    // (the sql form: without examples `auto` would ask for a plan)
    let a = ask(json!({"model": "ddo", "question": Q1, "min_votes": 2, "examples": false, "query_form": "sql"}));
    let prompts = query_view_prompts(&mock);
    assert_eq!(prompts.len(), before + 1);
    assert!(!prompts[before].contains("Verified examples"), "{}", prompts[before]);
    let t: Value =
        c.get(format!("{}/v1/traces/{}", s.base, a["trace_id"].as_str().unwrap())).send().unwrap().json().unwrap();
    assert!(t.get("examples").is_none(), "{}", t["examples"]);
    // A count out of range is a 400 naming the field.
    let r = c
        .post(format!("{}/v1/ask", s.base))
        .json(&json!({"model": "ddo", "question": Q1, "examples_k": 99}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    assert!(r.text().unwrap().contains("examples_k"));
}
