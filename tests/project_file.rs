//! The project file from the command line (issue 45): a directory with a
//! `lucy.toml` needs no `--model`/`--execute`; flag > environment > file >
//! default for each kind of setting; bad files name file and line;
//! `lucy config show` says where each setting came from and never shows a
//! secret; a run's trace names the settings `--set` changed; `lucy init`
//! writes a file those commands accept; `lucy ask --help` fits a screen.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const Q1_SQL: &str = "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'";

fn root(p: &str) -> PathBuf {
    Path::new(ROOT).join(p)
}

/// `lucy ARGS` in `dir`, with no lucy variable of the caller's environment.
fn lucy_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lucy"));
    c.current_dir(dir).args(args);
    for k in
        ["LUCY_CONFIG", "LUCY_MODEL", "LUCY_DATABASE", "LUCY_SET", "LUCY_LLM_URL", "LUCY_LLM_MODEL", "LUCY_LLM_GGUF"]
    {
        c.env_remove(k);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// A project directory whose lucy.toml names DDO's model and database.
fn project(extra: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let body = format!(
        "model = {:?}\n\n[database]\nurl = {:?}\n\n{extra}",
        root("dbmodels/ddo.json").display().to_string(),
        root("dbmodels/ddo.sqlite").display().to_string()
    );
    std::fs::write(d.path().join("lucy.toml"), body).unwrap();
    d
}

#[test]
fn a_project_directory_needs_no_model_or_database_flag() {
    let d = project("");
    let sub = d.path().join("reports");
    std::fs::create_dir(&sub).unwrap();
    // From a subdirectory: the file is found in the parent.
    let o = lucy_in(&sub, &["--json", "ask", "--tables", "CLIENT,DATACENTER", "--sql", Q1_SQL], &[]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["rows"]["rows"].as_array().unwrap().len(), 29, "{out}");
}

#[test]
fn flag_beats_environment_beats_file_for_the_model() {
    let d = project("");
    // The file's model has no table FOO: the file is what is read.
    let o = lucy_in(d.path(), &["ask", "--tables", "FOO", "--stop-after", "view", "q"], &[]);
    assert!(text(&o).1.contains("FOO"), "{}", text(&o).1);
    // LUCY_MODEL beats the file: ACME has Policy, DDO does not.
    let acme = root("dbmodels/acme.json").display().to_string();
    let o = lucy_in(d.path(), &["ask", "--tables", "Policy", "--stop-after", "view", "q"], &[("LUCY_MODEL", &acme)]);
    assert!(o.status.success(), "{}", text(&o).1);
    // --model beats LUCY_MODEL.
    let ddo = root("dbmodels/ddo.json").display().to_string();
    let o = lucy_in(
        d.path(),
        &["ask", "--model", &ddo, "--tables", "Policy", "--stop-after", "view", "q"],
        &[("LUCY_MODEL", &acme)],
    );
    assert!(!o.status.success());
    let show = lucy_in(d.path(), &["config", "show"], &[("LUCY_MODEL", &acme)]);
    let (out, _) = text(&show);
    let line = out.lines().find(|l| l.starts_with("model ")).unwrap();
    assert!(line.contains("acme.json") && line.ends_with("env LUCY_MODEL"), "{line}");
}

#[test]
fn levers_follow_flag_env_file_default_and_the_trace_names_them() {
    let d = project("[limits]\nrows = 3\n\n[levers]\nview.narrow = \"off\"\nquery.distinct = \"off\"\n");
    let show = |env: &[(&str, &str)], args: &[&str]| {
        let mut a = vec!["config", "show"];
        a.extend_from_slice(args);
        let o = lucy_in(d.path(), &a, env);
        assert!(o.status.success(), "{}", text(&o).1);
        text(&o).0
    };
    let line = |out: &str, key: &str| out.lines().find(|l| l.starts_with(&format!("{key} "))).unwrap().to_string();
    let out = show(&[], &[]);
    assert!(line(&out, "limits.rows").contains("3") && line(&out, "limits.rows").contains("lucy.toml:7"), "{out}");
    assert!(line(&out, "view.narrow").contains("\"off\""), "{out}");
    assert!(line(&out, "query.exec_vote").ends_with("default"), "{out}");
    // The environment beats the file; a flag beats the environment.
    let out = show(&[("LUCY_SET", "view.narrow=on")], &[]);
    assert!(line(&out, "view.narrow").contains("\"on\"") && line(&out, "view.narrow").ends_with("env LUCY_SET"));
    let out = show(&[("LUCY_SET", "view.narrow=on")], &["--set", "view.narrow=empty"]);
    assert!(line(&out, "view.narrow").contains("\"empty\"") && line(&out, "view.narrow").ends_with("flag --set"));

    // A run: --limit beats [limits] rows; the trace says which settings ran.
    let trace = d.path().join("t.json");
    let o = lucy_in(
        d.path(),
        &[
            "--json",
            "ask",
            "--tables",
            "CLIENT,DATACENTER",
            "--sql",
            Q1_SQL,
            "--set",
            "query.count_names=false",
            "--trace",
            trace.to_str().unwrap(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o).1);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!(v["rows"]["rows"].as_array().unwrap().len(), 3, "[limits] rows = 3");
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert_eq!(t["options"]["query"]["count_names"], false);
    assert_eq!(t["options"]["query"]["distinct"], "off");
    assert_eq!(t["options"]["view"]["narrow"], "off");
    assert_eq!(t["options"]["limits"]["rows"], 3);
    let o =
        lucy_in(d.path(), &["--json", "ask", "--tables", "CLIENT,DATACENTER", "--sql", Q1_SQL, "--limit", "5"], &[]);
    let v: serde_json::Value = serde_json::from_str(&text(&o).0).unwrap();
    assert_eq!(v["rows"]["rows"].as_array().unwrap().len(), 5, "--limit beats the file");
}

#[test]
fn bad_files_and_settings_are_errors_naming_file_and_line() {
    let cases: &[(&str, &[&str])] = &[
        ("[levers]\nquery.exec_vot = 3\n", &["lucy.toml:7", "query.exec_vote"]),
        ("[levers]\nquery.exec_vote = \"three\"\n", &["lucy.toml:7", "three"]),
        ("modle = \"x\"\n", &["lucy.toml", "line 6", "modle"]),
        ("[llm]\napi_key = \"sk-secret\"\n", &["lucy.toml:7", "LUCY_API_KEY"]),
    ];
    for (extra, wants) in cases {
        let d = project(extra);
        let o = lucy_in(d.path(), &["ask", "--tables", "CLIENT", "--stop-after", "view", "q"], &[]);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{extra}: {err}");
        for w in *wants {
            assert!(err.contains(w), "{extra}: wanted {w} in {err}");
        }
        assert!(!err.contains("sk-secret"));
    }
    // A password inline in the URL.
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("lucy.toml"), "[database]\nurl = \"postgresql://lucy:hunter2@127.0.0.1/ddo\"\n")
        .unwrap();
    let o = lucy_in(d.path(), &["config", "show"], &[]);
    let (_, err) = text(&o);
    assert!(err.contains("lucy.toml:2") && err.contains("password_env") && !err.contains("hunter2"), "{err}");
    // An unknown --set key.
    let d = project("");
    let o =
        lucy_in(d.path(), &["ask", "--tables", "CLIENT", "--stop-after", "view", "--set", "view.narow=on", "q"], &[]);
    let (_, err) = text(&o);
    assert!(err.contains("--set") && err.contains("view.narrow"), "{err}");
}

#[test]
fn config_show_names_the_password_variable_never_its_value() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("lucy.toml"),
        "[database]\nurl = \"postgresql://lucy@127.0.0.1:5432/ddo\"\npassword_env = \"TEST_PW\"\n",
    )
    .unwrap();
    let o = lucy_in(d.path(), &["config", "show"], &[("TEST_PW", "hunter2"), ("LUCY_API_KEY", "sk-abc")]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(!out.contains("hunter2") && !out.contains("sk-abc"), "{out}");
    assert!(out.contains("TEST_PW (set)") && out.contains("LUCY_API_KEY (set; never shown)"), "{out}");
    assert!(out.contains("postgresql://lucy@127.0.0.1:5432/ddo"), "{out}");
    // Unset, it says so.
    let o = lucy_in(d.path(), &["config", "show"], &[]);
    assert!(!o.status.success() && text(&o).1.contains("TEST_PW"), "{}", text(&o).1);
}

