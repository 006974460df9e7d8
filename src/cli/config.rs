//! The project file (`lucy.toml`) and where every setting comes from.
//!
//! Precedence, highest first: a flag on the command line (`--model`,
//! `--execute`, `--llm-*`, `--set KEY=VALUE` and the lever flags shown by
//! `--help-all`), the environment (`LUCY_MODEL`, `LUCY_DATABASE`,
//! `LUCY_LLM_*`, `LUCY_SET`), the project file, lucy's built-in default.
//!
//! The file is found by `--config FILE`, else `LUCY_CONFIG`, else as
//! `lucy.toml` in the working directory or the nearest parent holding one.
//! Paths in it are relative to its directory. It never holds a secret: a
//! database password or API key in it is refused, naming the line; it names
//! the environment variable that holds one instead (`password_env`).

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use lucy::error::{Error, Result};
use lucy::pipeline::settings::{closest_lever, lever};
use lucy::pipeline::AskOptions;
use lucy::sql::exec::Database;

/// The project file's name.
pub const FILE_NAME: &str = "lucy.toml";
/// The project file to use instead of searching for one.
pub const ENV_CONFIG: &str = "LUCY_CONFIG";
/// The dbModel file.
pub const ENV_MODEL: &str = "LUCY_MODEL";
/// The database to run the SQL on (a SQLite path or a server URL).
pub const ENV_DATABASE: &str = "LUCY_DATABASE";
/// Settings as `KEY=VALUE`, separated by `;` (`query.exec_vote=3;link.samples=3`).
pub const ENV_SET: &str = "LUCY_SET";

