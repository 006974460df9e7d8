//! The paper's CP-SAT model (benchmarks/cpsat_baseline.py) and lucy's
//! solver agree on the optimum for DDO queries, on the full and on lucy's
//! reduced model. Needs the pinned OR-Tools venv (scripts/cpsat-venv.sh,
//! which scripts/test.sh runs); skipped with a message outside CI when it is
//! absent, a failure under CI.

#[path = "../benchmarks/cpsat_export.rs"]
mod cpsat_export;

use std::path::PathBuf;
use std::process::Command;

use lucy::solve::relevant::{core_problem, scope, Relax};
use lucy::{SchemaGraph, ViewRequest};

fn venv_python() -> Option<PathBuf> {
    let cache = std::env::var_os("LUCY_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/lucy")))?;
    let py = cache.join("venv-cpsat/bin/python");
    py.exists().then_some(py)
}

#[test]
fn cpsat_and_lucy_find_the_same_optimum_on_ddo() {
    let Some(py) = venv_python() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "OR-Tools venv missing under CI: scripts/test.sh runs scripts/cpsat-venv.sh"
        );
        eprintln!("SKIPPED: no OR-Tools venv (run scripts/cpsat-venv.sh)");
        return;
    };
    let root = env!("CARGO_MANIFEST_DIR");
    let model = lucy::model::load(format!("{root}/dbmodels/ddo.json")).unwrap();
    let g = SchemaGraph::new(model).unwrap();
    let queries: &[&[&str]] = &[
        &["CLIENT", "DATACENTER"],
        &["COMPUTE", "CLIENT"],
        &["CLIENT", "DATACENTER", "PAYMENT", "RETENTION"],
        &["LOCATION", "RESOURCEPOOL", "PAYMENT"],
        &["DATACENTER", "RSPOOL2CLIENT"],
    ];
    let mut lines = String::new();
    for q in queries {
        let q: Vec<String> = q.iter().map(|s| s.to_string()).collect();
        let req = ViewRequest::new(q.clone());
        let res = lucy::solve::generate_view(&g, &req).unwrap();
        assert_eq!(res.status, lucy::types::SolveStatus::Optimal, "{q:?}");
        let sc = scope(&g, &req).unwrap();
        let cm = core_problem(&g, &sc, Relax::NONE);
        lines.push_str(&cpsat_export::instance_line("DDO", &q, &cm.problem, &res, res.solve_ms));
        lines.push('\n');
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("inst.jsonl");
    std::fs::write(&file, &lines).unwrap();
    // benchmarks/view-speed.sh times the same five sets with `lucy view`
    // and compares them with CP-SAT on this export.
    if let Some(path) = std::env::var_os("LUCY_CPSAT_EXPORT") {
        std::fs::write(path, &lines).unwrap();
    }
    let out =
        Command::new(py).arg(format!("{root}/benchmarks/cpsat_baseline.py")).arg(&file).arg("--json").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "objectives disagree or the script failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), queries.len());
    for r in &rows {
        assert_eq!(r["cpsat_status"], "optimal", "{r}");
        assert_eq!(r["cpsat_reduced_status"], "optimal", "{r}");
        assert_eq!(r["cpsat_obj"], r["lucy_obj"], "{r}");
        assert_eq!(r["cpsat_reduced_obj"], r["lucy_obj"], "{r}");
    }
}