#[test]
fn init_writes_a_file_ask_runs_from() {
    let d = tempfile::tempdir().unwrap();
    let model = root("dbmodels/ddo.json").display().to_string();
    let db = root("dbmodels/ddo.sqlite").display().to_string();
    let o = lucy_in(d.path(), &["init", "--model", &model, "--database", &db], &[]);
    assert!(o.status.success(), "{}", text(&o).1);
    let o = lucy_in(d.path(), &["--json", "ask", "--tables", "CLIENT,DATACENTER", "--sql", Q1_SQL], &[]);
    assert!(o.status.success(), "{}", text(&o).1);
    // Not twice without --force; never a password.
    let o = lucy_in(d.path(), &["init", "--model", &model], &[]);
    assert_eq!(o.status.code(), Some(2));
    let o = lucy_in(d.path(), &["init", "--force", "--database", "postgresql://u:pw@h/db"], &[]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn ask_help_fits_one_screen_and_help_all_shows_every_lever() {
    let d = tempfile::tempdir().unwrap();
    let o = lucy_in(d.path(), &["ask", "--help"], &[]);
    let (out, _) = text(&o);
    assert!(o.status.success());
    assert!(out.lines().count() <= 40, "{} lines:\n{out}", out.lines().count());
    assert!(out.contains("--model") && out.contains("--execute") && out.contains("--help-all"), "{out}");
    let o = lucy_in(d.path(), &["ask", "--help-all"], &[]);
    let (all, _) = text(&o);
    assert!(o.status.success());
    for heading in ["MatchTables (phase 1)", "GenerateView (phase 2)", "QueryView (phase 3)", "LLM"] {
        assert!(all.contains(heading), "{heading} missing");
    }
    for flag in ["--exec-vote", "--narrow-view", "--samples", "--llm-ctx"] {
        assert!(all.contains(flag) && !out.contains(flag), "{flag}");
    }
    // Every lever is listed with its default.
    let o = lucy_in(d.path(), &["config", "levers"], &[]);
    let (levers, _) = text(&o);
    assert!(levers.contains("query.exec_vote") && levers.contains("limits.rows"), "{levers}");
}