/// Where a setting's value came from, as `lucy config show` prints it.
#[derive(Debug, Clone, PartialEq)]
pub enum Origin {
    /// lucy's built-in default (or the command's own default).
    Default,
    /// A line of the project file.
    File { path: PathBuf, line: usize },
    /// An environment variable.
    Env(String),
    /// A command-line flag.
    Flag(String),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Default => write!(f, "default"),
            Origin::File { path, line } => write!(f, "{}:{line}", path.display()),
            Origin::Env(v) => write!(f, "env {v}"),
            Origin::Flag(n) => write!(f, "flag {n}"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    pub value: T,
    pub origin: Origin,
}

// ---------------------------------------------------------------- the file

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    model: Option<Spanned<String>>,
    database: Option<RawDatabase>,
    llm: Option<RawLlm>,
    examples: Option<RawExamples>,
    limits: Option<BTreeMap<String, Spanned<toml::Value>>>,
    levers: Option<BTreeMap<String, Spanned<BTreeMap<String, Spanned<toml::Value>>>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDatabase {
    url: Spanned<String>,
    password_env: Option<Spanned<String>>,
    password: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLlm {
    url: Option<Spanned<String>>,
    model: Option<Spanned<String>>,
    gguf: Option<Spanned<String>>,
    gguf_sha256: Option<Spanned<String>>,
    max_tokens: Option<Spanned<u32>>,
    api_key: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExamples {
    file: Option<Spanned<String>>,
}

/// A parsed project file.
#[derive(Debug)]
pub struct Project {
    /// The file, as found or given.
    pub path: PathBuf,
    text: String,
    raw: RawFile,
}

impl Project {
    /// The project file to use: `explicit` (`--config`), else
    /// `LUCY_CONFIG`, else `lucy.toml` in `cwd` or its nearest parent.
    pub fn find(explicit: Option<&Path>, env: &dyn Fn(&str) -> Option<String>, cwd: &Path) -> Result<Option<Project>> {
        if let Some(p) = explicit {
            return Project::load(p).map(Some);
        }
        if let Some(p) = env(ENV_CONFIG).filter(|s| !s.is_empty()) {
            return Project::load(Path::new(&p))
                .map_err(|e| Error::Input(format!("{e} (the file {ENV_CONFIG} names)")))
                .map(Some);
        }
        for dir in cwd.ancestors() {
            let p = dir.join(FILE_NAME);
            if p.is_file() {
                return Project::load(&p).map(Some);
            }
        }
        Ok(None)
    }

    /// Read and check `path`.
    pub fn load(path: &Path) -> Result<Project> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let raw: RawFile = toml::from_str(&text).map_err(|e| {
            Error::Input(format!(
                "{}: {}\nfix the file (`lucy init` writes a commented example)",
                path.display(),
                e.to_string().trim_end()
            ))
        })?;
        let p = Project { path: path.to_path_buf(), text, raw };
        p.refuse_secrets()?;
        Ok(p)
    }

    fn refuse_secrets(&self) -> Result<()> {
        if let Some(db) = &self.raw.database {
            if let Some(pw) = &db.password {
                return Err(self.error(
                    pw.span(),
                    "database.password: a secret never goes in the project file; put it in an environment \
                     variable and name that variable: password_env = \"PGPASSWORD\"",
                ));
            }
            if let Ok(u) = url::Url::parse(db.url.get_ref()) {
                if u.password().is_some() {
                    return Err(self.error(
                        db.url.span(),
                        "database.url holds a password: remove it from the URL and name the environment \
                         variable that holds it: password_env = \"PGPASSWORD\"",
                    ));
                }
            }
        }
        if let Some(k) = self.raw.llm.as_ref().and_then(|l| l.api_key.as_ref()) {
            return Err(self.error(
                k.span(),
                "llm.api_key: a secret never goes in the project file; set LUCY_API_KEY (or OPENAI_API_KEY) in \
                 the environment",
            ));
        }
        Ok(())
    }

    /// The 1-based line of a byte offset.
    fn line(&self, span: Range<usize>) -> usize {
        self.text[..span.start.min(self.text.len())].matches('\n').count() + 1
    }

    fn origin(&self, span: Range<usize>) -> Origin {
        Origin::File { path: self.path.clone(), line: self.line(span) }
    }

    fn error(&self, span: Range<usize>, msg: &str) -> Error {
        Error::Input(format!("{}:{}: {msg}", self.path.display(), self.line(span)))
    }

    /// A path written in the file, relative to the file's directory.
    fn path_of(&self, s: &str) -> PathBuf {
        let p = Path::new(s);
        if p.is_absolute() {
            return p.to_path_buf();
        }
        self.path.parent().unwrap_or(Path::new(".")).join(p)
    }

    /// The dbModel file it names.
    pub fn model(&self) -> Option<Sourced<PathBuf>> {
        let m = self.raw.model.as_ref()?;
        Some(Sourced { value: self.path_of(m.get_ref()), origin: self.origin(m.span()) })
    }

    /// The database it names, with the password read from the variable
    /// `password_env` names (when set).
    pub fn database(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Sourced<Database>>> {
        let Some(db) = &self.raw.database else { return Ok(None) };
        let url = db.url.get_ref();
        let is_url = url.contains("://");
        let text = if is_url { url.clone() } else { self.path_of(url).display().to_string() };
        let mut parsed =
            Database::parse(&text).map_err(|e| self.error(db.url.span(), &format!("database.url: {e}")))?;
        if let Some(var) = &db.password_env {
            match env(var.get_ref()) {
                Some(pw) if !pw.is_empty() => parsed = parsed.with_password(pw),
                _ => {
                    return Err(self.error(
                        var.span(),
                        &format!(
                            "database.password_env names {}, which is not set in the environment: export it \
                             (or remove password_env)",
                            var.get_ref()
                        ),
                    ))
                }
            }
        }
        Ok(Some(Sourced { value: parsed, origin: self.origin(db.url.span()) }))
    }

    /// The variable holding the database password, if the file names one.
    pub fn password_env(&self) -> Option<Sourced<String>> {
        let v = self.raw.database.as_ref()?.password_env.as_ref()?;
        Some(Sourced { value: v.get_ref().clone(), origin: self.origin(v.span()) })
    }

    /// The examples file it names.
    pub fn examples(&self) -> Option<Sourced<PathBuf>> {
        let f = self.raw.examples.as_ref()?.file.as_ref()?;
        Some(Sourced { value: self.path_of(f.get_ref()), origin: self.origin(f.span()) })
    }

    /// `[llm]`'s string settings by name (`url`, `model`, `gguf`, `gguf_sha256`);
    /// `gguf` is a path relative to the file.
    pub fn llm(&self, key: &str) -> Option<Sourced<String>> {
        let l = self.raw.llm.as_ref()?;
        let v = match key {
            "url" => l.url.as_ref(),
            "model" => l.model.as_ref(),
            "gguf" => l.gguf.as_ref(),
            "gguf_sha256" => l.gguf_sha256.as_ref(),
            _ => None,
        }?;
        let value = if key == "gguf" { self.path_of(v.get_ref()).display().to_string() } else { v.get_ref().clone() };
        Some(Sourced { value, origin: self.origin(v.span()) })
    }

    /// `[llm] max_tokens`.
    pub fn llm_max_tokens(&self) -> Option<Sourced<u32>> {
        let v = self.raw.llm.as_ref()?.max_tokens.as_ref()?;
        Some(Sourced { value: *v.get_ref(), origin: self.origin(v.span()) })
    }

    /// Every setting the file gives (`[limits]` and `[levers]`), as
    /// `(KEY, value, line)`.
    fn settings(&self) -> Result<Vec<(String, serde_json::Value, Range<usize>)>> {
        let mut out = Vec::new();
        for (k, v) in self.raw.limits.iter().flatten() {
            out.push((format!("limits.{k}"), json_of(v.get_ref()), v.span()));
        }
        for (phase, table) in self.raw.levers.iter().flatten() {
            if phase == "limits" {
                return Err(self
                    .error(table.span(), "levers.limits: the limits have their own table: write them under [limits]"));
            }
            for (k, v) in table.get_ref() {
                out.push((format!("{phase}.{k}"), json_of(v.get_ref()), v.span()));
            }
        }
        Ok(out)
    }
}

fn json_of(v: &toml::Value) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// `VALUE` of `--set KEY=VALUE` or `LUCY_SET`: a TOML value (`3`, `true`,
/// `"x"`), else the text itself as a string (`unnamed`).
pub fn parse_value(s: &str) -> serde_json::Value {
    #[derive(Deserialize)]
    struct One {
        v: toml::Value,
    }
    match toml::from_str::<One>(&format!("v = {s}")) {
        Ok(o) => json_of(&o.v),
        Err(_) => serde_json::Value::String(s.to_string()),
    }
}

// ------------------------------------------------------------ the settings

/// The phase settings of an ask (`link`, `view`, `query`, `limits`) being
/// layered: defaults, then the file, the environment and the flags, each
/// key remembering where its value came from.
#[derive(Debug, Clone)]
pub struct Layers {
    values: serde_json::Map<String, serde_json::Value>,
    flags: serde_json::Map<String, serde_json::Value>,
    origins: BTreeMap<String, Origin>,
}

const PHASES: [&str; 4] = ["link", "view", "query", "limits"];

fn phases_of(o: &AskOptions) -> serde_json::Map<String, serde_json::Value> {
    let mut m = serde_json::Map::new();
    let vals = [
        serde_json::to_value(&o.link),
        serde_json::to_value(&o.view),
        serde_json::to_value(&o.query),
        serde_json::to_value(&o.limits),
    ];
    for (p, v) in PHASES.iter().zip(vals) {
        m.insert((*p).to_string(), v.unwrap_or_default());
    }
    m
}

impl Layers {
    /// Start from `from_flags`: the options the command's flags built, with
    /// their defaults where no flag was given; their values count as
    /// defaults until [`Layers::flag`] names a key as given.
    pub fn new(from_flags: &AskOptions) -> Layers {
        let flags = phases_of(from_flags);
        Layers { values: flags.clone(), flags, origins: BTreeMap::new() }
    }

    /// Set `key` (`PHASE.KEY`) to `value`, from `origin`.
    pub fn set(&mut self, key: &str, value: serde_json::Value, origin: Origin) -> Result<()> {
        if lever(key).is_none() {
            let hint = closest_lever(key).map(|k| format!("; did you mean `{k}`?")).unwrap_or_default();
            return Err(Error::Input(format!(
                "{origin}: unknown setting `{key}`{hint} (`lucy config levers` lists every setting)"
            )));
        }
        let (phase, name) = key.split_once('.').unwrap_or((key, ""));
        if let Some(serde_json::Value::Object(m)) = self.values.get_mut(phase) {
            m.insert(name.to_string(), value);
        }
        self.origins.insert(key.to_string(), origin);
        Ok(())
    }

    /// The project file's `[limits]` and `[levers]`.
    pub fn file(&mut self, p: &Project) -> Result<()> {
        for (k, v, span) in p.settings()? {
            if lever(&k).is_none() {
                let hint = closest_lever(&k).map(|c| format!("; did you mean `{c}`?")).unwrap_or_default();
                return Err(
                    p.error(span, &format!("unknown setting `{k}`{hint} (`lucy config levers` lists every setting)"))
                );
            }
            self.set(&k, v, p.origin(span))?;
        }
        Ok(())
    }

    /// `LUCY_SET`'s `KEY=VALUE;…`.
    pub fn env(&mut self, env: &dyn Fn(&str) -> Option<String>) -> Result<()> {
        let Some(s) = env(ENV_SET) else { return Ok(()) };
        for part in s.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = split_set(part).map_err(|e| Error::Input(format!("env {ENV_SET}: {e}")))?;
            self.set(k.trim(), parse_value(v.trim()), Origin::Env(ENV_SET.into()))?;
        }
        Ok(())
    }

    /// A key a flag was given for: its value as the flags built it.
    pub fn flag(&mut self, key: &str, flag: &str) -> Result<()> {
        let (phase, name) = key.split_once('.').unwrap_or((key, ""));
        let v = self.flags.get(phase).and_then(|m| m.get(name)).cloned().unwrap_or_default();
        self.set(key, v, Origin::Flag(flag.into()))
    }

    /// `--set KEY=VALUE`, each.
    pub fn set_flags(&mut self, sets: &[String]) -> Result<()> {
        for s in sets {
            let (k, v) = split_set(s).map_err(|e| Error::Input(format!("--set {s}: {e}")))?;
            self.set(k.trim(), parse_value(v.trim()), Origin::Flag("--set".into()))?;
        }
        Ok(())
    }

    /// Where `key` came from.
    pub fn origin(&self, key: &str) -> Origin {
        self.origins.get(key).cloned().unwrap_or(Origin::Default)
    }

    /// The layered settings into `opts` (its per-run fields untouched); a
    /// value of the wrong type is an error naming where it came from.
    pub fn apply(&self, opts: &mut AskOptions) -> Result<()> {
        let run_link = (opts.link.restrict_core_tables.clone(), std::mem::take(&mut opts.link.values));
        opts.link = self.phase("link")?;
        (opts.link.restrict_core_tables, opts.link.values) = run_link;
        opts.view = self.phase("view")?;
        let feedback = opts.query.feedback;
        opts.query = self.phase("query")?;
        opts.query.feedback = feedback;
        opts.limits = self.phase("limits")?;
        Ok(())
    }

    fn phase<T: serde::de::DeserializeOwned>(&self, phase: &str) -> Result<T> {
        let v = self.values.get(phase).cloned().unwrap_or_default();
        serde_path_to_error::deserialize(v).map_err(|e| {
            let key = format!("{phase}.{}", e.path());
            let shown = self
                .values
                .get(phase)
                .and_then(|m| m.get(e.path().to_string()))
                .map(|v| v.to_string())
                .unwrap_or_default();
            Error::Input(format!("{}: {key} = {shown}: {}", self.origin(&key), e.inner()))
        })
    }

    /// Every setting with its value and origin, in key order.
    pub fn rows(&self) -> Vec<(String, serde_json::Value, Origin)> {
        let mut out = Vec::new();
        for p in PHASES {
            if let Some(serde_json::Value::Object(m)) = self.values.get(p) {
                for (k, v) in m {
                    let key = format!("{p}.{k}");
                    if lever(&key).is_some() {
                        out.push((key.clone(), v.clone(), self.origin(&key)));
                    }
                }
            }
        }
        out
    }
}

fn split_set(s: &str) -> std::result::Result<(&str, &str), String> {
    s.split_once('=').ok_or_else(|| "give KEY=VALUE, e.g. query.exec_vote=3".to_string())
}

/// The first of `flag`, `env` and `file` that is set, with its origin.
pub fn first_of<T>(flag: Option<(T, &str)>, env: Option<(T, &str)>, file: Option<Sourced<T>>) -> Option<Sourced<T>> {
    if let Some((v, n)) = flag {
        return Some(Sourced { value: v, origin: Origin::Flag(n.into()) });
    }
    if let Some((v, n)) = env {
        return Some(Sourced { value: v, origin: Origin::Env(n.into()) });
    }
    file
}

/// What the command line gave for the settings that are not levers.
#[derive(Debug, Default, Clone)]
pub struct Given {
    pub model: Option<PathBuf>,
    pub database: Option<Database>,
    pub examples: Option<PathBuf>,
    pub llm_url: Option<String>,
    pub llm_model: Option<String>,
    pub llm_gguf: Option<String>,
}

/// The settings that are not levers, each from the first layer that has it.
#[derive(Debug, Default, Clone)]
pub struct Sources {
    pub model: Option<Sourced<PathBuf>>,
    pub database: Option<Sourced<Database>>,
    pub password_env: Option<Sourced<String>>,
    pub examples: Option<Sourced<PathBuf>>,
    pub llm_url: Option<Sourced<String>>,
    pub llm_model: Option<Sourced<String>>,
    pub llm_gguf: Option<Sourced<String>>,
}

/// The non-lever settings: flag, else environment, else the project file.
pub fn sources(given: &Given, project: Option<&Project>, env: &dyn Fn(&str) -> Option<String>) -> Result<Sources> {
    let env_db = match env(ENV_DATABASE) {
        Some(s) => {
            Some((Database::parse(&s).map_err(|e| Error::Input(format!("env {ENV_DATABASE}: {e}")))?, ENV_DATABASE))
        }
        None => None,
    };
    let file_db = match (&given.database, &env_db, project) {
        (None, None, Some(p)) => p.database(env)?,
        _ => None,
    };
    let llm_env = |names: &[&'static str]| names.iter().find_map(|n| env(n).map(|v| (v, *n)));
    use lucy::llm::config::{ENV_GGUF, ENV_MODEL as ENV_LLM_MODEL, ENV_OPENAI_URL, ENV_URL};
    Ok(Sources {
        model: first_of(
            given.model.clone().map(|m| (m, "--model")),
            env(ENV_MODEL).map(|m| (PathBuf::from(m), ENV_MODEL)),
            project.and_then(Project::model),
        ),
        database: first_of(given.database.clone().map(|d| (d, "--execute")), env_db, file_db),
        password_env: project.and_then(Project::password_env),
        examples: first_of(
            given.examples.clone().map(|e| (e, "--examples")),
            None,
            project.and_then(Project::examples),
        ),
        llm_url: first_of(
            given.llm_url.clone().map(|v| (v, "--llm-url")),
            llm_env(&[ENV_URL, ENV_OPENAI_URL]),
            project.and_then(|p| p.llm("url")),
        ),
        llm_model: first_of(
            given.llm_model.clone().map(|v| (v, "--llm-model")),
            llm_env(&[ENV_LLM_MODEL]),
            project.and_then(|p| p.llm("model")),
        ),
        llm_gguf: first_of(
            given.llm_gguf.clone().map(|v| (v, "--llm-gguf")),
            llm_env(&[ENV_GGUF]),
            project.and_then(|p| p.llm("gguf")),
        ),
    })
}

/// The process environment, non-empty values only.
pub fn process_env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> PathBuf {
        let p = dir.join(FILE_NAME);
        std::fs::write(&p, text).unwrap();
        p
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_project_is_found_in_a_parent_and_paths_are_relative_to_it() {
        let d = tempfile::tempdir().unwrap();
        write(d.path(), "model = \"m/ddo.json\"\n");
        let sub = d.path().join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let p = Project::find(None, &no_env, &sub).unwrap().unwrap();
        let m = p.model().unwrap();
        assert_eq!(m.value, d.path().join("m/ddo.json"));
        assert_eq!(m.origin, Origin::File { path: d.path().join(FILE_NAME), line: 1 });
        // None anywhere: no project.
        let e = tempfile::tempdir().unwrap();
        assert!(Project::find(None, &no_env, e.path()).unwrap().is_none());
        // LUCY_CONFIG names one elsewhere.
        let named = d.path().join(FILE_NAME).display().to_string();
        let env = |k: &str| (k == ENV_CONFIG).then(|| named.clone());
        assert_eq!(Project::find(None, &env, e.path()).unwrap().unwrap().path, d.path().join(FILE_NAME));
    }

    #[test]
    fn an_explicit_missing_file_is_an_error() {
        let e = Project::find(Some(Path::new("/nonexistent/lucy.toml")), &no_env, Path::new("/")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/lucy.toml"), "{e}");
    }

    #[test]
    fn bad_files_name_the_file_and_line() {
        let d = tempfile::tempdir().unwrap();
        // An unknown top-level key.
        let p = write(d.path(), "model = \"x.json\"\n\nmodle = 1\n");
        let e = Project::load(&p).unwrap_err().to_string();
        assert!(e.contains("lucy.toml") && e.contains("line 3") && e.contains("modle"), "{e}");
        // A value of the wrong type.
        let p = write(d.path(), "model = 3\n");
        let e = Project::load(&p).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("model"), "{e}");
        // Not TOML at all.
        let p = write(d.path(), "[levers\n");
        assert!(Project::load(&p).unwrap_err().to_string().contains("line 1"));
    }

    #[test]
    fn secrets_in_the_file_are_refused_naming_the_line() {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "model = \"x\"\n[database]\nurl = \"postgresql://lucy:s3cret@127.0.0.1/ddo\"\n");
        let e = Project::load(&p).unwrap_err().to_string();
        assert!(e.contains("lucy.toml:3") && e.contains("password_env") && !e.contains("s3cret"), "{e}");
        let p = write(d.path(), "[database]\nurl = \"postgresql://lucy@h/ddo\"\npassword = \"s3cret\"\n");
        let e = Project::load(&p).unwrap_err().to_string();
        assert!(e.contains("lucy.toml:3") && !e.contains("s3cret"), "{e}");
        let p = write(d.path(), "[llm]\napi_key = \"sk-1\"\n");
        let e = Project::load(&p).unwrap_err().to_string();
        assert!(e.contains("lucy.toml:2") && e.contains("LUCY_API_KEY") && !e.contains("sk-1"), "{e}");
    }

    #[test]
    fn password_env_supplies_the_password_and_must_be_set() {
        let d = tempfile::tempdir().unwrap();
        let p =
            write(d.path(), "[database]\nurl = \"postgresql://lucy@127.0.0.1:5432/ddo\"\npassword_env = \"MY_PW\"\n");
        let p = Project::load(&p).unwrap();
        let env = |k: &str| (k == "MY_PW").then(|| "pw1".to_string());
        let db = p.database(&env).unwrap().unwrap();
        match &db.value {
            Database::Postgres(s) => assert_eq!(s.password(), Some("pw1")),
            other => panic!("{other:?}"),
        }
        assert!(!format!("{}", db.value).contains("pw1"));
        let e = p.database(&no_env).unwrap_err().to_string();
        assert!(e.contains("lucy.toml:3") && e.contains("MY_PW"), "{e}");
    }

    #[test]
    fn settings_layer_default_file_env_flag_in_that_order() {
        let d = tempfile::tempdir().unwrap();
        let p = write(
            d.path(),
            "[limits]\nrows = 7\n\n[levers]\nquery.exec_vote = 3\nlink.samples = 4\nview.narrow = \"off\"\n",
        );
        let p = Project::load(&p).unwrap();
        let mut opts = AskOptions::default();
        opts.link.samples = 5; // as a flag's default would
        let mut l = Layers::new(&opts);
        l.file(&p).unwrap();
        let env = |k: &str| (k == ENV_SET).then(|| "link.samples=2; query.count_names=false".to_string());
        l.env(&env).unwrap();
        l.set_flags(&["link.samples=1".into()]).unwrap();
        l.apply(&mut opts).unwrap();
        assert_eq!(opts.limits.rows, Some(7));
        assert_eq!(opts.query.exec_vote, 3);
        assert_eq!(opts.view.narrow, lucy::pipeline::narrow::NarrowView::Off);
        assert!(!opts.query.count_names);
        assert_eq!(opts.link.samples, 1);
        assert_eq!(l.origin("link.samples"), Origin::Flag("--set".into()));
        assert_eq!(l.origin("query.count_names"), Origin::Env(ENV_SET.into()));
        assert_eq!(l.origin("query.exec_vote"), Origin::File { path: p.path.clone(), line: 5 });
        assert_eq!(l.origin("query.distinct"), Origin::Default);
    }

    #[test]
    fn a_given_flag_beats_the_file_and_a_defaulted_one_does_not() {
        let d = tempfile::tempdir().unwrap();
        let p = Project::load(&write(d.path(), "[levers]\nquery.exec_vote = 3\nlink.samples = 4\n")).unwrap();
        let mut opts = AskOptions::default();
        opts.query.exec_vote = 2;
        let mut l = Layers::new(&opts);
        l.file(&p).unwrap();
        l.flag("query.exec_vote", "--exec-vote").unwrap();
        l.apply(&mut opts).unwrap();
        assert_eq!(opts.query.exec_vote, 2);
        assert_eq!(opts.link.samples, 4);
    }

    #[test]
    fn unknown_levers_and_bad_values_name_where_they_came_from() {
        let d = tempfile::tempdir().unwrap();
        let path = write(d.path(), "[levers]\n\nquery.exec_vot = 3\n");
        let p = Project::load(&path).unwrap();
        let e = Layers::new(&AskOptions::default()).file(&p).unwrap_err().to_string();
        assert!(e.contains("lucy.toml:3") && e.contains("query.exec_vote"), "{e}");
        let p = Project::load(&write(d.path(), "[levers]\nquery.exec_vote = \"three\"\n")).unwrap();
        let mut l = Layers::new(&AskOptions::default());
        l.file(&p).unwrap();
        let e = l.apply(&mut AskOptions::default()).unwrap_err().to_string();
        assert!(e.contains("lucy.toml:2") && e.contains("query.exec_vote") && e.contains("three"), "{e}");
        let e = Layers::new(&AskOptions::default()).set_flags(&["query.bogus=1".into()]).unwrap_err();
        assert!(e.to_string().contains("--set") && e.to_string().contains("query.bogus"), "{e}");
        let e = Layers::new(&AskOptions::default()).set_flags(&["query.exec_vote".into()]).unwrap_err();
        assert!(e.to_string().contains("KEY=VALUE"), "{e}");
        let p = Project::load(&write(d.path(), "[levers.limits]\nrows = 3\n")).unwrap();
        let e = Layers::new(&AskOptions::default()).file(&p).unwrap_err().to_string();
        assert!(e.contains("[limits]"), "{e}");
    }

    #[test]
    fn set_values_are_toml_or_plain_text() {
        assert_eq!(parse_value("3"), serde_json::json!(3));
        assert_eq!(parse_value("true"), serde_json::json!(true));
        assert_eq!(parse_value("\"a b\""), serde_json::json!("a b"));
        assert_eq!(parse_value("unnamed"), serde_json::json!("unnamed"));
    }
}
