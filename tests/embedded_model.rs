//! The embedded backend on a real (tiny, generated) GGUF model: loading,
//! the chat template, sampling n answers from one prompt evaluation, the
//! prefix cache, reproducible seeds, grammar-constrained decoding, and clear
//! errors for bad model files.

#[path = "embedded/tiny_gguf.rs"]
mod tiny_gguf;

use std::path::{Path, PathBuf};
use std::process::Command;

use lucy::llm::embedded::{EmbeddedModel, EmbeddedOptions};
use lucy::llm::{ChatModel, ChatRequest, Message};
use lucy::query::grammar::{check_text, view_grammar, view_grammar_with, NameRules, QueryNames};
use lucy::sql::guard::{check_query, unknown_columns};
use lucy::types::Dialect;

fn tiny(dir: &Path, name: &str, flaws: tiny_gguf::Flaws) -> PathBuf {
    let p = dir.join(name);
    tiny_gguf::write(&p, 7, flaws);
    p
}

fn load(path: &Path, max_tokens: u32) -> EmbeddedModel {
    let mut o = EmbeddedOptions::new(path);
    o.threads = 1;
    o.n_ctx = 8192;
    EmbeddedModel::load(&o, "FIX", &|_| None).unwrap().with_max_tokens(Some(max_tokens))
}

fn req(text: &str, n: usize, temperature: f64) -> ChatRequest {
    ChatRequest {
        phase: "test".into(),
        messages: vec![Message::system("You are terse."), Message::user(text)],
        temperature,
        n,
        response_schema: None,
        grammar: None,
        max_tokens: None,
    }
}

#[test]
fn loads_decodes_samples_and_reuses_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let m = load(&tiny(dir.path(), "tiny.gguf", Default::default()), 12);
    assert!(m.model_name().starts_with("gguf:tiny.gguf#sha256:"), "{}", m.model_name());
    let r = req("Say something.", 3, 0.9);
    let a = m.chat(&r).unwrap();
    assert_eq!(a.choices.len(), 3);
    assert!(a.usage.prompt_tokens > 10);
    assert!(a.usage.completion_tokens <= 36);
    let local = a.local.unwrap();
    assert_eq!(local.prompt_evaluated, a.usage.prompt_tokens, "first call evaluates the whole prompt");
    assert_eq!(local.prompt_reused, 0);
    // The same request again: same answers (seeded per sample), prompt reused.
    let b = m.chat(&r).unwrap();
    assert_eq!(a.choices, b.choices);
    let local = b.local.unwrap();
    assert_eq!(local.prompt_reused, b.usage.prompt_tokens - 1);
    assert_eq!(local.prompt_evaluated, 1);
    // A longer conversation sharing the prefix evaluates only its suffix.
    let mut longer = r.clone();
    longer.messages.push(Message { role: "assistant".into(), content: "ok".into() });
    longer.messages.push(Message::user("More."));
    let c = m.chat(&longer).unwrap();
    let local = c.local.unwrap();
    assert!(local.prompt_reused >= a.usage.prompt_tokens - 2, "{local:?}");
    assert_eq!(local.prompt_reused + local.prompt_evaluated, c.usage.prompt_tokens);
    // Greedy decoding gives n identical answers.
    let g = m.chat(&req("Say something.", 2, 0.0)).unwrap();
    assert_eq!(g.choices[0], g.choices[1]);
}

