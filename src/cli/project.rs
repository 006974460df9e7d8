//! `lucy init` (a commented project file) and `lucy config` (the effective
//! settings with their origins; the levers with their defaults and the
//! measurements that set them).

use std::path::{Path, PathBuf};

use clap::FromArgMatches;

use super::config::{Origin, Sourced, FILE_NAME};
use super::Ctx;
use lucy::error::{Error, Result};
use lucy::pipeline::settings::LEVERS;

/// `lucy init`.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// The dbModel file the project asks about.
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// The database the SQL runs on: a SQLite file or a server URL without
    /// a password (postgresql://USER@HOST:PORT/DB, mysql://…).
    #[arg(long, value_name = "DB|URL")]
    pub database: Option<String>,
    /// The environment variable holding the database password.
    #[arg(long, value_name = "VAR")]
    pub password_env: Option<String>,
    /// Where to write it.
    #[arg(long, value_name = "FILE", default_value = FILE_NAME)]
    pub out: PathBuf,
    /// Overwrite an existing file.
    #[arg(long)]
    pub force: bool,
}

/// `lucy config`.
#[derive(Debug, clap::Subcommand)]
pub enum ConfigCommand {
    /// The settings `lucy ask` would run with, and where each comes from
    /// (flag, env, file:line, default); secrets never shown.
    Show {
        /// Change a setting, as `lucy ask --set` does.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Every setting of `--set` and `[levers]`/`[limits]`: its default and
    /// the measurement that set it.
    Levers,
}

/// Write the starter file.
pub fn init(a: InitArgs, ctx: Ctx) -> Result<i32> {
    if a.out.exists() && !a.force {
        return Err(Error::Input(format!("{} exists: edit it, or pass --force to overwrite it", a.out.display())));
    }
    if let Some(m) = &a.model {
        // A model that does not load is better found now than at the first question.
        lucy::model::load(m)?;
    }
    if let Some(db) = &a.database {
        if url::Url::parse(db).ok().is_some_and(|u| u.password().is_some()) {
            return Err(Error::Input(
                "--database: the URL holds a password; leave it out and name the variable holding it with --password-env"
                    .into(),
            ));
        }
        if db.contains("://") {
            lucy::sql::exec::Database::parse(db)?;
        }
    }
    let dir = a.out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let text = starter(
        a.model.as_deref().map(|m| relative_to(m, dir)),
        a.database.as_deref().map(|d| if d.contains("://") { d.to_string() } else { relative_to(Path::new(d), dir) }),
        a.password_env.as_deref(),
    );
    // The template must stay a valid project file.
    debug_assert!(toml::from_str::<toml::Table>(&text).is_ok());
    std::fs::write(&a.out, text).map_err(|e| Error::io(&a.out, e))?;
    if ctx.json {
        super::print_json(&serde_json::json!({"wrote": a.out.display().to_string()}))?;
    } else {
        println!("wrote {}", a.out.display());
        println!("next: `lucy config show` to see the settings, then `lucy ask \"your question\"`");
    }
    Ok(0)
}

/// `path` as the file at `dir` should write it: relative to `dir` when it
/// can be, else absolute.
fn relative_to(path: &Path, dir: &Path) -> String {
    let abs = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (p, d) = (abs(path), abs(dir));
    match p.strip_prefix(&d) {
        Ok(r) => r.display().to_string(),
        Err(_) => p.display().to_string(),
    }
}

fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The commented starter file.
pub fn starter(model: Option<String>, database: Option<String>, password_env: Option<&str>) -> String {
    let model_line = match model {
        Some(m) => format!("model = {}", quoted(&m)),
        None => "# model = \"dbmodels/warehouse.json\"".to_string(),
    };
    let db = match database {
        Some(d) => {
            let pw = match password_env {
                Some(v) => format!("password_env = {}", quoted(v)),
                None => "# password_env = \"PGPASSWORD\"".to_string(),
            };
            format!("[database]\nurl = {}\n{pw}", quoted(&d))
        }
        None => "# [database]\n# url = \"warehouse.sqlite\"   # or postgresql://lucy@127.0.0.1:5432/warehouse\n# password_env = \"PGPASSWORD\"".to_string(),
    };
    format!(
        r#"# lucy project file. Every `lucy` command run in this directory (or below
# it) starts from these settings. Precedence: a flag, then the environment,
# then this file, then lucy's default. `lucy config show` prints the
# effective settings and where each comes from; `lucy config levers` lists
# every setting [levers] and [limits] take, with its default.

# The dbModel: tables, keys, relationships and patterns. Paths are relative
# to this file.
{model_line}

# The database the SQL runs on, read-only: a SQLite file or a server URL
# (postgresql://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB, sc://HOST).
# Never a password here: name the environment variable that holds it.
{db}

# The LLM. Left empty: the embedded default model (scripts/fetch-model.sh),
# or a server from LUCY_LLM_URL / LUCY_LLM_MODEL. A server's API key comes
# from LUCY_API_KEY or OPENAI_API_KEY, never from this file.
[llm]
# url = "http://127.0.0.1:8000/v1"
# model = "qwen2.5-coder-7b-instruct"
# gguf = "models/other-model.gguf"

# Verified queries (question and SQL) QueryView may learn from.
# [examples]
# file = "dbmodels/warehouse.examples.jsonl"

# The bounds of every run.
[limits]
rows = 50
# result_bytes = 4194304
# exec_timeout_s = 30
# solver_time_limit_s = 10

# Levers by phase: link.* (MatchTables), view.* (GenerateView), query.*
# (QueryView). The defaults are measured; change one to try it.
[levers]
# query.exec_vote = 3
"#
    )
}

/// `lucy config …`.
pub fn config(c: ConfigCommand, ctx: Ctx, inv: &super::Invocation) -> Result<i32> {
    match c {
        ConfigCommand::Levers => levers(ctx),
        ConfigCommand::Show { set } => show(set, ctx, inv),
    }
}

fn levers(ctx: Ctx) -> Result<i32> {
    let d = lucy::pipeline::AskOptions::default();
    let layers = super::config::Layers::new(&d);
    let defaults: std::collections::BTreeMap<String, serde_json::Value> =
        layers.rows().into_iter().map(|(k, v, _)| (k, v)).collect();
    if ctx.json {
        let rows: Vec<_> = LEVERS
            .iter()
            .map(|l| serde_json::json!({"key": l.key, "default": defaults.get(l.key), "what": l.what, "measured": l.measured}))
            .collect();
        super::print_json(&rows)?;
        return Ok(0);
    }
    let w = LEVERS.iter().map(|l| l.key.len()).max().unwrap_or(0);
    for l in LEVERS {
        let v = defaults.get(l.key).map(|v| v.to_string()).unwrap_or_else(|| "none".into());
        println!("{:<w$}  {v:<8}  {} (default: {})", l.key, l.what, l.measured);
    }
    Ok(0)
}

/// The default `lucy ask` arguments (no flag given).
fn ask_defaults() -> Result<super::ask::AskArgs> {
    let cmd = <super::ask::AskArgs as clap::Args>::augment_args(clap::Command::new("ask"));
    let m = cmd.try_get_matches_from(["ask", "?"]).map_err(|e| Error::Input(e.to_string()))?;
    super::ask::AskArgs::from_arg_matches(&m).map_err(|e| Error::Input(e.to_string()))
}

fn show(set: Vec<String>, ctx: Ctx, inv: &super::Invocation) -> Result<i32> {
    let mut args = ask_defaults()?;
    args.set = set;
    let none = super::Invocation { config: inv.config, matches: None };
    let r = super::ask::resolve(&mut args, &none)?;
    let mut rows: Vec<(String, String, String)> = Vec::new();
    let s = &r.sources;
    let row = |k: &str, v: Option<String>, o: Option<&Origin>| {
        (k.to_string(), v.unwrap_or_else(|| "(none)".into()), o.map(|o| o.to_string()).unwrap_or("default".into()))
    };
    fn shown<T: std::fmt::Display>(s: &Option<Sourced<T>>) -> (Option<String>, Option<&Origin>) {
        (s.as_ref().map(|s| s.value.to_string()), s.as_ref().map(|s| &s.origin))
    }
    fn path_shown(s: &Option<Sourced<PathBuf>>) -> (Option<String>, Option<&Origin>) {
        (s.as_ref().map(|s| s.value.display().to_string()), s.as_ref().map(|s| &s.origin))
    }
    rows.push((
        "project".into(),
        r.project.as_ref().map(|p| p.display().to_string()).unwrap_or_else(|| "(none: lucy init writes one)".into()),
        String::new(),
    ));
    let (v, o) = path_shown(&s.model);
    rows.push(row("model", v, o));
    // Database's Display never holds the password.
    let (v, o) = shown(&s.database);
    rows.push(row("database", v, o));
    if let Some(pe) = &s.password_env {
        let state = if super::config::process_env(&pe.value).is_some() { "set" } else { "NOT SET" };
        rows.push(row("database.password_env", Some(format!("{} ({state})", pe.value)), Some(&pe.origin)));
    }
    let (v, o) = path_shown(&s.examples);
    rows.push(row("examples", v, o));
    let (v, o) = shown(&s.llm_url);
    rows.push(row("llm.url", v, o));
    let (v, o) = shown(&s.llm_model);
    rows.push(row("llm.model", v, o));
    let (v, o) = shown(&s.llm_gguf);
    rows.push(row(
        "llm.gguf",
        v.or_else(|| (s.llm_model.is_none() && s.llm_url.is_none()).then(|| "(the embedded default model)".into())),
        o,
    ));
    let key = lucy::llm::config::ENV_KEYS.iter().find(|k| super::config::process_env(k).is_some());
    rows.push((
        "llm.api_key".into(),
        key.map(|k| format!("{k} (set; never shown)")).unwrap_or_else(|| "(none)".into()),
        key.map(|k| format!("env {k}")).unwrap_or_else(|| "default".into()),
    ));
    for (k, v, o) in r.layers.rows() {
        rows.push((k, v.to_string(), o.to_string()));
    }
    if ctx.json {
        let v: Vec<_> = rows.iter().map(|(k, v, o)| serde_json::json!({"key": k, "value": v, "origin": o})).collect();
        super::print_json(&v)?;
        return Ok(0);
    }
    let wk = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let wv = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0).min(60);
    for (k, v, o) in rows {
        println!("{k:<wk$}  {v:<wv$}  {o}");
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_starter_is_a_valid_project_file_in_every_form() {
        for (m, d, p) in [
            (None, None, None),
            (Some("m.json".to_string()), Some("db.sqlite".to_string()), None),
            (Some("a b/m.json".into()), Some("postgresql://lucy@127.0.0.1:5432/ddo".into()), Some("PGPASSWORD")),
        ] {
            let text = starter(m, d, p);
            let dir = tempfile::tempdir().unwrap();
            let f = dir.path().join(FILE_NAME);
            std::fs::write(&f, &text).unwrap();
            super::super::config::Project::load(&f).unwrap();
        }
    }

    /// Every lever flag `lucy ask` maps to settings exists, under its name,
    /// and every key it sets is a setting.
    #[test]
    fn ask_lever_flags_name_real_flags_and_settings() {
        let cmd = <super::super::ask::AskArgs as clap::Args>::augment_args(clap::Command::new("ask"));
        for (id, flag, keys) in super::super::ask::FLAG_KEYS {
            let arg = cmd.get_arguments().find(|a| a.get_id() == *id).unwrap_or_else(|| panic!("no flag {id}"));
            assert_eq!(format!("--{}", arg.get_long().unwrap()), *flag);
            for k in *keys {
                assert!(lucy::pipeline::settings::lever(k).is_some(), "{k}");
            }
        }
    }

    #[test]
    fn ask_defaults_parse() {
        let a = ask_defaults().unwrap();
        assert_eq!(a.limit, 50);
        let _ = <super::super::Cli as clap::CommandFactory>::command();
    }
}
