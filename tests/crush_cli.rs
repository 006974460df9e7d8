//! `lucy crush` end to end on the DDO model. Uses the hashing embedder so
//! the test needs no model files; one test runs MiniLM when it is present.

use std::process::Command;

fn lucy() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lucy"));
    // Keep the embedding cache out of the user's home.
    c.env("LUCY_CACHE", std::env::temp_dir().join("lucy-test-cache"));
    // No LLM: `--question` alone must use the offline probes.
    c.env_remove("LUCY_LLM_MODEL");
    c
}

const DDO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

#[test]
fn exact_json_output_has_budget_elements_and_zero_gap() {
    let out = lucy()
        .args([
            "--json",
            "crush",
            "--model",
            DDO,
            "--probes",
            "Client(name, gender); Payment(amount, date)",
            "--budget",
            "4",
            "--embedder",
            "hash",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["result"];
    assert_eq!(r["elements"].as_array().unwrap().len(), 4);
    assert_eq!(r["status"], "optimal");
    assert!(r["gap"].as_f64().unwrap() <= 1e-6);
    assert_eq!(v["probe_source"], "given");
}

#[test]
fn low_temperature_covers_every_probe() {
    // With τ = 1 the soft maximum is nearly a sum and favours documents that
    // half-match many probes (CLIENT.id, PAYMENT.client_id); with a low
    // temperature the optimum covers each probe with its own match.
    let out = lucy()
        .args([
            "--json",
            "crush",
            "--model",
            DDO,
            "--probes",
            "Client(name, gender); Payment(amount, date)",
            "--budget",
            "4",
            "--temperature",
            "0.05",
            "--embedder",
            "hash",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let elems: Vec<&str> = v["result"]["elements"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
    for want in ["CLIENT.gender", "CLIENT.name", "PAYMENT.date"] {
        assert!(elems.contains(&want), "{want} missing from {elems:?}");
    }
    assert_eq!(v["result"]["status"], "optimal");
    // The paper's τ = 1 optimum on the same probes skips CLIENT.gender for
    // documents that match several probes at once.
    let out = lucy()
        .args([
            "--json",
            "crush",
            "--model",
            DDO,
            "--probes",
            "Client(name, gender); Payment(amount, date)",
            "--budget",
            "4",
            "--embedder",
            "hash",
        ])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let soft: Vec<&str> = v["result"]["elements"].as_array().unwrap().iter().map(|e| e.as_str().unwrap()).collect();
    assert!(!soft.contains(&"CLIENT.gender"), "{soft:?}");
}

#[test]
fn exact_objective_is_at_least_greedy() {
    let run = |solver: &str| -> f64 {
        let out = lucy()
            .args([
                "--json",
                "crush",
                "--model",
                DDO,
                "--probes",
                "Client(name); Payment(amount, date); Tax(rate)",
                "--budget",
                "3",
                "--solver",
                solver,
                "--embedder",
                "hash",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["result"]["objective"].as_f64().unwrap()
    };
    assert!(run("exact") >= run("greedy") - 1e-9);
}

#[test]
fn text_output_lists_tables() {
    let out = lucy()
        .args([
            "crush",
            "--model",
            DDO,
            "--question",
            "What is the tax rate of payments of female clients?",
            "--budget",
            "5",
            "--solver",
            "greedy",
            "--embedder",
            "hash",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let s = String::from_utf8_lossy(&out.stdout);
    assert!(s.contains("question phrases (offline: no LLM configured)"), "{s}");
    assert!(s.contains("tables:"), "{s}");
}

#[test]
fn bad_inputs_are_clear_errors() {
    let out = lucy()
        .args(["crush", "--model", DDO, "--probes", " ; ", "--budget", "3", "--embedder", "hash"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no probes"));
    let out = lucy()
        .args(["crush", "--model", DDO, "--probes", "T(a)", "--budget", "0", "--embedder", "hash"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--budget"));
    let out = lucy()
        .args([
            "crush",
            "--model",
            "/nonexistent/model.json",
            "--probes",
            "T(a)",
            "--budget",
            "3",
            "--embedder",
            "hash",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/model.json"));
}

#[test]
fn minilm_model_missing_names_the_script() {
    let out = lucy()
        .env("LUCY_MINILM_DIR", std::env::temp_dir().join("lucy-definitely-no-minilm"))
        .args(["crush", "--model", DDO, "--probes", "T(a)", "--budget", "3"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("scripts/fetch-minilm.sh"));
}