#[test]
fn auto_threads_back_off_to_one_thread_and_keep_the_prefix_cache() {
    // The default thread setting: single-token steps on one thread, batches
    // (prompts, several samples) on two; a collapse ratio of 0 makes every
    // batched call look collapsed, so the first one drops batches to one
    // thread and the context is rebuilt before the next call.
    let dir = tempfile::tempdir().unwrap();
    let mut o = EmbeddedOptions::new(tiny(dir.path(), "tiny.gguf", Default::default()));
    o.threads = 2;
    o.auto_threads = true;
    o.thread_collapse_ratio = 0.0;
    o.n_ctx = 4096;
    let m = EmbeddedModel::load(&o, "FIX", &|_| None).unwrap().with_max_tokens(Some(12));
    assert!(m.auto_threads() && m.threads() == 2);
    let r = schema_prompt(
        "CLIENT(id, name, gender, loc_id), DATACENTER(id, name, loc_id), LOCATION(id, city, country, zip)",
        "Which clients use datacenters named dev?",
    );
    let mut r = r;
    r.n = 3;
    r.temperature = 0.9;
    let a = m.chat(&r).unwrap();
    assert_eq!(a.local.unwrap().threads, 2, "batches start on every thread");
    assert!(a.usage.completion_tokens >= 10, "enough batched tokens to judge: {:?}", a.usage);
    // Backed off: a new context with one thread; the prompt comes back from
    // its snapshot, and the seeded samples answer as before.
    let b = m.chat(&r).unwrap();
    let local = b.local.unwrap();
    assert_eq!(local.threads, 1, "{local:?}");
    assert!(local.prompt_reused + 1 >= b.usage.prompt_tokens, "the snapshot survives the new context: {local:?}");
    assert_eq!(a.choices.len(), b.choices.len());
    // Fixed threads never change.
    let mut f = EmbeddedOptions::new(o.path.clone());
    f.threads = 2;
    f.auto_threads = false;
    f.thread_collapse_ratio = 0.0;
    f.n_ctx = 4096;
    let m = EmbeddedModel::load(&f, "FIX", &|_| None).unwrap().with_max_tokens(Some(12));
    assert!(!m.auto_threads());
    m.chat(&r).unwrap();
    assert_eq!(m.chat(&r).unwrap().local.unwrap().threads, 2);
}

fn load_with(path: &Path, cache: bool, cache_mb: usize) -> EmbeddedModel {
    let mut o = EmbeddedOptions::new(path);
    o.threads = 1;
    o.n_ctx = 4096;
    o.prefix_cache = cache;
    o.prefix_cache_mb = cache_mb;
    EmbeddedModel::load(&o, "FIX", &|_| None).unwrap().with_max_tokens(Some(8))
}

/// A prompt in the order the MatchTables prompts use: a long
/// question-independent part (`schema`), the question last.
fn schema_prompt(schema: &str, question: &str) -> ChatRequest {
    let body =
        format!("Here is a schema: {schema}. Which tables are relevant? Answer with a list.\nThe question: {question}");
    req(&body, 2, 0.0)
}

#[test]
fn snapshots_bring_back_an_evicted_prefix_and_answer_as_a_fresh_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny(dir.path(), "tiny.gguf", Default::default());
    let schema_x = "CLIENT(id, name, gender, loc_id), DATACENTER(id, name, loc_id), LOCATION(id, city, country, zip)";
    let schema_y = "ORDERS(id, customer, total, placed_at), ITEMS(id, order_id, sku, qty), PRODUCT(sku, title, price)";
    let m = load_with(&path, true, 64);
    let a = m.chat(&schema_prompt(schema_x, "Which clients use datacenters named dev?")).unwrap();
    // Another schema takes the KV buffer's working sequence...
    let b = m.chat(&schema_prompt(schema_y, "Which clients use datacenters named dev?")).unwrap();
    assert!(b.local.unwrap().prompt_reused < a.usage.prompt_tokens / 2);
    // ...and the first schema with another question comes back from its snapshot.
    let q2 = schema_prompt(schema_x, "How many clients live in Paris?");
    let c = m.chat(&q2).unwrap();
    let local = c.local.unwrap();
    // The tiny model tokenizes about one byte per token: the question and the
    // chat template's tail are ~45 tokens.
    assert!(
        local.prompt_evaluated <= 50 && local.prompt_reused > 150,
        "only the question is evaluated: {local:?} of {}",
        c.usage.prompt_tokens
    );
    assert_eq!(local.prompt_reused + local.prompt_evaluated, c.usage.prompt_tokens);
    let stats = m.cache_stats().unwrap();
    assert!(stats.restores >= 1 && stats.snapshots >= 2, "{stats:?}");
    assert!(stats.bytes <= 64 << 20, "{stats:?}");
    // The restored prefix gives the same greedy answers as evaluating the
    // whole prompt in a model without the cache.
    let fresh = load_with(&path, false, 64);
    let f = fresh.chat(&q2).unwrap();
    assert_eq!(f.local.unwrap().prompt_reused, 0);
    assert_eq!(c.choices, f.choices);
    assert_eq!(fresh.cache_stats().unwrap().snapshots, 0);
}

