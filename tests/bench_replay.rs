//! The first real-model runs, replayed offline: `benchmarks/cassettes/`
//! holds what the embedded default model (Qwen2.5-Coder-1.5B-Instruct
//! Q4_K_M) answered on DDO for `lucy bench ddo --method lucy,direct,direct+check`
//! (the command is in benchmarks/results/embedded.md). Replaying it must
//! reproduce the committed per-method summary and answers exactly; a prompt
//! that changed since the recording must fail, saying how to re-record.
//!
//! After re-recording, refresh the expected file with
//! `LUCY_UPDATE_REPLAY=1 cargo test --test bench_replay`.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

const CASSETTE: &str = "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b.jsonl";
const EXPECTED: &str = "benchmarks/cassettes/ddo-qwen2.5-coder-1.5b.expected.json";
const METHODS: [&str; 3] = ["lucy", "direct", "direct+check"];

fn bench(cassette: &Path, limit: usize, methods: &str, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(["bench", "ddo", "--no-progress", "--method", methods, "--limit", &limit.to_string(), "--replay"])
        .arg(cassette)
        .arg("--out")
        .arg(out)
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_GGUF")
        .output()
        .unwrap()
}

/// What a replay must reproduce: each method's summary without wall times,
/// and per question the SQL, the metrics and the attribution.
fn outcome(dir: &Path, methods: &[&str]) -> Value {
    let mut all = serde_json::Map::new();
    for m in methods {
        let r: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(m).join("results.json")).unwrap()).unwrap();
        let mut summary = r["summary"].clone();
        for k in ["wall_ms_total", "solve_ms_median", "solve_ms_p95"] {
            summary.as_object_mut().unwrap().remove(k);
        }
        let questions: Vec<Value> = r["questions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                let mut metrics = q["metrics"].clone();
                if let Some(o) = metrics.as_object_mut() {
                    o.remove("solve_ms");
                }
                json!({"id": q["id"], "sql": q["prediction"]["sql"], "metrics": metrics, "attribution": q["attribution"]["label"]})
            })
            .collect();
        all.insert(m.to_string(), json!({"llm": r["llm"], "summary": summary, "questions": questions}));
    }
    Value::Object(all)
}

#[test]
fn the_recorded_ddo_run_replays_to_the_committed_outcome() {
    let expected_text = std::fs::read_to_string(EXPECTED).unwrap();
    let expected: Value = serde_json::from_str(&expected_text).unwrap();
    let n = expected["lucy"]["questions"].as_array().unwrap().len();
    assert!(n >= 6, "the committed run covers {n} questions");
    let dir = tempfile::tempdir().unwrap();
    let o = bench(Path::new(CASSETTE), n, "lucy,direct,direct+check", dir.path());
    assert!(o.status.success(), "replay failed: {}", String::from_utf8_lossy(&o.stderr));
    let got = outcome(dir.path(), &METHODS);
    if std::env::var_os("LUCY_UPDATE_REPLAY").is_some() {
        std::fs::write(EXPECTED, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    for m in METHODS {
        assert_eq!(got[m]["summary"], expected[m]["summary"], "{m}: summary");
        assert_eq!(got[m]["questions"], expected[m]["questions"], "{m}: questions");
    }
    assert!(got["lucy"]["llm"].as_str().unwrap().contains("sha256:cc324af070c2"), "recorded with the default model: {}", got["lucy"]["llm"]);
}

#[test]
fn a_prompt_the_cassette_does_not_hold_fails_saying_how_to_re_record() {
    // Stand-in for a changed prompt template: the recording of the first
    // MatchTables prompt holds other text (and so another key).
    let text = std::fs::read_to_string(CASSETTE).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let i = lines.iter().position(|l| l.contains("\"phase\":\"match_tables\"")).expect("a match_tables record");
    let mut rec: Value = serde_json::from_str(&lines[i]).unwrap();
    let msgs = rec["messages"].as_array_mut().unwrap();
    let last = msgs.last_mut().unwrap();
    last["content"] = json!(format!("{} (reworded)", last["content"].as_str().unwrap()));
    rec["key"] = json!("0".repeat(64));
    lines[i] = rec.to_string();
    let dir = tempfile::tempdir().unwrap();
    let stale = dir.path().join("stale.jsonl");
    std::fs::write(&stale, lines.join("\n") + "\n").unwrap();
    let o = bench(&stale, 1, "lucy", &dir.path().join("out"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("did not reproduce the recording") && err.contains("Re-record with --record"), "{err}");
    assert!(err.contains("match_tables"), "names the prompt: {err}");
}