#[test]
fn a_zero_budget_keeps_no_snapshot_but_still_reuses_the_resident_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let m = load_with(&tiny(dir.path(), "tiny.gguf", Default::default()), true, 0);
    let x = schema_prompt("A(id, name), B(id, a_id)", "q one");
    let a = m.chat(&x).unwrap();
    let _ = m.chat(&schema_prompt("C(id, z), D(id, c_id, w)", "q one")).unwrap();
    let again = m.chat(&x).unwrap().local.unwrap();
    assert!(again.prompt_reused < a.usage.prompt_tokens / 2, "the snapshot was not kept: {again:?}");
    let stats = m.cache_stats().unwrap();
    assert_eq!((stats.snapshots, stats.bytes), (0, 0));
    // The resident prompt (the last one evaluated) is still reused.
    let same = m.chat(&x).unwrap().local.unwrap();
    assert_eq!(same.prompt_evaluated, 1);
}

#[test]
fn list_schema_answers_always_parse_and_name_only_offered_tables() {
    let dir = tempfile::tempdir().unwrap();
    let m = load(&tiny(dir.path(), "tiny.gguf", Default::default()), 200);
    let names = ["CLIENT", "DATACENTER", "LOCATION", "COMPUTE", "RESOURCEPOOL"];
    let mut r = req("Which tables? Answer with a JSON list.", 6, 1.0);
    r.response_schema = Some(serde_json::json!({"type": "array", "items": {"type": "string", "enum": names}}));
    let a = m.chat(&r).unwrap();
    assert!(a.structured);
    assert_eq!(a.truncated, 0, "{:?}", a.choices);
    assert_eq!(a.choices.len(), 6);
    for c in &a.choices {
        // The prompts' own list format: [A, B], names bare or quoted.
        let (v, shape) = lucy::link::parse::parse_list(c);
        assert_eq!(shape, lucy::link::parse::ListShape::Bracketed, "{c:?}");
        assert!(!v.is_empty() && v.len() <= names.len(), "{c:?}");
        for n in &v {
            assert!(names.contains(&n.as_str()), "{n} was not offered ({c})");
        }
    }
}

#[test]
fn sql_grammar_answers_parse_and_pass_the_guard_on_the_q1_view() {
    let dir = tempfile::tempdir().unwrap();
    let m = load(&tiny(dir.path(), "tiny.gguf", Default::default()), 1500);
    let cols: Vec<String> =
        ["CLIENT_id", "CLIENT_name", "DATACENTER_id", "DATACENTER_name"].iter().map(|s| s.to_string()).collect();
    let reserved: Vec<String> =
        ["CLIENT", "DATACENTER", "COMPUTE", "id", "name", "loc_id", "dc_id"].iter().map(|s| s.to_string()).collect();
    let g = view_grammar("lucy_view", &cols, &reserved, Dialect::Sqlite);
    let mut r =
        req("List customers who use datacenters with names starting with 'dev'. Write SQL over lucy_view.", 4, 1.0);
    r.grammar = Some(g.clone());
    let a = m.chat(&r).unwrap();
    assert_eq!(a.truncated, 0, "an answer hit the token limit: {:?}", a.choices);
    for c in &a.choices {
        // Every answer is a sentence of the grammar …
        check_text(&g, c).unwrap_or_else(|e| panic!("{c:?}: {e}"));
        let sql = c.trim().trim_start_matches("```sql").trim_end_matches("```").trim().trim_end_matches(';');
        // … so it parses as one read-only SELECT that reads only the view.
        // Noise weights invent names that are no name of the model (a
        // context-free grammar cannot tell them from aliases the query
        // defines): the guard rejects those, and only those.
        if let Err(e) = check_query(sql, "lucy_view", &cols, Dialect::Sqlite) {
            let m = e.to_string();
            for bad in ["cannot parse", "read-only", "exactly one statement", "table function"] {
                assert!(!m.contains(bad), "the guard rejects {sql:?} for a reason the grammar excludes: {m}");
            }
            // A relation the guard refuses can only be an undefined CTE
            // name, never a table of the model.
            for part in m.split("relation `").skip(1) {
                let rel = part.split('`').next().unwrap_or("");
                assert!(
                    !reserved.iter().any(|r| r.eq_ignore_ascii_case(rel)),
                    "{sql:?} reads the model's table {rel}: {m}"
                );
            }
        }
    }
}

fn lucy(args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(args)
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_URL")
        .env_remove("LUCY_LLM_GGUF")
        .output()
        .unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stderr).into_owned())
}

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const Q1: &str = "List customers who use datacenters with names starting with 'dev'.";

#[test]
fn bad_model_files_are_clear_input_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = tiny(dir.path(), "good.gguf", Default::default());
    let bytes = std::fs::read(&good).unwrap();
    let truncated = dir.path().join("truncated.gguf");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let text = dir.path().join("notes.gguf");
    std::fs::write(&text, "not a model at all\n").unwrap();
    let no_template = tiny(dir.path(), "notemplate.gguf", tiny_gguf::Flaws { no_chat_template: true });
    let missing = dir.path().join("missing.gguf");
    let p = |x: &Path| x.to_str().unwrap().to_string();
    for (file, extra, needle) in [
        (p(&missing), None, "missing.gguf"),
        (p(&text), None, "is not a GGUF model file"),
        (p(&truncated), None, "could not load"),
        (p(&no_template), None, "no chat template"),
        (p(&good), Some("0".repeat(64)), "expected 0000"),
    ] {
        let mut args = vec!["ask", "--model", MODEL, "--llm-gguf", &file];
        let pin;
        if let Some(h) = extra {
            pin = h;
            args.extend(["--llm-gguf-sha256", &pin]);
        }
        args.push(Q1);
        let (code, err) = lucy(&args);
        assert_eq!(code, 2, "{file}: {err}");
        assert!(err.contains(needle), "{file}: wanted {needle:?} in: {err}");
        assert!(err.contains(Path::new(&file).file_name().unwrap().to_str().unwrap()), "{err}");
        assert!(err.contains("--llm-gguf"), "the fix is named: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn ask_runs_end_to_end_on_the_embedded_model() {
    let dir = tempfile::tempdir().unwrap();
    let model = tiny(dir.path(), "tiny.gguf", Default::default());
    let trace = dir.path().join("trace.json");
    let (_, err) = lucy(&[
        "ask",
        "--model",
        MODEL,
        "--llm-gguf",
        model.to_str().unwrap(),
        "--llm-max-tokens",
        "300",
        "--samples",
        "2",
        "--trace",
        trace.to_str().unwrap(),
        Q1,
    ]);
    // The default threads: adaptive (one per generated token, every core
    // for batches), or one thread on a one-core machine.
    assert!(err.contains("using the embedded model") && err.contains("tiny.gguf"), "{err}");
    assert!(err.contains("1 per generated token, up to") || err.contains("(1 thread;"), "{err}");
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    // Phase 1 answered under the list grammar: every sample is a non-empty list.
    let steps = t["match_tables"]["steps"].as_array().unwrap();
    assert!(!steps.is_empty());
    for s in steps {
        assert_eq!(s["call"]["structured"], true, "{s}");
        for c in s["call"]["choices"].as_array().unwrap() {
            let (v, _) = lucy::link::parse::parse_list(c.as_str().unwrap());
            assert!(!v.is_empty(), "{c}");
        }
    }
    assert!(t["match_tables"]["cost"]["prefill_tok_s"].as_f64().unwrap() > 0.0);
}

/// `--query-names strict` on the DDO Q1 view, with the tiny model's noise
/// weights (fixed seeds) writing whatever the grammar lets through: every
/// answer is a sentence of the strict grammar, and (the answer starting
/// without WITH) none names a column the view lacks in its select list,
/// WHERE or ON (only
/// select-list aliases, read in GROUP BY, HAVING and ORDER BY, and
/// qualified derived-table columns may be other names). The byte-level
/// proof that `SELECT CLIENT_CLIENT` cannot go on is in the grammar's unit
/// tests.
#[test]
fn strict_names_keep_made_up_columns_out_of_select_where_and_on() {
    let dir = tempfile::tempdir().unwrap();
    let m = load(&tiny(dir.path(), "tiny.gguf", Default::default()), 1500);
    let cols: Vec<String> =
        ["CLIENT_id", "CLIENT_name", "DATACENTER_id", "DATACENTER_name"].iter().map(|s| s.to_string()).collect();
    let reserved: Vec<String> =
        ["CLIENT", "DATACENTER", "COMPUTE", "id", "name", "loc_id", "dc_id"].iter().map(|s| s.to_string()).collect();
    let strict = view_grammar_with("lucy_view", &cols, &reserved, Dialect::Sqlite, &NameRules::new(QueryNames::Strict));
    // Noise weights favour the WITH branch, where names stay free: start
    // the answer without WITH (as a model answering `SELECT …` does).
    let g = strict.replacen("(query | with_clause query_w)", "query", 1);
    assert_ne!(g, strict, "the start rule changed shape");
    let mut r =
        req("List customers who use datacenters with names starting with 'dev'. Write SQL over lucy_view.", 8, 1.0);
    r.grammar = Some(g.clone());
    let a = m.chat(&r).unwrap();
    assert_eq!(a.local.as_ref().map(|l| l.unconstrained), Some(0), "{:?}", a.choices);
    let mut checked = 0;
    for c in &a.choices {
        if check_text(&g, c).is_err() {
            // Cut at the token limit: a prefix of a sentence, nothing to check.
            assert!(a.truncated > 0, "{c:?} is not a sentence of the strict grammar");
            continue;
        }
        check_text(&strict, c).unwrap_or_else(|e| panic!("{c:?}: {e}"));
        let sql = c.trim().trim_start_matches("```sql").trim_end_matches("```").trim().trim_end_matches(';');
        checked += 1;
        for u in unknown_columns(sql, &[("lucy_view".to_string(), cols.clone())], Dialect::Sqlite) {
            let clause = u.clause.as_deref().unwrap_or("");
            assert!(
                u.qualifier.is_some() || ["GROUP BY", "HAVING", "ORDER BY"].contains(&clause),
                "{sql:?} names `{}` in {clause}",
                u.written
            );
        }
    }
    assert!(checked > 0, "no complete answer to check: {:?}", a.choices);
}

/// When the grammar engine gives up (here: a mask budget of 10 items, so
/// every mask fails), llama-cpp-2's sampler lets every token through; lucy
/// checks each answer against the grammar afterwards and counts those it
/// does not admit as `unconstrained`, instead of passing them off as
/// grammar-constrained. With the default budget the same request has none.
#[test]
fn answers_the_grammar_did_not_hold_for_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let path = tiny(dir.path(), "tiny.gguf", Default::default());
    let cols: Vec<String> = ["CLIENT_id", "CLIENT_name"].iter().map(|s| s.to_string()).collect();
    let g = view_grammar("lucy_view", &cols, &["CLIENT".to_string()], Dialect::Sqlite);
    let mut r = req("Write SQL over lucy_view.", 3, 1.0);
    r.grammar = Some(g.clone());
    let mut o = EmbeddedOptions::new(&path);
    o.threads = 1;
    o.grammar_max_items = 10;
    let starved = EmbeddedModel::load(&o, "FIX", &|_| None).unwrap().with_max_tokens(Some(60));
    let a = starved.chat(&r).unwrap();
    // Counted: answers with a token the grammar rejects (an answer cut at
    // the token limit that is still a prefix of a sentence is not one).
    let violating = a.choices.iter().filter(|c| check_text(&g, c).is_err()).count() as u32;
    let counted = a.local.unwrap().unconstrained;
    assert!(counted > 0 && counted <= violating, "counted {counted}, not sentences {violating}: {:?}", a.choices);
    let ok = load(&path, 1500).chat(&r).unwrap();
    assert_eq!(ok.local.unwrap().unconstrained, 0, "{:?}", ok.choices);
    assert!(ok.choices.iter().all(|c| check_text(&g, c).is_ok()), "{:?}", ok.choices);
}

#[test]
fn measure_reports_lucys_and_llama_cpps_own_times_for_the_same_work() {
    let dir = tempfile::tempdir().unwrap();
    let m = load_with(&tiny(dir.path(), "tiny.gguf", Default::default()), true, 64);
    let text = "<|im_start|>user\nSay something long.<|im_end|>\n<|im_start|>assistant\n".repeat(4);
    for n in [1, 3] {
        let s = m.measure(&text, 6, n, None).unwrap();
        assert_eq!(s.samples, n as u64);
        assert!(s.prompt_tokens > 20 && s.decode_tokens >= 1 && s.decode_steps >= 1, "{s:?}");
        // llama.cpp's counters are on and book the prompt as prefill.
        assert!(s.llama_prefill_ms > 0.0 && s.llama_prefill_ms <= s.prefill_ms * 1.05 + 1.0, "{s:?}");
        assert!(s.llama_decode_ms > 0.0 && s.llama_decode_ms <= s.decode_ms * 1.05 + 1.0, "{s:?}");
    }
    // The cache was emptied for the measurement.
    assert_eq!(m.cache_stats().unwrap().snapshots, 0);
}
